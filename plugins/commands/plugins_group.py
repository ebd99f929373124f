"""``hermes plugins list|info|enable|disable``: what is installed, what loaded,
what failed. Listing reads entry-point metadata and the state remembered from
the last load (:mod:`hermes.host.loadstate`); it imports no third-party plugin."""

from __future__ import annotations

import click

from hermes.cli.app import App, Fail, echo_json, remember_output
from hermes.host import loadstate


class _PluginsGroup(click.Group):
    """``hermes plugins``: subcommands added by plugins (``install``,
    ``uninstall`` from hermes-compat) load on demand, like top-level ones."""

    def get_command(self, ctx, name):
        if (command := super().get_command(ctx, name)) is None and not name.startswith("-"):
            self.list_commands(ctx)  # which loads them
            command = super().get_command(ctx, name)
        return command

    def list_commands(self, ctx):
        root = ctx.find_root()
        root.command.load_plugin_commands(root)  # `hermes plugins --help` shows install/uninstall too
        return super().list_commands(ctx)


@click.group(cls=_PluginsGroup)
def plugins():
    """List, inspect, enable and disable plugins."""


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.option("--hooks", is_flag=True, help="Load the plugins and show the hooks each implements.")
@click.pass_obj
def plugins_list(app: App, as_json: bool, hooks: bool):
    """Every discovered plugin with its status."""
    from plugins.commands.listing import listed  # here: every command adds this group, few list

    records = [r.as_dict(with_hooks=True) for r in app.host.records] if hooks else listed(app)
    failures = loadstate.failures()
    if as_json:
        remember_output("listing-json", echo_json([dict(r, failures=failures.get(r["name"]) or {}) for r in records]))
        return
    lines = ["No plugins found. Install one with pip; see CONTRIBUTING.md."] if not records else []
    width = max((len(r["name"]) for r in records), default=0)
    swidth = max([10, *(len(r["source"]) for r in records)])  # "hermes-compat" is wider than "entrypoint"
    for r in sorted(records, key=lambda r: (r["source"] != "builtin", r["name"])):
        detail = r["error"] or r["description"]
        failed = failures.get(r["name"])
        if failed and not r["error"]:
            detail += (f" [failed in an earlier run: {', '.join(failed)}; see `hermes plugins info {r['name']}`]")
        lines.append(f"{r['name']:<{width}}  {r['status']:<11}  {r['version'] or '-':<8}  {r['source']:<{swidth}}  "
                     f"{detail}")
        if hooks and r["hooks"]:
            lines.append(f"{'':<{width}}  hooks: {', '.join(r['hooks'])}")
    click.echo("\n".join(lines))
    remember_output("listing", "\n".join(lines))


def _find(app: App, name: str):
    from kernel.hints import did_you_mean
    from plugins.commands.listing import listing

    records = listing(app)
    if found := next((rec for rec in records if rec.name == name), None):
        return found
    raise Fail(f"no plugin named '{name}'{did_you_mean(name, [r.name for r in records]) or '; see `hermes plugins list`'}")


@plugins.command("info")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def plugins_info(app: App, name: str, as_json: bool):
    """Details of one plugin: what it registers, what it shadows, what failed."""
    from hermes.host.plugins import ENABLED, ERROR

    rec = _find(app, name)
    loaded = rec.status in (ENABLED, ERROR)
    rec = (app.host.record(name) or rec) if loaded else rec  # loaded with the others: a clash is seen beside them
    info = rec.as_dict()
    if loaded:
        from kernel.hookspecs import MODEL_PROVIDERS
        from plugins.commands.hookspecs import SLASH_COMMANDS

        reg = app.host.registry
        mine = lambda table: sorted(n for n, entry in table.items() if entry.plugin == name)  # noqa: E731
        lost = sorted(f"{tool} (shadowed by '{reg.tools[tool].plugin}')" for tool, losers in reg.shadowed.items()
                      for t in losers if t.plugin == name)
        won = sorted(f"{tool} (over {', '.join(repr(t.plugin) for t in losers)})" for tool, losers in reg.shadowed.items()
                     if reg.tools[tool].plugin == name)
        info.update(hooks=rec.hooks, tools=mine(reg.tools), shadowed_tools=lost, shadows=won,
                    providers=mine(reg[MODEL_PROVIDERS]), slash_commands=[f"/{n}" for n in mine(reg[SLASH_COMMANDS])],
                    config_keys=sorted(k for k, key in app.config.keys.items() if key.owner == name),
                    **{table: mine(entries) for table, entries in sorted(reg.named.items())
                       if table not in (MODEL_PROVIDERS.name, SLASH_COMMANDS.name)})
    failures = dict(loadstate.failures().get(name) or {})
    failures.update({f.hook: f.error for f in app.host.failures.of(name)} if app._host is not None else {})
    info["failures"] = failures
    if as_json:
        echo_json(info)
        return
    for key, value in info.items():
        if isinstance(value, dict):
            for hook, text in value.items():
                click.echo(f"failed: {hook}: {text}")
        elif value not in (None, "", []):
            click.echo(f"{key}: {', '.join(value) if isinstance(value, list) else value}")


def _state_command(verb: str, enable: bool, help_text: str) -> None:
    """``hermes plugins enable|disable NAME``: saved in config.yaml's ``plugins.enabled|disabled``."""
    @plugins.command(verb, help=help_text)
    @click.argument("name")
    @click.pass_obj
    def command(app: App, name: str):
        from hermes.host.essential import ESSENTIAL
        from plugins.config_command.edit import EditError, add_to_list, edit, path_of

        rec = _find(app, name)
        if not enable and name in ESSENTIAL:
            raise Fail(f"plugin {name} is essential and cannot be disabled (it always loads)")
        wanted, other = ("plugins.enabled", "plugins.disabled") if enable else ("plugins.disabled", "plugins.enabled")
        try:
            edit(path := path_of(app.config), lambda document: add_to_list(document, wanted, name, remove_from=other))
        except (OSError, EditError) as exc:
            raise Fail(str(exc)) from None
        note = f"; it stays off: {rec.reason}" if enable and rec.reason.startswith(("not listed", "blocked by")) else ""
        click.echo(f"{'enabled' if enable else 'disabled'} {name} (saved in {path}){note}")  # HERMES_PLUGINS, a distro


_state_command("enable", True, "Enable a plugin (saved in config.yaml).")
_state_command("disable", False, "Disable a plugin (saved in config.yaml); disabled always wins.")
