"""Email: the mailbox polled over IMAP, answers sent over SMTP (the standard library's imaplib and smtplib).
hermes-agent's variables: ``EMAIL_ADDRESS``, ``EMAIL_PASSWORD`` (an app password), ``EMAIL_IMAP_HOST`` (port
``EMAIL_IMAP_PORT``, 993), ``EMAIL_SMTP_HOST`` (``EMAIL_SMTP_PORT``, 587), ``EMAIL_POLL_INTERVAL`` (15 s),
``EMAIL_ALLOWED_USERS``, ``EMAIL_HOME_ADDRESS``.

A sender is one conversation. Its address is trusted only when the receiving server vouched for it: the first
``Authentication-Results`` header (``EMAIL_AUTHSERV_ID`` pins whose) says DMARC passed, or DKIM or SPF passed for
the From address's domain; anyone can write any From line, and this mailbox runs tools. ``EMAIL_TRUST_FROM_HEADER=
true`` trusts it all the same (a server that stamps no such header). Mail that is automatic (``Auto-Submitted``, a
list's, a bounce) is never answered: two robots would answer each other forever. Answers go in the sender's thread
(``In-Reply-To``), as text and HTML. Mail that came while the gateway was stopped is answered when it starts; the
mail there before it ever ran is not, nor that in a mailbox made anew (its UIDVALIDITY changed). Passwords go only
over TLS (implicit, or STARTTLS), to a server on this machine too."""

from __future__ import annotations

import email
import email.policy
import email.utils
import html
import logging
import re
import threading
import time
from email.message import EmailMessage
from typing import Any, Optional

from plugins.gateway.hookspecs import Incoming, PlatformError

log = logging.getLogger("hermes.gateway")
RESULT = re.compile(r"\s*(dmarc|dkim|spf)\s*=\s*([a-z]+)", re.IGNORECASE)  # a clause's method and result
PROPERTY = re.compile(r"([\w.-]+)=([^\s;()]+)")  # its properties (header.d=...), comments in () aside
QUOTED = re.compile(r"^(On .{5,200} wrote:|-----\s*Original Message\s*-----)\s*$", re.MULTILINE)
ROBOTS = re.compile(r"^(mailer-daemon|postmaster|no-?reply|do-?not-?reply)@", re.IGNORECASE)


def _domain(address: str) -> str:
    return address.rpartition("@")[2].strip().strip(">").lower()


def _aligned(domain: str, other: str) -> bool:
    """The same organisation's domain (``mail.example.org`` and ``example.org``)."""
    return bool(domain and other) and (domain == other or domain.endswith("." + other) or other.endswith("." + domain))


def vouched(message: EmailMessage, sender: str, authserv: str = "") -> str:
    """Why the receiving server's ``Authentication-Results`` does not vouch for ``sender`` ("" when it does)."""
    found = message.get_all("Authentication-Results") or []
    if not found:
        return "no Authentication-Results header"
    header = str(found[0])  # the receiving server's own is the first: below it, anyone's
    if authserv and header.split(";")[0].strip().lower() != authserv.lower():
        return f"the first Authentication-Results is not {authserv}'s"
    domain = _domain(sender)
    for clause in header.split(";")[1:]:
        found = RESULT.match(clause)
        if found is None:
            continue
        named = dict(PROPERTY.findall(re.sub(r"\([^)]*\)", " ", clause[found.end():])))
        whose = {"dmarc": named.get("header.from") or domain, "dkim": named.get("header.d") or named.get("header.i"),
                 "spf": named.get("smtp.mailfrom")}[found[1].lower()]
        if found[2].lower() == "pass" and _aligned(domain, _domain(whose or "")):
            return ""
    return "neither DMARC nor DKIM nor SPF passed for its domain"


