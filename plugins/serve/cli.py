"""``hermes serve``: the HTTP API on uvicorn (a well-kept ASGI server, already installed with the MCP SDK)."""

from __future__ import annotations

import click

from plugins.serve import DEFAULT_PORT


def _loopback(host: str) -> bool:
    import ipaddress  # here, as socket below: every command imports this module, to list `hermes serve`

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--host", default=None, help="Address to listen on (api_server.host; default 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help=f"Port to listen on (api_server.port; default {DEFAULT_PORT}; 0: any free one).")
@click.pass_obj
def serve(app, host, port):
    """Serve the agent over an OpenAI-compatible HTTP API (key: API_SERVER_KEY)."""
    from hermes.cli.app import EXIT_USAGE, Fail, program

    config = app.config
    host = host or str(config.get("api_server.host") or "127.0.0.1")
    port = port if port is not None else int(config.get("api_server.port") or DEFAULT_PORT)
    from plugins.serve.app import make_app, server_for

    server = server_for(app.host)
    if not server.key and not _loopback(host):
        raise Fail(f"refusing to listen on {host} without a key: set API_SERVER_KEY (or api_server.key), "
                   "or listen on 127.0.0.1", EXIT_USAGE)
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise Fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = sock.getsockname()[1]
    guard = "key required" if server.key else "no key: loopback only"
    click.echo(f"{program()}: serving on http://{host}:{bound}/v1 ({guard}); Ctrl+C stops", err=True)
    server.app = app
    if app.host.record("cron") is not None:  # the cron jobs run here too, as they come due (cron.with_serve)
        from plugins.cron.jobs import tick_beside

        tick_beside(app)
    uvicorn.Server(uvicorn.Config(make_app(server), log_level="warning", access_log=False)).run(sockets=[sock])
