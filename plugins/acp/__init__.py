"""Built-in plugin acp: ``hermes acp``, hermes as an Agent Client Protocol agent for editors (Zed and others).

The editor starts ``hermes acp`` and speaks ACP on its stdin and stdout: sessions are hermes sessions, prompts are
turns, and the editor sees the answer stream, the tool calls, and hermes' approval questions as permission requests
(:mod:`plugins.acp.server`)."""

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    import click

    @cli.command("acp")
    @click.option("-m", "--model", default=None, help="The model its turns ask (default: the configured one).")
    @click.option("-t", "--toolsets", default=None, help="Comma-separated toolsets its turns may use.")
    @click.pass_obj
    def acp_cmd(app, model, toolsets):
        """hermes as an ACP agent on stdio, for editors (Zed: "agent_servers": {"hermes": {"command": "hermes",
        "args": ["acp"]}})."""
        import sys

        from plugins.acp.server import serve

        if sys.stdin.isatty():
            click.echo("hermes acp speaks the Agent Client Protocol on stdin and stdout: give it to an editor, e.g. "
                       'Zed\'s "agent_servers": {"hermes": {"command": "hermes", "args": ["acp"]}} (Ctrl+C stops it)',
                       err=True)
        serve(app, {"model": model, "toolsets": toolsets})
