"""A loopback mail server for the gateway's email tests: an IMAP server of the tests' own (the commands imaplib sends
for the platform: CAPABILITY, STARTTLS (refused when ``starttls`` says why), LOGIN, SELECT, UID SEARCH, UID FETCH,
NOOP, LOGOUT) over one mailbox, and aiosmtpd's SMTP server with AUTH taking the answers. Plain text on 127.0.0.1
(the platform sends a password in the clear only to this machine).

    with MailServer() as mail:                 # mail.imap_port, mail.smtp_port; mail.address, mail.password
        mail.deliver("alice@example.org", "Disk space", "How full is /?")  # -> its Message-ID
        mail.wait_sent(1)                      # -> [EmailMessage]
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import socket
import socketserver
import threading
from email.message import EmailMessage

from tests.asgiserver import wait_sent

VOUCHED = ("mx.test; dkim=pass header.d={domain}; spf=pass smtp.mailfrom={address}; "
           "dmarc=pass header.from={domain}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class MailServer:
    def __init__(self):
        self.address, self.password = "hermes@example.net", "app-password"
        self.mailbox: list = []  # (uid, raw bytes) in the bot's INBOX
        self.sent: list = []  # the messages taken over SMTP, parsed
        self.changed, self.logins, self.polls = threading.Condition(), 0, 0  # polls: SELECTs of the mailbox
        self.closed, self.validity = 0, 1  # IMAP connections ended; the mailbox's UIDVALIDITY
        self.starttls = ""  # offered by IMAP, and then refused with these words

    # -- what people do
    def deliver(self, sender: str, subject: str, body: str, vouched: bool = True, name: str = "Alice",
                headers: dict = (), attachments: list = ()) -> str:
        """A mail to the bot's mailbox, stamped by the receiving server as authenticated (``vouched``)."""
        mail = EmailMessage()
        if vouched:
            mail["Authentication-Results"] = VOUCHED.format(domain=sender.rpartition("@")[2], address=sender)
        mail["From"], mail["To"], mail["Subject"] = email.utils.formataddr((name, sender)), self.address, subject
        mail["Message-ID"] = email.utils.make_msgid(domain="example.org")
        for key, value in dict(headers).items():
            mail[key] = value
        mail.set_content(body)
        for data, kind, filename in attachments:
            mail.add_attachment(data, maintype=kind.partition("/")[0], subtype=kind.partition("/")[2],
                                filename=filename)
        with self.changed:
            self.mailbox.append((len(self.mailbox) + 1, mail.as_bytes()))
        return mail["Message-ID"]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, lambda: list(self.sent), count, timeout)

    # -- the servers
    def __enter__(self) -> "MailServer":
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        server = self

        class Taker:
            async def handle_DATA(self, smtp, session, envelope):
                with server.changed:
                    server.sent.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
                    server.changed.notify_all()
                return "250 OK"

        def authenticator(smtp, session, envelope, mechanism, login):
            return AuthResult(success=(login.login.decode(), login.password.decode()) == (self.address,
                                                                                          self.password),
                              handled=False)  # a refusal is answered 535 (handled: the authenticator would say)

        self.smtp_port, self.imap_port = free_port(), free_port()
        self.smtp = Controller(Taker(), hostname="127.0.0.1", port=self.smtp_port, authenticator=authenticator,
                               auth_require_tls=False)
        self.smtp.start()
        self.imap = socketserver.ThreadingTCPServer(("127.0.0.1", self.imap_port), self._imap_handler())
        self.imap.daemon_threads = True
        threading.Thread(target=self.imap.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.smtp.stop()
        self.imap.shutdown()
        self.imap.server_close()

    def _imap_handler(self):
        server = self

        class IMAP(socketserver.StreamRequestHandler):
            def say(self, line: str, data: bytes = b"") -> None:
                self.wfile.write(line.encode() + b"\r\n" + data)

            def handle(self):
                try:
                    self.commands()
                finally:
                    with server.changed:
                        server.closed += 1

            def commands(self):
                self.say("* OK IMAP4rev1 ready")
                while line := self.rfile.readline().decode().rstrip("\r\n"):
                    tag, _, rest = line.partition(" ")
                    command, _, args = rest.partition(" ")
                    command = command.upper()
                    if command == "CAPABILITY":
                        self.say("* CAPABILITY IMAP4rev1 AUTH=PLAIN" + " STARTTLS" * bool(server.starttls))
                    elif command == "STARTTLS":
                        self.say(f"{tag} NO {server.starttls}")
                        continue
                    elif command == "LOGIN":
                        user, _, password = args.partition(" ")
                        if (user.strip('"'), password.strip('"')) != (server.address, server.password):
                            self.say(f"{tag} NO [AUTHENTICATIONFAILED] Invalid credentials")
                            continue
                        with server.changed:
                            server.logins += 1
                    elif command == "SELECT":
                        with server.changed:
                            server.polls += 1
                            self.say(f"* {len(server.mailbox)} EXISTS")
                            self.say(f"* OK [UIDVALIDITY {server.validity}] UIDs valid")
                            self.say(f"* OK [UIDNEXT {len(server.mailbox) + 1}] predicted")
                        self.say(f"{tag} OK [READ-WRITE] SELECT completed")
                        continue
                    elif command == "UID" and args.upper().startswith("SEARCH UID "):
                        first = int(args.split()[-1].partition(":")[0])
                        with server.changed:
                            uids = [u for u, _ in server.mailbox if u >= first] or [u for u, _ in server.mailbox[-1:]]
                        self.say("* SEARCH" + "".join(f" {u}" for u in uids))  # "N:*" holds the last, as in IMAP
                    elif command == "UID" and args.upper().startswith("FETCH "):
                        uid = int(args.split()[1])
                        with server.changed:
                            raw = next((r for u, r in server.mailbox if u == uid), None)
                        if raw is not None:
                            self.say(f"* {uid} FETCH (UID {uid} RFC822 {{{len(raw)}}}", raw + b")\r\n")
                    elif command == "LOGOUT":
                        self.say("* BYE")
                        self.say(f"{tag} OK LOGOUT completed")
                        return
                    elif command != "NOOP":
                        self.say(f"{tag} BAD unknown command")
                        continue
                    self.say(f"{tag} OK {command} completed")

        return IMAP
