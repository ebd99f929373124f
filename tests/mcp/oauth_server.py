"""A real MCP server behind OAuth 2.1 (the `mcp` SDK's MCPServer, authorization server and resource server in one) on
127.0.0.1, for the tests: `python oauth_server.py PORT`. Dynamic client registration is open; the authorization
page approves at once (it redirects to the client's callback with a code, as a user's click would); access tokens
last ``ACCESS_SECONDS`` (argv[2], default an hour) and come with a refresh token. Its one tool, ``whoami``, says
which client's token called it; what it issued is appended to ``issued.log`` beside it (argv[3]) for the tests."""

import secrets
import sys
import time

from mcp.server.auth.provider import (AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken,
                                      construct_redirect_uri)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(sys.argv[1])
ACCESS_SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
LOG = sys.argv[3] if len(sys.argv) > 3 else None
BASE = f"http://127.0.0.1:{PORT}"


def note(line: str) -> None:
    if LOG:
        with open(LOG, "a") as log:
            log.write(line + "\n")


class Provider:
    def __init__(self):
        self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        self.clients[client_info.client_id] = client_info
        note(f"registered {client_info.client_id} {client_info.client_name}")

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["tools"], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list, resource) -> OAuthToken:
        access, refresh = f"at-{secrets.token_hex(8)}", f"rt-{secrets.token_hex(8)}"
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + ACCESS_SECONDS, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        note(f"issued {access}")
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=ACCESS_SECONDS, refresh_token=refresh,
                          scope=" ".join(scopes))

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes) -> OAuthToken:
        del self.refresh[refresh_token.token]
        note("refreshed")
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is not None and found.expires_at is not None and found.expires_at < time.time():
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(getattr(token, "token", ""), None)
        self.refresh.pop(getattr(token, "token", ""), None)


server = MCPServer("hermes-oauth-test", log_level="WARNING", auth_server_provider=Provider(), auth=AuthSettings(
    issuer_url=BASE, resource_server_url=f"{BASE}/mcp", validate_token_resource=True,
    client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["tools"],
                                                          default_scopes=["tools"])))


@server.tool()
def whoami(ctx: Context) -> str:
    """Which client's token made this call."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return f"client {token.client_id if token else 'nobody'}"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=PORT)
