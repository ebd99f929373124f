"""``hermes serve``: the agent behind an HTTP API that OpenAI clients (Open WebUI,
LobeChat, LibreChat, any OpenAI SDK) already speak, as hermes-agent's API server
does. The application is :mod:`plugins.serve.app` (Starlette, on uvicorn), the
turns :mod:`plugins.serve.turns`; the event hooks below feed a request's stream.
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


@hookimpl
def register_commands(cli):
    from plugins.serve.cli import serve

    cli.add_command(serve)


def _sink(agent):
    state = getattr(agent, "state", None)
    return state.get("serve.sink") if isinstance(state, dict) else None


@hookimpl
def on_stream_delta(text, agent):
    sink = _sink(agent)
    if sink is not None:
        sink.push("delta", text=text)


@hookimpl
def on_tool_start(tool_name, args, tool_call_id, agent):
    sink = _sink(agent)
    if sink is not None:
        sink.push("tool_start", tool=tool_name, toolCallId=tool_call_id, status="running", args=args)


@hookimpl
def on_tool_complete(tool_name, tool_call_id, result, duration_ms, status, agent):
    sink = _sink(agent)
    if sink is not None:
        sink.push("tool_complete", tool=tool_name, toolCallId=tool_call_id, duration_ms=duration_ms,
                  status="completed" if status == "ok" else status, result=result[:4000])


@hookimpl
def approve_tool_call(tool_name, args, message, agent):
    """A run's approval question goes to its client (``POST /v1/runs/{id}/approval``); other turns: not ours."""
    state = getattr(agent, "state", None)
    run = state.get("serve.run") if isinstance(state, dict) else None
    if run is None:
        return None
    command = args.get("command") if isinstance(args.get("command"), str) else str(args)
    choice = run.ask(tool_name, command, message)
    return False if choice == "deny" else choice
