"""``hermes serve``: the agent behind an OpenAI-compatible HTTP API.

OpenAI clients (Open WebUI, LobeChat, LibreChat, any OpenAI SDK) already speak it, as
they speak hermes-agent's API server. The application is :mod:`plugins.serve.app`
(Starlette, on uvicorn), the turns and the event hooks that feed a request's stream
:mod:`plugins.serve.turns` (registered by the server only: other commands' agents
never call them).
"""

from __future__ import annotations

from kernel import hookimpl

DEFAULT_PORT = 8642  # hermes-agent's


@hookimpl
def register_config(declare):
    declare("api_server.key", str, "", "the bearer key clients send (API_SERVER_KEY wins); needed beyond loopback")
    declare("api_server.host", str, "127.0.0.1", "the address hermes serve listens on")
    declare("api_server.port", int, DEFAULT_PORT, "the port hermes serve listens on", minimum=1)
    declare("api_server.model_name", str, "hermes-agent", "the model name /v1/models shows clients")
    declare("api_server.max_concurrent_runs", int, 8, "conversations running at once (more: 429)", minimum=1)
    declare("api_server.max_body_bytes", int, 1_000_000, "the largest request body accepted (more: 413)", minimum=1)
    declare("api_server.approval_timeout", float, 300, "seconds a run waits for its approval answer (then: deny)",
            minimum=0)
    declare("api_server.cors_origins", (list[str], str), [], "web origins whose pages may call the API (\"*\": any; "
            "API_SERVER_CORS_ORIGINS, comma-separated, wins)")


@hookimpl
def register_commands(cli):
    from plugins.serve.cli import serve

    cli.add_command(serve)
