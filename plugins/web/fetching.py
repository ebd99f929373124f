"""Fetching a URL for a tool: http and https only, every address checked before it is asked (the first and each
redirect's), a deadline, a byte limit, and an interrupt that stops a long download.

A model can be talked into fetching what the machine reaches and the internet does not (a router's page, a local
service, a cloud's metadata endpoint with its keys): private, loopback and link-local addresses are refused unless
``security.allow_private_urls`` is true, and the cloud metadata endpoints always; so are the hosts of
``security.website_blocklist`` (hermes-agent's). The name is resolved once, and
the request goes to the address that was checked (the name in ``Host`` and, for https, in the TLS handshake and the
certificate check), so a DNS server that answers differently the second time (rebinding) reaches nothing new."""

from __future__ import annotations

import ipaddress
import socket
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from kernel.types import ToolError

MAX_REDIRECTS = 5
METADATA_HOSTS = {"metadata.google.internal", "metadata.goog"}
METADATA_ADDRESSES = {"169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"}
USER_AGENT = "Mozilla/5.0 (compatible; hermes-agent-kernel web tool)"


@dataclass
class Fetched:
    url: str  # after redirects
    status: int
    reason: str
    content_type: str
    body: bytes
    truncated: bool  # the body stopped at the byte limit


def normalized(raw: str) -> str:
    """The URL a model meant: surrounding space dropped, ``https://`` before a bare host (``example.com/x``)."""
    url = raw.strip()
    if "://" not in url and url[:1].isalnum() and "." in url.split("/")[0]:
        url = "https://" + url
    return url


def blocked_by(url: str, blocked: tuple) -> Optional[str]:
    """The rule of ``security.website_blocklist`` that ``url``'s host falls under (None: none): a domain covers its
    subdomains, ``*.x`` only the subdomains."""
    from fnmatch import fnmatch

    host = (urlsplit(url if "://" in url else f"//{url}").hostname or "").rstrip(".").lower()
    return next((rule for rule in blocked if host and (fnmatch(host, rule) if rule.startswith("*.") else
                                                       host == rule or host.endswith(f".{rule}"))), None)


def check_url(url: str, allow_private: bool, blocked: tuple = ()) -> list:
    """The addresses to connect to for ``url``, in the resolver's order, each checked; :class:`ToolError` saying why
    it may not be fetched."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"only http and https URLs are fetched, not {url[:80]!r}")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise ToolError(f"no host in {url[:80]!r}")
    if (rule := blocked_by(url, blocked)) is not None:
        raise ToolError(f"{host} is blocked by security.website_blocklist (rule '{rule}'): not fetched")
    if host in METADATA_HOSTS:
        raise ToolError(f"{host} is a cloud metadata endpoint: never fetched")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except ValueError:
        raise ToolError(f"bad port in {url[:80]!r}") from None
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"cannot resolve {host}: {getattr(exc, 'strerror', None) or exc}") from None
    for *_, address in found:
        ip = ipaddress.ip_address(address[0].split("%")[0])
        ip = getattr(ip, "ipv4_mapped", None) or ip
        if str(ip) in METADATA_ADDRESSES:
            raise ToolError(f"{host} is a cloud metadata endpoint ({ip}): never fetched")
        if not allow_private and not ip.is_global:
            raise ToolError(f"{host} is a private or local address ({ip}): not fetched (security.allow_private_urls: "
                            "true in config.yaml allows it)")
    return list(dict.fromkeys(address[0] for *_, address in found))


def fetch(url: str, *, timeout: float, max_bytes: int, allow_private: bool, blocked: tuple = (),
          cancelled: Callable[[], bool] = lambda: False, headers: Optional[dict] = None,
          json: Any = None) -> Fetched:
    """GET ``url`` (POST ``json`` when given), following at most :data:`MAX_REDIRECTS` redirects, each target
    checked as the first (``blocked``: the blocklist's rules). ``headers`` (a key) go only to ``url``'s own scheme,
    host and port."""
    import httpx2 as httpx  # the SDKs' HTTP client (openai and anthropic depend on it)

    origin = urlsplit(url)[:2]
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, headers={"User-Agent": USER_AGENT}) as client:
            for _ in range(MAX_REDIRECTS + 1):
                named = httpx.URL(url)
                sent = {"Host": named.netloc.decode("ascii"), **(headers or {} if urlsplit(url)[:2] == origin else {})}
                response = _send(client, "GET" if json is None else "POST", named,
                                 check_url(url, allow_private, blocked), json=json, headers=sent)
                with closing(response):
                    if response.is_redirect and response.headers.get("location"):
                        url = str(named.join(response.headers["location"]))
                        json = json if response.status_code in (307, 308) else None  # others continue as a GET
                        continue
                    body, truncated = bytearray(), False
                    for chunk in response.iter_bytes():
                        if cancelled():
                            raise ToolError("interrupted while downloading")
                        body += chunk
                        if len(body) > max_bytes:
                            del body[max_bytes:]
                            truncated = True
                            break
                    return Fetched(str(named), response.status_code, response.reason_phrase,
                                   response.headers.get("content-type", ""), bytes(body), truncated)
    except httpx.TimeoutException:
        raise ToolError(f"no answer within {timeout:g} s") from None
    except httpx.InvalidURL as exc:
        raise ToolError(f"bad URL {url[:80]!r}: {exc}") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"the request failed: {type(exc).__name__}: {exc}") from None
    raise ToolError(f"more than {MAX_REDIRECTS} redirects")


def _send(client, method: str, named, addresses: list, **request: Any):
    """The streamed response from the first of ``addresses`` that connects (a name's IPv6 address may not reach
    while its IPv4 one does): the request goes to the address, with the name in Host and in the TLS handshake."""
    import httpx2 as httpx

    for n, address in enumerate(addresses):
        built = client.build_request(method, named.copy_with(host=address),
                                     extensions={"sni_hostname": named.raw_host.decode("ascii")}, **request)
        try:
            return client.send(built, stream=True)
        except httpx.ConnectError:
            if n == len(addresses) - 1:
                raise
    raise ToolError("the name resolves to no address")
