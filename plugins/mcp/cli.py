"""``hermes mcp``: list, test, add, configure, remove, enable and disable MCP servers.

``list`` and ``test`` connect (``list`` all at once, each within its connect
timeout); ``add``, ``remove``, ``enable`` and ``disable`` change ``mcp_servers``
in config.yaml in a round trip that keeps its comments."""

from __future__ import annotations

import re
import time
from pathlib import Path

import click

from plugins.numbers import FiniteRange


def _fail(message: str, usage: bool = False) -> click.ClickException:
    from hermes.cli.app import EXIT_USAGE, Fail

    return Fail(message, EXIT_USAGE) if usage else Fail(message)


def status_lines(running) -> list:
    lines = []
    for name, conn in sorted(running.connections.items()):
        tools = len(_tools(conn)) if conn.state == "ready" else 0
        took = f" in {conn.connect_seconds:.2f}s" if conn.connect_seconds is not None and conn.state == "ready" else ""
        lines.append(f"{name}: {conn.state}{took}, {tools} tools" + (f" ({conn.error})" if conn.error else ""))
    return lines


def _tools(conn) -> list:
    from plugins.mcp import _cache
    from plugins.mcp.servers import tools_of

    return tools_of(conn, _cache())


def connect_all(app, names=None, timeout=None) -> dict:
    """name -> (Server, Connection or None when disabled), connected all at once."""
    from plugins.mcp import all_servers, manager

    found = all_servers(app.host)
    if names is not None:
        found = {n: s for n, s in found.items() if n in names}
    if not found:
        return {}  # no thread, no log file, for nothing
    running = manager(app.host)
    running.quiet = True  # the command says what failed, once
    running.update({n: s for n, s in found.items() if s.enabled})
    wait = max((s.connect_timeout for s in found.values() if s.enabled), default=0.0)
    running.wait_connecting(min(wait, timeout) if timeout else wait)
    return {n: (s, running.connections.get(n)) for n, s in found.items()}


def row_of(server, conn, timeout: float = 0) -> dict:
    state = "disabled" if not server.enabled else conn.state if conn else "stopped"
    error = conn.error if conn and conn.error else None
    if state == "connecting" and not error:  # the wait ended first (a program that is no MCP server, say); the
        waited = min(timeout or server.connect_timeout, server.connect_timeout)  # words of the manager's own timeout
        error = f"no answer within {'--timeout' if waited < server.connect_timeout else 'its connect_timeout'} " \
                f"({waited:g}s)"
    return {"name": server.name, "transport": server.transport, "where": server.where(), "source": server.source,
            "status": state, "tools": sorted(t.name for t in _tools(conn)) if state == "ready" else [],
            "connect_seconds": round(conn.connect_seconds, 3) if conn and conn.connect_seconds and state == "ready"
            else None, "last_error": error}


def _edit(app, change) -> None:
    from plugins.config_command.edit import EditError, edit, path_of

    try:
        edit(path_of(app.config), change)
    except (EditError, OSError) as exc:
        raise _fail(f"config.yaml was not changed: {exc}") from None


def _entry(app, name: str) -> dict:
    servers = app.config.get("mcp_servers")
    if not isinstance(servers, dict) or name not in servers:
        known = ", ".join(sorted(servers)) if isinstance(servers, dict) and servers else "none"
        raise _fail(f"no MCP server '{name}' in config.yaml (configured: {known})", usage=True)
    return servers[name]


def _at_terminal() -> bool:
    import sys

    return sys.stdin.isatty() and sys.stdout.isatty()


