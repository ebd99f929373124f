"""hermes-agent's commands that are called otherwise here, or do not exist: ``hermes status`` or ``hermes insights``
says what to run instead of "No such command" (exit 2). They are hidden from ``--help``, and a plugin's command of
the same name wins. ``hermes version``, ``hermes completion``, ``hermes backup`` and ``hermes import``
(:mod:`plugins.hermes_compat.backup`) do what hermes-agent's do."""

from __future__ import annotations

import os

import click

PACKAGE = "hermes-kernel"
LOGIN = "an API key, not a login: `hermes setup` asks for it and keeps it in the .env (no OAuth here)"
DEBUG = "`hermes doctor --json` (and `hermes model --json`)"
PAGE = "`hermes serve`, whose page (http://127.0.0.1:8642/) chats and lists the sessions; `hermes chat` at a terminal"
ELSEWHERE = {  # hermes-agent's command -> what does its work here
    "status": "`hermes model` (the model, its provider and key) and `hermes doctor` (whether they work)",
    "insights": "`hermes sessions stats [--since 30d]`",
    "prompt-size": "`hermes prompt size [--json]` (and `hermes prompt show`: the prompt itself)",
    "moa": "`/moa PROMPT` in `hermes chat` (moa.* in config.yaml: the advisers)",
    "whatsapp": "`hermes gateway setup --platform whatsapp_cloud` (WhatsApp's Cloud API; hermes-agent's bridge that "
                "pairs with a QR code is not here)",
    "whatsapp-cloud": "`hermes gateway setup --platform whatsapp_cloud`",
    "slack": "`hermes gateway setup --platform slack` (Socket Mode, an app you make; no manifest is printed here)",
    "dashboard": PAGE,
    "gui": PAGE,
    "desktop": PAGE,
    "lsp": "the lsp plugin, which uses the language servers on PATH and installs none (lsp.enabled, lsp.servers in "
           "config.yaml; `hermes config show` explains them)",
    "postinstall": "`hermes doctor`, which says what a tool still needs here (the browser tools' browser, the "
                   "sandbox's bubblewrap)",
    "secrets": "the secret-sources plugin: keys read from 1Password or Bitwarden as hermes starts "
               "(secrets.onepassword.*, secrets.bitwarden.* in config.yaml; `hermes config show` lists them)",
    "login": LOGIN,
    "auth": LOGIN,
    "logout": "`hermes config unset VAR` (a key kept in the .env)",
    "dump": DEBUG,
    "debug": DEBUG,
    "update": f"`pip install -U {PACKAGE}` (or your installer's upgrade)",
    "uninstall": f"`pip uninstall {PACKAGE}` (the data folder and config.yaml stay)",
    "gateway": "the gateway plugin's `hermes gateway run` (Telegram, Discord, Slack), which is not loaded here (`hermes "
               "plugins enable gateway`)",
    "profile": "the profiles plugin's `hermes profile`, which is not loaded here (`hermes plugins enable profiles`)",
    "logs": "the logs plugin's `hermes logs`, which is disabled (`hermes plugins enable logs`); "
            "`HERMES_TRACE_HOOKS=FILE` logs each hook call, and MCP servers' stderr is in the data folder's logs/",
}
SHELLS = ("bash", "zsh", "fish")


def add_commands(cli: click.Group) -> None:
    """Each of hermes-agent's commands that no plugin added."""
    from plugins.hermes_compat.backup import backup, import_

    for command in (version, completion, backup, import_, *map(_pointer, ELSEWHERE)):
        if command.name not in cli.commands:
            cli.add_command(command)


def _pointer(name: str) -> click.Command:
    @click.command(name, hidden=True, add_help_option=False,
                   context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    def pointer():
        from hermes.cli.app import EXIT_USAGE, Fail

        raise Fail(f"hermes-agent's `hermes {name}`: here, {ELSEWHERE[name]}", EXIT_USAGE)

    return pointer


@click.command("version", hidden=True)
def version():
    """The version (as --version)."""
    from hermes.cli.app import program
    from kernel import __version__

    click.echo(f"{program()} {__version__}")


@click.command("completion")
@click.argument("shell", required=False, type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx, shell):
    """The shell's completion script: `eval "$(hermes completion bash)"` in ~/.bashrc (zsh and fish alike;
    SHELL: your login shell's)."""
    from click.shell_completion import get_completion_class

    from hermes.cli.app import EXIT_USAGE, Fail, program

    shell = shell or os.path.basename(os.environ.get("SHELL", ""))
    if shell not in SHELLS:
        raise Fail(f"which shell? `{program()} completion {'|'.join(SHELLS)}`", EXIT_USAGE)
    name = program()
    script = get_completion_class(shell)(ctx.find_root().command, {}, name,
                                         f"_{name.replace('-', '_').upper()}_COMPLETE")
    click.echo(script.source())