def _text(message: EmailMessage) -> str:
    """The message's words, without the quoted mail under them."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    text = part.get_content()
    if part.get_content_type() == "text/html":
        text = re.sub(r"<(br|/p|/div)[^>]*>", "\n", text, flags=re.IGNORECASE)
        text = html.unescape(re.sub(r"<[^>]+>", "", text))
    cut = QUOTED.search(text)
    text = text[:cut.start()] if cut else text
    return "\n".join(line for line in text.strip().split("\n") if not line.startswith(">")).strip()


class Email:
    name = "email"
    most = 50000

    def __init__(self, address: str, password: str, imap: tuple, smtp: tuple, poll: float = 15,
                 trust_from: bool = False, authserv: str = ""):
        self.address, self.password, self.imap_at, self.smtp_at = address, password, imap, smtp
        self.poll, self.trust_from, self.authserv = max(poll, 1.0), trust_from, authserv
        # [the mailbox's UIDVALIDITY, the last UID read] (kept by the gateway; a bare UID before); -1: never ran (the
        # mail there is not answered)
        self.offset: Any = -1
        self.imap: Any = None
        self.threads: dict = {}  # sender -> (subject, Message-ID) of their last mail: answers go in its thread
        self.stopping, self.polled = threading.Event(), 0.0

    # -- connections
    def _secure(self, connection: Any, host: str, kind: str) -> None:
        """STARTTLS where the server offers it; none is refused but on this machine."""
        import ssl

        offers = "STARTTLS" in connection.capabilities if kind == "IMAP" else connection.has_extn("starttls")
        if offers:
            connection.starttls(ssl_context=ssl.create_default_context()) if kind == "IMAP" else \
                connection.starttls(context=ssl.create_default_context())
        elif host not in ("127.0.0.1", "localhost", "::1"):
            raise PlatformError(f"email: {host} offers no TLS on EMAIL_{kind}_PORT: the password is not sent there "
                                "in the clear", lasting=True)

    def _connect(self, kind: str) -> Any:
        """An IMAP or SMTP connection, over TLS, logged in; each step's failure said as that step's, and the
        connection closed."""
        import imaplib
        import smtplib

        host, port = self.imap_at if kind == "IMAP" else self.smtp_at
        implicit = port == (993 if kind == "IMAP" else 465)
        connection, step = None, "reach"
        try:
            if kind == "IMAP":
                connection = (imaplib.IMAP4_SSL if implicit else imaplib.IMAP4)(host, port, timeout=30)
            else:
                connection = (smtplib.SMTP_SSL if implicit else smtplib.SMTP)(host, port, timeout=30)
                connection.ehlo()
            if not implicit:
                step = "TLS"
                self._secure(connection, host, kind)
            step = "login"
            connection.login(self.address, self.password)
            return connection
        except (imaplib.IMAP4.error, smtplib.SMTPException, OSError, PlatformError) as exc:
            if connection is not None:
                try:
                    connection.shutdown() if kind == "IMAP" else connection.close()
                except OSError:
                    pass
            if isinstance(exc, PlatformError):
                raise
            if step == "login" and isinstance(exc, (imaplib.IMAP4.error, smtplib.SMTPAuthenticationError)):
                raise PlatformError(f"email: the {kind} server refused EMAIL_ADDRESS and EMAIL_PASSWORD "
                                    f"({_said(exc)})", lasting=True) from None
            if step == "TLS":
                raise PlatformError(f"email: the {kind} server {host}:{port} offered TLS (STARTTLS) but it failed "
                                    f"({_said(exc)})") from None
            raise PlatformError(f"email: cannot reach the {kind} server {host}:{port} ({_said(exc)})") from None

    def _imap(self) -> Any:
        if self.imap is None:
            self.imap = self._connect("IMAP")
        return self.imap

    def start(self) -> str:
        self._connect("SMTP").quit()
        self._imap()
        return self.address

    # -- receiving
    def receive(self, wait: Optional[float] = None) -> list:
        """New mail, polled every ``EMAIL_POLL_INTERVAL`` seconds (waiting ``wait`` at most for the next poll)."""
        import imaplib

        pause = self.polled + self.poll - time.monotonic()
        if pause > 0 and (self.stopping.wait(pause if wait is None else min(pause, wait)) or
                          self.polled + self.poll > time.monotonic()):
            return []
        self.polled = time.monotonic()
        try:
            imap = self._imap()
            imap.select("INBOX")
            validity = (imap.response("UIDVALIDITY")[1] or [b""])[0]
            validity = validity.decode() if isinstance(validity, bytes) else str(validity or "")
            kept, last = self.offset if isinstance(self.offset, list) else ("", int(self.offset))
            if kept and validity and kept != validity:  # UIDs start again: the mailbox was made anew
                log.warning("email: the mailbox was made anew (its UIDVALIDITY changed): the mail in it is taken "
                            "as read, new mail is answered")
                last = -1
            found = sorted(u for u in map(int, (imap.uid("SEARCH", f"UID {max(last, 0) + 1}:*")[1][0] or
                                                 b"").split()) if u > last)  # "N:*" holds the last mail however old
            if last < 0:  # never ran: the mail there is not answered
                self.offset = [validity, max(found, default=0)]
                return []
            fetched = [(uid, next((part[1] for part in imap.uid("FETCH", str(uid), "(RFC822)")[1]
                                   if isinstance(part, tuple)), b"")) for uid in found]
        except (imaplib.IMAP4.error, OSError) as exc:
            self.imap = None  # connected again at the next poll; what was fetched is fetched again
            raise PlatformError(f"email: the IMAP server failed ({_said(exc)})") from None
        messages = []
        for uid, raw in fetched:
            try:
                incoming = self._incoming(email.message_from_bytes(raw, policy=email.policy.default))
            except Exception:  # noqa: BLE001 - one mail that cannot be read must not stop the mailbox for good
                log.exception("email: mail %s could not be read", uid)
                continue
            if incoming is not None:
                messages.append(incoming)
        self.offset = [validity, max(found, default=last)]
        return messages

    def _incoming(self, message: EmailMessage) -> "Incoming | None":
        sender = email.utils.parseaddr(str(message.get("From") or ""))[1].lower()
        if not sender or sender == self.address.lower() or ROBOTS.match(sender) or \
                str(message.get("Auto-Submitted") or "no").lower() != "no" or message.get("List-Id") or \
                str(message.get("Precedence") or "").lower() in ("bulk", "list", "junk"):
            return None  # its own, a robot's, a list's: never answered
        why = "" if self.trust_from else vouched(message, sender, self.authserv)
        if why:
            log.warning("email: mail from %s is not answered: its sender is not vouched for (%s); "
                        "EMAIL_TRUST_FROM_HEADER=true trusts the From line", sender, why)
            return None
        subject = str(message.get("Subject") or "").strip()
        self.threads[sender] = (subject, str(message.get("Message-ID") or ""))
        text = _text(message)
        if subject and not subject.lower().startswith("re:"):
            text = f"{subject}\n\n{text}".strip()
        incoming = Incoming(chat=sender, user=sender, name=email.utils.parseaddr(str(message.get("From")))[0] or
                            sender, text=text, message=str(message.get("Message-ID") or ""))
        for part in message.iter_attachments():
            incoming.attach(part.get_content_type(), part.get_filename() or "", part.get_content)
        return incoming

    # -- answers
    def _mail(self, chat: str) -> EmailMessage:
        subject, replied = self.threads.get(chat, ("", ""))
        mail = EmailMessage()
        mail["From"], mail["To"] = self.address, chat
        mail["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}" if subject else \
            "From hermes"
        mail["Message-ID"] = email.utils.make_msgid(domain=_domain(self.address) or None)
        if replied:
            mail["In-Reply-To"] = mail["References"] = replied
        mail["Auto-Submitted"] = "auto-replied"  # another robot does not answer it
        return mail

    def _send(self, mail: EmailMessage) -> None:
        import smtplib

        smtp = self._connect("SMTP")
        try:
            smtp.send_message(mail)
        except smtplib.SMTPException as exc:
            raise PlatformError(f"email: the SMTP server did not take it ({_said(exc)})") from None
        finally:
            try:
                smtp.quit()
            except smtplib.SMTPException:
                pass

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        from plugins.gateway.markup import to_html

        mail = self._mail(chat)
        mail.set_content(text)
        mail.add_alternative(f'<div style="white-space: pre-wrap">{to_html(text)}</div>', subtype="html")
        self._send(mail)
        return str(mail["Message-ID"])

    def send_file(self, chat: str, path: str, kind: str) -> None:
        import mimetypes
        from pathlib import Path

        file = Path(path)
        if file.stat().st_size > 20 * 2**20:
            raise PlatformError(f"{file.name}: {file.stat().st_size / 2**20:.0f} MB, over the 20 MB sent by mail")
        mail = self._mail(chat)
        mail.set_content(file.name)
        major, _, minor = (mimetypes.guess_type(file.name)[0] or "application/octet-stream").partition("/")
        mail.add_attachment(file.read_bytes(), maintype=major, subtype=minor, filename=file.name)
        self._send(mail)

    def typing(self, chat: str) -> None:
        pass  # mail shows none

    def close(self) -> None:
        self.stopping.set()
        if self.imap is not None:
            try:
                self.imap.logout()
            except Exception:  # noqa: BLE001 - a connection that may be gone
                pass


def _said(exc: BaseException) -> str:
    """An imaplib or smtplib failure in words (they carry bytes)."""
    said = getattr(exc, "smtp_error", None)
    if said is None and not isinstance(exc, OSError):  # an OSError's first argument is its errno
        said = exc.args[0] if exc.args else ""
    text = said.decode(errors="replace") if isinstance(said, bytes) else str(said or exc)
    return text.strip() or type(exc).__name__
