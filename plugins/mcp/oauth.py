"""OAuth 2.1 for remote MCP servers (hermes-agent's ``auth: oauth``), through the MCP SDK's ``OAuthClientProvider``
(discovery, dynamic client registration, PKCE, the token exchange and refreshes are the SDK's)::

    mcp_servers:
      linear:
        url: https://mcp.linear.app/mcp
        auth: oauth
        oauth: {scope: "read write", client_id: ..., client_secret: ..., redirect_port: 8765}   # all optional

``hermes mcp login NAME`` prints the server's sign-in address (and opens it in a browser when there is one), takes the
answer on a loopback port and keeps what it got in the data folder's ``mcp-tokens/`` (hermes-agent's files:
``NAME.json`` the tokens, ``NAME.client.json`` the registration; mode 600). Each connection then uses them, refreshed
when they expire; a server nobody signed in to fails to connect with one line saying to run it (a connection in the
background cannot ask anyone)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import parse_qs, urlparse

FOLDER = "mcp-tokens"
WAIT = 300  # seconds a sign-in may take
EARLY = 30  # seconds before its end an access token is refreshed (the SDK signs in again after a refusal)


class SignInError(Exception):
    """A connection that needs a sign-in first, or a sign-in that failed: one line for the user."""


class Files:
    """The SDK's token storage, in hermes-agent's files; the configured ``client_id`` stands for a registration."""

    def __init__(self, folder: Path, name: str, fixed: Any = None):
        self.tokens, self.client = folder / f"{name}.json", folder / f"{name}.client.json"
        self.fixed = fixed

    @staticmethod
    def _read(path: Path) -> Optional[dict]:
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    @staticmethod
    def _write(path: Path, model: Any, **more) -> None:
        from hermes.host.files import atomic_write

        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = {**model.model_dump(mode="json", exclude_none=True), **more}
        atomic_write(path, json.dumps(data, indent=2) + "\n")
        os.chmod(path, 0o600)  # a key to the user's account there

    def expires_at(self) -> Optional[float]:
        """When the kept access token expires (the tokens say it in seconds from when they came)."""
        found = (self._read(self.tokens) or {}).get("expires_at")
        return float(found) if isinstance(found, (int, float)) else None

    async def get_tokens(self):
        from mcp.shared.auth import OAuthToken

        found = self._read(self.tokens)
        try:
            return OAuthToken.model_validate({k: v for k, v in found.items() if k != "expires_at"}) if found else None
        except ValueError:
            return None

    async def set_tokens(self, tokens) -> None:
        import time

        self._write(self.tokens, tokens, **({"expires_at": time.time() + tokens.expires_in}
                                             if isinstance(tokens.expires_in, (int, float)) else {}))

    async def get_client_info(self):
        from mcp.shared.auth import OAuthClientInformationFull

        if self.fixed is not None:
            return self.fixed
        found = self._read(self.client)
        try:
            return OAuthClientInformationFull.model_validate(found) if found else None
        except ValueError:
            return None

    async def set_client_info(self, client_info) -> None:
        if self.fixed is None:
            self._write(self.client, client_info)

    def registered_port(self) -> Optional[int]:
        """The loopback port the registration was made with (a server may hold the redirect address to it)."""
        found = self._read(self.client) or {}
        for uri in found.get("redirect_uris") or []:
            parsed = urlparse(str(uri))
            if parsed.hostname in ("127.0.0.1", "localhost") and parsed.port:
                return parsed.port
        return None

    def forget(self) -> bool:
        gone = False
        for path in (self.tokens, self.client):
            if path.exists():
                path.unlink()
                gone = True
        return gone


def files_of(server: Any, data_dir: Path) -> Files:
    return Files(data_dir / FOLDER, server.name)


def provider(server: Any, data_dir: Path, say: Optional[Callable[[str], None]] = None) -> Any:
    """The ``httpx`` auth of ``server``'s connections; ``say`` given: a sign-in (``hermes mcp login``) may happen,
    its address told with it; else a server without a sign-in fails with :class:`SignInError`."""
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    class Kept(OAuthClientProvider):
        async def _initialize(self) -> None:
            """Tokens read from the files: their expiry too (the SDK's reading leaves it unknown, so an expired
            access token was sent, refused, and a new sign-in asked for instead of a refresh)."""
            await super()._initialize()
            ends = files.expires_at()
            self.context.token_expiry_time = ends - EARLY if ends is not None else None

    settings = server.oauth
    files = files_of(server, data_dir)
    # the address the sign-in's answer comes back to, kept with the registration (a connection before the first
    # sign-in registers hermes already)
    try:
        port = int(settings.get("redirect_port") or 0) or files.registered_port() or _free_port()
    except (TypeError, ValueError):
        raise SignInError(f"oauth.redirect_port must be a port number, not {settings.get('redirect_port')!r}") from None
    redirect = f"http://127.0.0.1:{port}/callback"
    secret = str(settings.get("client_secret") or "") or None
    metadata = OAuthClientMetadata(client_name="hermes", redirect_uris=[redirect], response_types=["code"],
                                   grant_types=["authorization_code", "refresh_token"],
                                   scope=str(settings.get("scope") or "") or None,
                                   token_endpoint_auth_method="client_secret_post" if secret else None)
    if settings.get("client_id"):
        files.fixed = OAuthClientInformationFull(client_id=str(settings["client_id"]), client_secret=secret,
                                                 **metadata.model_dump())
    if say is None:
        async def refuse(*_):
            raise SignInError(f"it needs a sign-in: `hermes mcp login {server.name}`")

        return Kept(server.url, metadata, files, refuse, refuse)
    answer = Callback(port)

    async def redirect_to(url: str) -> None:
        import webbrowser

        answer.start()
        say(f"Sign in to {server.name} at this address (it waits {WAIT // 60} minutes):\n{url}")
        try:
            webbrowser.open(url)
        except Exception:  # noqa: BLE001 - no browser here: the address is said
            pass

    async def callback() -> Any:
        return AuthorizationCodeResult(**await asyncio.to_thread(answer.wait, WAIT))

    return Kept(server.url, metadata, files, redirect_to, callback)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Callback:
    """The loopback page the server's sign-in sends the browser back to, with the code (or why not)."""

    def __init__(self, port: int):
        self.port, self.got, self.done, self.server = port, {}, threading.Event(), None

    def start(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        waiter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                query = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
                if urlparse(self.path).path != "/callback" or not ({"code", "error"} & set(query)):
                    self.send_error(404)
                    return
                ok = "code" in query
                body = (b"Signed in: hermes has it. You can close this page." if ok else
                        f"The sign-in failed: {query.get('error_description') or query['error']}".encode())
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                waiter.got = query
                waiter.done.set()

            def log_message(self, *args):  # not on the user's terminal
                pass

        try:
            self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        except OSError as exc:
            raise SignInError(f"the sign-in's answer cannot be taken on port {self.port} ({exc.strerror}): "
                              "set oauth.redirect_port to a free one") from None
        threading.Thread(target=self.server.serve_forever, name="hermes-mcp-oauth", daemon=True).start()

    def wait(self, seconds: float) -> dict:
        try:
            if not self.done.wait(seconds):
                raise SignInError(f"no sign-in within {seconds // 60:g} minutes")
        finally:
            if self.server is not None:
                self.server.shutdown()
                self.server.server_close()
        if "error" in self.got:
            raise SignInError(f"the sign-in failed: {self.got.get('error_description') or self.got['error']}")
        return {key: self.got[key] for key in ("code", "state", "iss") if key in self.got}


async def login(server: Any, data_dir: Path, say: Callable[[str], None]) -> list:
    """Sign in to ``server`` (again: the tokens kept are dropped first, as hermes-agent's ``login`` forces it; the
    registration stays) and list its tools; their names."""
    from mcp import ClientSession

    from plugins.mcp.config import tls_context
    from plugins.mcp.servers import client_factory, resolve

    files_of(server, data_dir).tokens.unlink(missing_ok=True)
    headers = {k: resolve(v) for k, v in server.headers.items()}
    make, auth = client_factory(tls_context(server)), provider(server, data_dir, say)
    if server.transport == "sse":
        from mcp.client.sse import sse_client

        transport = sse_client(server.url, headers=headers, auth=auth, httpx_client_factory=make)
    else:
        from mcp.client.streamable_http import streamable_http_client

        transport = streamable_http_client(server.url, http_client=make(headers=headers, auth=auth))
    async with transport as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        return [tool.name for tool in (await session.list_tools()).tools]
