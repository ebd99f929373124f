"""``hermes plugins list|info|enable|disable``: what is installed, what loaded,
what failed. Listing reads entry-point metadata and the state remembered from
the last load (:mod:`hermes.cli.clistate`); it imports no third-party plugin."""

from __future__ import annotations

import click

from hermes.cli import clistate as state
from hermes.cli.app import App, Fail, echo_json, remember_output


class _PluginsGroup(click.Group):
    """``hermes plugins``: subcommands added by plugins (``install``,
    ``uninstall`` from hermes-compat) load on demand, like top-level ones."""

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is None and not name.startswith("-"):
            root = ctx.find_root()
            root.command._load_plugin_commands(root)
            command = super().get_command(ctx, name)
        return command

    def list_commands(self, ctx):
        root = ctx.find_root()
        root.command._load_plugin_commands(root)  # `hermes plugins --help` shows install/uninstall too
        return super().list_commands(ctx)


@click.group(cls=_PluginsGroup)
def plugins():
    """List, inspect, enable and disable plugins."""


plugins.repairs_config = True  # runs while config.yaml has a wrong type: disabling a plugin may be the fix


def _listing(app: App, load: bool) -> list:
    """The plugins with their status. Without ``load``, from metadata and the
    state cached at the last load; when what is installed or selected changed
    since then (a fresh ``pip install``), the plugins load once to find out."""
    from hermes.host.plugins import PluginHost

    if load:
        return app.host.records
    remembered = state.read_state()
    seen = remembered.get("plugins") or {}
    # of the built-ins only the plugin sources are imported (their candidates
    # are found by code); the others' descriptions were remembered
    sources = {name for name, was in seen.items() if "discover_plugins" in (was.get("hooks") or [])}
    listed = PluginHost.discover(app.config, distro=app.distro, import_third_party=False, builtins=sources)
    if remembered.get("fingerprint") != listed.fingerprint:
        return app.host.records
    for rec in listed.records:
        was = seen.get(rec.name) or {}
        if not rec.description and was.get("version") == rec.version:
            rec.description = was.get("description") or ""
        if rec.status == "enabled" and was.get("error") and was.get("version") == rec.version:
            rec.status, rec.error = "error", was["error"]
    return listed.records


def _listed(app: App) -> list:
    """What ``plugins list`` shows, as dicts: printed from the last listing
    when none of the files it depends on changed (no package metadata read,
    no plugin imported), else found again and remembered."""
    stamp = state.listing_stamp()
    records = state.cached_listing(stamp)
    if records is None:
        records = [r.as_dict() for r in _listing(app, load=False)]
        state.remember_listing(stamp, records)
    return records


def _failures() -> dict:
    """What plugin code did wrong in earlier runs: plugin -> {hook: why}."""
    return state.read_state().get("failures") or {}


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.option("--hooks", is_flag=True, help="Load the plugins and show the hooks each implements.")
@click.pass_obj
def plugins_list(app: App, as_json: bool, hooks: bool):
    """Every discovered plugin with its status."""
    records = [r.as_dict(with_hooks=True) for r in _listing(app, load=True)] if hooks else _listed(app)
    failures = _failures()
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
    from kernel.hints import close_matches

    records = _listing(app, load=False)
    for rec in records:
        if rec.name == name:
            return rec, records
    near = close_matches(name, [r.name for r in records])
    hint = f"; did you mean {', '.join(near)}?" if near else "; see `hermes plugins list`"
    raise Fail(f"no plugin named '{name}'{hint}")


@plugins.command("info")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def plugins_info(app: App, name: str, as_json: bool):
    """Details of one plugin: what it registers, what it shadows, what failed."""
    from hermes.host.plugins import ENABLED, ERROR

    rec, _ = _find(app, name)
    if rec.status in (ENABLED, ERROR):
        rec = app.host.record(name) or rec  # loaded with the others: a clash is only seen beside them
    info = rec.as_dict()
    if rec.status in (ENABLED, ERROR):
        reg = app.host.registry
        mine = lambda table: sorted(n for n, entry in table.items() if entry.plugin == name)  # noqa: E731
        lost = sorted(f"{tool} (shadowed by '{reg.tools[tool].plugin}')" for tool, losers in reg.shadowed.items()
                      for t in losers if t.plugin == name)
        won = sorted(f"{tool} (over {', '.join(repr(t.plugin) for t in losers)})" for tool, losers in reg.shadowed.items()
                     if reg.tools[tool].plugin == name)
        info.update(hooks=rec.hooks, tools=mine(reg.tools), shadowed_tools=lost, shadows=won,
                    providers=mine(reg.providers),
                    **{table: mine(entries) for table, entries in sorted(reg.named.items())
                       if table not in ("model_providers", "slash_commands")})
    failures = dict(_failures().get(name) or {})
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


def _names(value) -> list:
    """The names written in ``plugins.enabled``/``disabled``: a bare name (a
    type problem) counts as that name, so enable/disable write a list back."""
    if isinstance(value, str):
        return [value]
    return [n for n in value if isinstance(n, str)] if isinstance(value, list) else []


def _set_plugin_state(app: App, name: str, enable: bool) -> None:
    from hermes.host.essential import ESSENTIAL

    _find(app, name)
    if not enable and name in ESSENTIAL:
        raise Fail(f"plugin {name} is essential and cannot be disabled (it always loads)")
    config = app.config
    section = config.data.get("plugins") if isinstance(config.data.get("plugins"), dict) else {}
    enabled = [n for n in _names(section.get("enabled")) if n != name]
    disabled = [n for n in _names(section.get("disabled")) if n != name]
    (enabled if enable else disabled).append(name)
    config.set_value("plugins.enabled", enabled)
    config.set_value("plugins.disabled", disabled)
    path = config.save()
    click.echo(f"{'enabled' if enable else 'disabled'} {name} (saved in {path})")


@plugins.command("enable")
@click.argument("name")
@click.pass_obj
def plugins_enable(app: App, name: str):
    """Enable a plugin (saved in config.yaml)."""
    _set_plugin_state(app, name, True)


@plugins.command("disable")
@click.argument("name")
@click.pass_obj
def plugins_disable(app: App, name: str):
    """Disable a plugin (saved in config.yaml); disabled always wins."""
    _set_plugin_state(app, name, False)
