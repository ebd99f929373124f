"""A loopback IRC server for the gateway's IRC tests (the lines a client of the platform's sends: PASS, NICK, USER,
JOIN, PRIVMSG, PONG), on socketserver: one nickname may be taken already, every client is PINGed at its welcome.

    with IrcServer() as irc:                     # irc.port; irc.taken = {"hermes"}
        irc.say("alice", "#hermes", "hermes: hello")   # to every connected client
        irc.wait_sent(1)                         # -> [(target, text)] the clients sent
"""

from __future__ import annotations

import socketserver
import threading

from tests.asgiserver import wait_sent
from tests.mailserver import free_port


class IrcServer:
    def __init__(self):
        self.taken: set = set()  # nicknames in use
        self.password = ""  # the server's, when set
        self.lines: list = []  # what clients sent, each line
        self.sent: list = []  # (target, text) of the clients' PRIVMSGs, NickServ's aside
        self.joined: list = []
        self.clients: list = []
        self.changed = threading.Condition()

    def say(self, nick: str, target: str, text: str) -> None:
        with self.changed:
            for client in self.clients:
                client.wfile.write(f":{nick}!{nick}@example.org PRIVMSG {target} :{text}\r\n".encode())

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, lambda: list(self.sent), count, timeout)

    def wait_joined(self, count: int = 1, timeout: float = 30) -> list:
        return wait_sent(self.changed, lambda: list(self.joined), count, timeout)

    def __enter__(self) -> "IrcServer":
        server = self

        class Client(socketserver.StreamRequestHandler):
            def handle(self):
                nick, given, user = "", "", False
                with server.changed:
                    server.clients.append(self)
                try:
                    while line := self.rfile.readline().decode().rstrip("\r\n"):
                        command, _, rest = line.partition(" ")
                        with server.changed:
                            server.lines.append(line)
                            server.changed.notify_all()
                        if command == "PASS":
                            given = rest
                        elif command == "NICK" and rest in server.taken:
                            self.wfile.write(f":irc.test 433 * {rest} :Nickname is already in use\r\n".encode())
                        elif command in ("NICK", "USER") and not (nick and user):  # registered with both, any order
                            nick, user = (rest, user) if command == "NICK" else (nick, True)
                            if nick and user and server.password and given != server.password:
                                self.wfile.write(b":irc.test 464 * :Password incorrect\r\n")
                                return
                            if nick and user:
                                self.wfile.write(f":irc.test 001 {nick} :Welcome to the test network\r\n"
                                                 "PING :irc.test\r\n".encode())
                        elif command == "JOIN":
                            with server.changed:
                                server.joined.append((nick, rest))
                                server.changed.notify_all()
                        elif command == "PRIVMSG":
                            target, _, text = rest.partition(" :")
                            if target != "NickServ":
                                with server.changed:
                                    server.sent.append((target, text))
                                    server.changed.notify_all()
                finally:
                    with server.changed:
                        server.clients.remove(self)

        self.port = free_port()
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", self.port), Client)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
