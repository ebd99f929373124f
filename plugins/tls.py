"""TLS with a server of a company's own authority, or one that asks for the client's certificate (mutual TLS, as
a gateway in front of a model or an MCP server may): one SSL context from hermes-agent's settings, for the
providers' SDKs (``ssl_verify``, ``ssl_ca_cert``, ``ssl_client_cert``, ``ssl_client_key``) and the remote MCP servers
(``ssl_verify``, ``client_cert``, ``client_key``) alike."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    import ssl

_NO = ("false", "no", "off", "0")
_YES = ("true", "yes", "on", "1", "")


class TLSError(ValueError):
    """A setting names a file that is not there or not usable (one line, naming the setting and the file)."""


REFUSED_OURS = tuple(f"ALERT_{alert}" for alert in ("CERTIFICATE_REQUIRED", "UNKNOWN_CA", "BAD_CERTIFICATE",
                                                     "CERTIFICATE_UNKNOWN"))  # the server's word on our certificate


def advice(said: str, authority: str, certificate: str) -> str:
    """What to do about a TLS failure whose text is ``said``, naming the settings of whoever failed (``authority``:
    the one naming the server's authority; ``certificate``: the client certificate's); ``""`` when it is no TLS
    failure. Both are certain, not transient: a caller retries neither."""
    if "CERTIFICATE_VERIFY_FAILED" in said:
        return (f"if its certificate is of an authority of your own, name that with {authority} "
                "(or check nothing: ssl_verify: false)")
    if any(alert in said for alert in REFUSED_OURS):  # the server refused ours, or none
        return f"the server asks for a client certificate (mutual TLS) it accepts: give it with {certificate}"
    return ""


def verify_of(verify: Any, bundle: Any = None) -> Any:
    """What ``ssl_verify`` (a boolean, its words, or an authority's path) and ``bundle`` (``ssl_ca_cert``) ask for:
    None (the default authorities), False (no check) or the path of an authority's file or folder."""
    if verify is False or str(verify).strip().lower() in _NO:
        return False
    path = bundle or (verify if isinstance(verify, str) and verify.strip().lower() not in _YES else None)
    return os.path.expanduser(str(path)) if path else None


def context(verify: Any, client_cert: Any = None, client_key: Any = None, names: tuple = ("ssl_ca_cert",
            "ssl_client_cert", "ssl_client_key")) -> Optional[ssl.SSLContext]:
    """The SSL context for ``verify`` (:func:`verify_of`'s answer) and a client certificate: ``client_cert``, a PEM file
    holding it (and its key, unless ``client_key`` names that), or hermes-agent's ``[cert, key]``; None when neither
    asks for anything (the library's own check). ``names``: the settings, as errors name them."""
    if isinstance(client_cert, (list, tuple)) and len(client_cert) == 2 and client_key is None:
        client_cert, client_key = client_cert
    if verify is None and not client_cert:
        return None
    import ssl  # here: reading the settings (a provider built, an MCP entry checked) needs none of it
    if verify is False:
        made = ssl.create_default_context()
        made.check_hostname, made.verify_mode = False, ssl.CERT_NONE
    else:
        made = ssl.create_default_context(**({"capath" if os.path.isdir(verify) else "cafile": _file(verify, names[0])}
                                             if verify else {}))
    if client_cert:
        cert = _file(client_cert, names[1])
        key = _file(client_key, names[2]) if client_key else None

        def no_passphrase() -> str:  # else OpenSSL would ask for it on the terminal, and a run would hang there
            raise TLSError(f"{names[2] if key else names[1]}: the key {key or cert} is encrypted; give a key without a "
                           f"passphrase (openssl pkey -in KEY -out PLAIN_KEY)")

        try:
            made.load_cert_chain(cert, key, password=no_passphrase)
        except ssl.SSLError:
            with_key = f" with the key {key}" if key else ""
            raise TLSError(f"{names[1]}: {cert}{with_key} is not a PEM certificate and its key (or the key is not the "
                           "certificate's)") from None
    return made


def _file(path: Any, name: str) -> str:
    path = os.path.expanduser(str(path).strip())
    if not os.path.exists(path):
        raise TLSError(f"{name}: {path} does not exist")
    return path