def _pick(name: str, listed: dict, chosen: set) -> "set | None":
    """At a terminal: the tools numbered, marked when offered; numbers switch them, until Enter keeps the choice
    (None: q, or the end of input, leaves it as it was)."""
    names = list(listed)
    while True:
        click.echo(f"MCP server '{name}': the tools offered to the agent are marked [x].")
        for number, tool in enumerate(names, 1):
            click.echo(f"  {number:>2} [{'x' if tool in chosen else ' '}] {tool}  {listed[tool][:70]}")
        try:
            answer = click.prompt("Numbers to switch (2 4-6), a: all, n: none, Enter: save, q: leave",
                                  default="", show_default=False).strip().lower()
        except click.Abort:
            return None
        if answer in ("", "q"):
            return chosen if answer == "" else None
        if answer in ("a", "n"):
            chosen = set(names) if answer == "a" else set()
            continue
        for part in answer.replace(",", " ").split():
            first, _, last = part.partition("-")
            if not (first.isdigit() and (last or first).isdigit()):
                click.echo(f"  '{part}' is no number", err=True)
                continue
            for number in range(int(first), int(last or first) + 1):
                if 1 <= number <= len(names):
                    chosen ^= {names[number - 1]}


def mcp_group() -> click.Group:
    @click.group("mcp", invoke_without_command=True)
    @click.pass_context
    def group(ctx):
        """MCP servers whose tools the agent may call: list, test, add, remove, enable, disable (alone: list); serve:
        hermes itself as one."""
        if ctx.invoked_subcommand is None:
            ctx.invoke(list_cmd)

    @group.command("serve")
    @click.option("-m", "--model", default=None, help="The model its turns ask (default: the configured one).")
    @click.option("-t", "--toolsets", default=None, help="Comma-separated toolsets its turns may use.")
    @click.pass_obj
    def serve_cmd(app, model, toolsets):
        """hermes as an MCP server on stdio: an MCP client (Claude Code, Cursor, ...) hands it tasks with its tool ask."""
        import sys

        from plugins.mcp.serving import serve

        if sys.stdin.isatty():
            click.echo("hermes mcp serve speaks MCP on stdin and stdout: give it to an MCP client, e.g. "
                       '{"command": "hermes", "args": ["mcp", "serve"]} (Ctrl+C stops it)', err=True)
        serve(app, {"model": model, "toolsets": toolsets})

    @group.command("list")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.option("--timeout", type=FiniteRange(min=0, min_open=True), metavar="SECONDS",
                  help="Wait at most this long for the servers to connect (default: their connect_timeout).")
    @click.pass_obj
    def list_cmd(app, as_json, timeout):
        """Each server: transport, status, tool count and its last error (connecting them all at once)."""
        from hermes.cli.app import echo_json

        rows = [row_of(server, conn, timeout) for server, conn in connect_all(app, timeout=timeout).values()]
        if as_json:
            echo_json(rows)
            return
        if not rows:
            click.echo("No MCP servers are configured (add one with `hermes mcp add NAME -- COMMAND ARGS...`).")
        for r in rows:
            took = f" in {r['connect_seconds']:.2f}s" if r["connect_seconds"] is not None else ""
            click.echo(f"{r['name']:<16} {r['transport']:<5} {r['status']:<10}{took:<9} {len(r['tools']):>3} tools  "
                       f"{r['where']}" + (f"\n{'':<16} last error: {r['last_error']}" if r["last_error"] else ""))

    @group.command("test")
    @click.argument("name")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_obj
    def test_cmd(app, name, as_json):
        """Connect to one server, list its tools and say how long it took."""
        from hermes.cli.app import echo_json
        from plugins.mcp import all_servers

        known = all_servers(app.host)
        if name not in known:
            raise _fail(f"no MCP server '{name}' (configured: {', '.join(sorted(known)) or 'none'})", usage=True)
        server = known[name]
        if not server.enabled:
            raise _fail(f"MCP server '{name}' is disabled (`hermes mcp enable {name}`)")
        started = time.monotonic()
        _, conn = connect_all(app, {name})[name]
        row = row_of(server, conn)
        row["seconds"] = round(time.monotonic() - started, 3)
        if as_json:
            echo_json(row)
        elif row["status"] == "ready":
            click.echo(f"{name}: connected in {row['seconds']:.2f}s, {len(row['tools'])} tools")
            for tool in row["tools"]:
                click.echo(f"  {tool}")
        if row["status"] != "ready":
            raise _fail(f"MCP server '{name}' did not connect: {row['last_error'] or row['status']}")

    def sign_in(app, server) -> None:
        """Sign in to ``server`` (its address said, the browser's answer taken), the tokens kept; Fail when not."""
        import asyncio

        from plugins.mcp.oauth import login
        from plugins.mcp.servers import _why

        try:
            tools = asyncio.run(login(server, app.config.data_dir, lambda line: click.echo(line, err=True)))
        except Exception as exc:  # noqa: BLE001 - the sign-in's failure, one line
            raise _fail(f"MCP server '{server.name}': {_why(exc, server)}") from None
        click.echo(f"signed in to {server.name}: {len(tools)} tools")

    @group.command("login")
    @click.argument("name")
    @click.pass_obj
    def login_cmd(app, name):
        """Sign in (again) to a remote server that asks for OAuth (auth: oauth): its address to open, the tokens
        kept."""
        from plugins.mcp import all_servers

        server = all_servers(app.host).get(name)
        if server is None or server.auth != "oauth":
            raise _fail(f"no MCP server '{name}' signs in with OAuth (give it `auth: oauth` in mcp_servers)"
                        if server is not None else f"no MCP server '{name}'", usage=True)
        sign_in(app, server)

    @group.command("reauth")
    @click.argument("name", required=False)
    @click.option("--all", "every", is_flag=True, help="Each server that signs in with OAuth, one after another.")
    @click.pass_context
    def reauth_cmd(ctx, name, every):
        """Sign in again (hermes-agent's): to NAME, as `login`, or with --all to each server that asks for OAuth (a
        failure said, the others still signed in to)."""
        from plugins.mcp import all_servers

        if bool(name) == every:
            raise _fail("`reauth NAME` or `reauth --all`", usage=True)
        if name:
            return ctx.invoke(login_cmd, name=name)
        servers = [s for s in all_servers(ctx.obj.host).values() if s.auth == "oauth"]
        if not servers:
            raise _fail("no MCP server signs in with OAuth (`auth: oauth` in mcp_servers)")
        failed = []
        for server in servers:
            try:
                sign_in(ctx.obj, server)
            except click.ClickException as exc:
                exc.show()
                failed.append(server.name)
        if failed:
            raise _fail(f"not signed in to {', '.join(failed)}")

    @group.command("logout")
    @click.argument("name")
    @click.pass_obj
    def logout_cmd(app, name):
        """Forget what `hermes mcp login` kept for a server (the next connection needs a sign-in again)."""
        from plugins.mcp.config import Server
        from plugins.mcp.oauth import files_of

        if not files_of(Server(name), app.config.data_dir).forget():
            raise _fail(f"nothing is kept for MCP server '{name}'")
        click.echo(f"signed out of {name}")

    @group.command("add", context_settings={"ignore_unknown_options": True})
    @click.argument("name")
    @click.argument("command", nargs=-1, type=click.UNPROCESSED)
    @click.option("--url", help="A remote server's endpoint (streamable HTTP).")
    @click.option("--sse", is_flag=True, help="The url speaks the older SSE transport.")
    @click.option("--header", "headers", multiple=True, metavar="K=V", help="An HTTP header (repeat for more).")
    @click.option("--env", "envs", multiple=True, metavar="K=V",
                  help="A variable for a stdio server (repeat); K alone passes hermes' own $K.")
    @click.option("--auth", type=click.Choice(["oauth"]), default=None,
                  help="oauth: the remote server asks for a sign-in (then `hermes mcp login NAME`).")
    @click.pass_obj
    def add_cmd(app, name, command, url, sse, headers, envs, auth):
        """Add a server: `hermes mcp add NAME -- COMMAND ARGS...` or `hermes mcp add NAME --url URL`."""
        if bool(command) == bool(url):
            raise _fail("give a command after `--`, or --url (one of them)", usage=True)
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name):  # `a.b` is two keys to `config set`; '' or `a b`, no toolset name
            raise _fail(f"{name!r} is not a server name: letters, digits, - and _ (its tools are mcp__NAME__TOOL)",
                        usage=True)
        servers = app.config.get("mcp_servers")
        if isinstance(servers, dict) and name in servers:
            raise _fail(f"MCP server '{name}' is already configured (`hermes mcp remove {name}` first)", usage=True)

        def pairs(items, what):
            from plugins.config_command.cli import secret_named

            found = {}
            for item in items:
                key, sep, value = item.partition("=")
                key = key.strip()
                if what == "--env" and not sep and key:  # `--env GITHUB_TOKEN`: the variable hermes has, at start
                    sep, value = "=", "${%s}" % key
                if not sep or not key:
                    raise _fail(f"{what} {item!r}: write it as KEY=VALUE", usage=True)
                if secret_named(key) and "${" not in value:  # config.yaml is no place for a key (nor config set's)
                    hint = (f"pass --env {key} (written as ${{{key}}})" if what == "--env" else
                            f"pass --header '{key}=Bearer ${{YOUR_TOKEN}}'")
                    raise _fail(f"{what} {key}: hermes keeps no secret in config.yaml; export it in your shell and "
                                f"{hint}: it is read from the environment when the server starts", usage=True)
                found[key] = value
            return found

        entry: dict = {"url": url, **({"transport": "sse"} if sse else {})} if url else \
            {"command": command[0], "args": list(command[1:])}
        if headers:
            entry["headers"] = pairs(headers, "--header")
        if envs:
            entry["env"] = pairs(envs, "--env")
        if auth:
            entry["auth"] = auth
        from plugins.config_command.edit import set_key
        from plugins.mcp.config import parse, problems

        for wrong in problems(parse(name, entry))[:1]:  # it could never connect: nothing is written
            raise _fail(f"MCP server '{name}': {wrong}", usage=True)

        _edit(app, lambda doc: set_key(doc, ["mcp_servers", name], entry))
        click.echo(f"added MCP server '{name}'; " + (f"`hermes mcp login {name}` signs in to it" if auth else
                                                      f"`hermes mcp test {name}` connects to it"))
        import shutil  # here: every command imports this module, and shutil only this one needs

        if command and shutil.which(command[0], path=entry.get("env", {}).get("PATH")) is None:
            from hermes.cli.app import program

            click.echo(f"{program()}: warning: {command[0]!r} is not found on PATH here (or not executable): the server "
                       "cannot start until it is installed", err=True)

    @group.command("import")
    @click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--dry-run", is_flag=True, help="Say what would be added; change nothing.")
    @click.pass_obj
    def import_cmd(app, file, dry_run):
        """Add the servers of another client's config file (Claude Desktop's claude_desktop_config.json, Cursor's
        .cursor/mcp.json, VS Code's .vscode/mcp.json; without FILE, the first found, the project's first); a server
        already configured here is left as it is."""
        import json

        from plugins.config_command.edit import set_key
        from plugins.mcp.config import parse, problems
        from plugins.mcp.importing import client_files, converted, servers_of

        if file is None:
            if not (files := client_files()):
                raise _fail("no MCP config of Claude Desktop, Cursor or VS Code found here: give its FILE", usage=True)
            file, others = files[0], files[1:]
            click.echo(f"from {file}" + (f" (also found: {', '.join(map(str, others))}; give one as FILE)" if others
                                         else ""))

        try:
            found = servers_of(json.loads(file.read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise _fail(f"{file}: not JSON ({exc})") from None
        except (ValueError, OSError) as exc:  # no servers in it; UnicodeDecodeError
            raise _fail(f"{file}: {exc}") from None
        have = app.config.get("mcp_servers")
        have, added = dict(have) if isinstance(have, dict) else {}, {}
        for name, server in found.items():
            ours, entry, notes = converted(name, server)
            wrong = ["already configured here"] if ours in have or ours in added else \
                problems(parse(ours, entry))[:1] if entry is not None else notes[-1:]
            if wrong:
                click.echo(f"skipped '{ours}': {wrong[0]}")
                continue
            added[ours] = entry
            click.echo(f"{'would add' if dry_run else 'added'} '{ours}' ({entry.get('url') or entry['command']})" +
                       "".join(f"\n  {note}" for note in notes))
        if added and not dry_run:
            _edit(app, lambda doc: [set_key(doc, ["mcp_servers", n], e) for n, e in added.items()])
            click.echo(f"`hermes mcp list` connects {'them' if len(added) > 1 else 'it'}")

    @group.command("configure")
    @click.argument("name")
    @click.option("--only", metavar="TOOLS", help="Offer only these of its tools (comma-separated).")
    @click.option("--without", metavar="TOOLS", help="Offer all of its tools but these.")
    @click.option("--all", "everything", is_flag=True, help="Offer every tool it has again.")
    @click.pass_obj
    def configure_cmd(app, name, only, without, everything):
        """Choose which of a server's tools the agent is offered (hermes-agent's; at a terminal, from a list)."""
        from plugins.config_command.edit import set_key, unset_key

        _entry(app, name)
        if sum(map(bool, (only is not None, without is not None, everything))) > 1:
            raise _fail("give one of --only, --without and --all", usage=True)
        server, conn = connect_all(app, {name})[name]
        if conn is None or conn.state != "ready":
            raise _fail(f"MCP server '{name}' did not connect: {row_of(server, conn)['last_error'] or 'disabled'}")
        listed = {tool.name: " ".join((tool.description or "").split()) for tool in conn.listed}
        was = chosen = {tool for tool in listed if server.offers(tool)}
        if everything or only is not None or without is not None:
            named = [t.strip() for t in (only or without or "").split(",") if t.strip()]
            if unknown := [t for t in named if t not in listed]:
                raise _fail(f"MCP server '{name}' has no tool '{unknown[0]}' (it has: {', '.join(listed)})", usage=True)
            chosen = set(listed) if everything else set(named) if only is not None else set(listed) - set(named)
        elif not _at_terminal():
            raise _fail("no terminal to ask at: pass --only TOOLS, --without TOOLS or --all", usage=True)
        else:
            chosen = _pick(name, listed, set(chosen))  # (a copy: `was` stays what config.yaml says)
        if chosen is None or chosen == was:
            click.echo(f"MCP server '{name}': nothing changed ({len(was)} of its {len(listed)} tools offered).")
            return
        path = ["mcp_servers", name, "tools"]
        if chosen == set(listed):
            _edit(app, lambda doc: (unset_key(doc, [*path, "include"]), unset_key(doc, [*path, "exclude"])))
        else:
            _edit(app, lambda doc: (set_key(doc, [*path, "include"], [t for t in listed if t in chosen]),
                                    unset_key(doc, [*path, "exclude"])))
        click.echo(f"MCP server '{name}': {len(chosen)} of its {len(listed)} tools offered, from the next session.")

    @group.command("remove")
    @click.argument("name")
    @click.pass_obj
    def remove_cmd(app, name):
        """Remove a server from config.yaml."""
        from plugins.config_command.edit import unset_key

        _entry(app, name)
        _edit(app, lambda doc: unset_key(doc, ["mcp_servers", name]))
        click.echo(f"removed MCP server '{name}'")

    def switch(enabled: bool):
        @click.argument("name")
        @click.pass_obj
        def command(app, name):
            from plugins.config_command.edit import set_key
            from plugins.mcp import all_servers

            if name not in all_servers(app.host):  # a plugin's server is switched by an entry of its name
                _entry(app, name)
            _edit(app, lambda doc: set_key(doc, ["mcp_servers", name, "enabled"], enabled))
            click.echo(f"MCP server '{name}' {'enabled' if enabled else 'disabled'}")
        command.__doc__ = f"{'Enable' if enabled else 'Disable'} a server (mcp_servers.NAME.enabled)."
        return command

    group.command("enable")(switch(True))
    group.command("disable")(switch(False))
    import copy

    for alias, name in (("ls", "list"), ("rm", "remove")):  # hermes-agent's short names, not in the help
        hidden = copy.copy(group.commands[name])
        hidden.hidden = True
        group.add_command(hidden, alias)
    return group
