"""IRC (hermes-agent's ``irc`` platform), on the standard library's sockets: the bot joins ``IRC_CHANNEL`` on
``IRC_SERVER`` (``IRC_PORT`` 6697, TLS unless ``IRC_USE_TLS=false``) as ``IRC_NICKNAME``, identified with NickServ
when ``IRC_NICKSERV_PASSWORD`` is set (``IRC_SERVER_PASSWORD``: the server's own). A private message is always read;
in a channel, one that names it first ("hermes: ..." or "hermes, ..."). ``IRC_ALLOWED_USERS`` lists nicknames: on a
network that lets anyone take a free nickname, allow only registered ones (or use a network that enforces them).

Each private conversation and each channel is one conversation. Answers are plain text (IRC shows no Markdown), a
line at most 400 bytes, sent half a second apart (servers drop clients that flood); a nickname taken at the start is
tried again with a "_" after it. What is said while the gateway is stopped is not answered."""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import time
from typing import Optional

from plugins.gateway.hookspecs import Incoming, PlatformError
from plugins.gateway.markup import to_styled
from plugins.gateway.socketed import Socketed

log = logging.getLogger("hermes.gateway")
LINE = 400  # bytes of text in one PRIVMSG: a line is 512 with the command and the server's prefix
PACE = 0.5  # seconds between lines sent


def parsed(line: str) -> tuple:
    """``(nick, command, params)`` of an IRC line, the trailing parameter last."""
    prefix, nick = "", ""
    if line.startswith(":"):
        prefix, _, line = line[1:].partition(" ")
        nick = prefix.partition("!")[0]
    head, _, trailing = line.partition(" :")
    params = head.split()
    return nick, (params[0].upper() if params else ""), params[1:] + ([trailing] if " :" in line else [])


class Irc(Socketed):
    name = "irc"
    most = 2000  # an answer's part, sent as several lines

    def __init__(self, server: str, nickname: str, channels: list, port: int = 6697, tls: bool = True,
                 password: str = "", nickserv: str = ""):
        super().__init__()
        self.server, self.port, self.tls, self.password, self.nickserv = server, port, tls, password, nickserv
        self.nick, self.channels = nickname, [c if c.startswith(("#", "&")) else f"#{c}" for c in channels]
        self.sock: Optional[socket.socket] = None
        self.writing = threading.Lock()
        self.sent_at = 0.0

    def _line(self, text: str) -> None:
        with self.writing:
            wait = self.sent_at + PACE - time.monotonic()
            if wait > 0 and not text.startswith(("PONG", "NICK", "USER", "PASS")):
                time.sleep(wait)
            try:
                self.sock.sendall(text.encode("utf-8", "replace")[:510] + b"\r\n")
            except (OSError, AttributeError) as exc:
                raise PlatformError(f"irc: the connection to {self.server} failed ({exc})") from None
            self.sent_at = time.monotonic()

    def start(self) -> str:
        self.connect(f"{self.server}:{self.port}")
        return f"{self.nick} on {self.server} ({', '.join(self.channels) or 'private messages'})"

    def _session(self) -> None:
        try:
            raw = socket.create_connection((self.server, self.port), timeout=30)
            self.sock = ssl.create_default_context().wrap_socket(raw, server_hostname=self.server) if self.tls \
                else raw
        except OSError as exc:
            raise PlatformError(f"irc: cannot reach {self.server}:{self.port} ({exc})") from None
        self.ws = self.sock  # close() ends it
        try:
            if self.password:
                self._line(f"PASS {self.password}")
            self._line(f"NICK {self.nick}")
            self._line(f"USER {self.nick} 0 * :hermes")
            self.sock.settimeout(300)
            buffer = b""
            while not self.stopping.is_set():
                data = self.sock.recv(4096)
                if not data:
                    raise PlatformError(f"irc: {self.server} closed the connection")
                buffer += data
                *lines, buffer = buffer.split(b"\r\n")
                for line in lines:
                    self._heard(line.decode("utf-8", "replace"))
        except OSError as exc:
            if self.stopping.is_set():
                return
            raise PlatformError(f"irc: the connection to {self.server} failed ({exc})") from None
        finally:
            self.sock.close()

    def _heard(self, line: str) -> None:
        nick, command, params = parsed(line)
        if command == "PING":
            self._line(f"PONG :{params[-1] if params else ''}")
        elif command == "433" and not self.ready.is_set():  # the nickname is taken
            self.nick += "_"
            self._line(f"NICK {self.nick}")
        elif command in ("464", "465"):  # a wrong server password, banned
            raise PlatformError(f"irc: {self.server} refused the bot ({params[-1] if params else command})",
                                lasting=True)
        elif command == "001":  # welcome: the nickname is ours
            self.nick = params[0] if params else self.nick
            if self.nickserv:
                self._line(f"PRIVMSG NickServ :IDENTIFY {self.nickserv}")
            for channel in self.channels:
                self._line(f"JOIN {channel}")
            self.ready.set()
            self.settled.set()
        elif command == "PRIVMSG" and len(params) >= 2 and nick and not params[1].startswith("\x01"):
            target, text = params[0], params[1]
            private = target.lower() == self.nick.lower()
            named = text.lower().startswith((self.nick.lower() + ":", self.nick.lower() + ","))
            self.inbox.put(Incoming(chat=nick if private else target, user=nick, name=nick, addressed=private or named,
                                    text=text[len(self.nick) + 1:].strip() if named else text.strip()))

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        for line in filter(str.strip, to_styled(text)[0].split("\n")):  # IRC sends no empty line
            data = line.encode()
            while data:
                cut = len(data[:LINE].decode("utf-8", "ignore").encode())  # never half a character
                self._line(f"PRIVMSG {chat} :{data[:cut].decode()}")
                data = data[cut:]
        return None

    def send_file(self, chat: str, path: str, kind: str) -> None:
        raise PlatformError("files are not sent over IRC")

    def typing(self, chat: str) -> None:
        pass
