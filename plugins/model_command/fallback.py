"""``hermes fallback [list] | add MODEL [--provider P ...] | remove N|MODEL | clear`` (hermes-agent's): the providers
tried in order when the model fails (config.yaml's ``fallback_providers``), changed without editing YAML. Each entry
is checked as ``hermes model set`` checks a model; a script passes everything as options."""

from __future__ import annotations

import click

from hermes.cli.app import Fail, echo_json, program

OLDER = "fallback_model"  # hermes-agent's older single entry: moved into fallback_providers by the first change


def _chain(app) -> list:
    from plugins.fallback import entries

    return [dict(e) for e in entries(app.config) if isinstance(e, dict)]


def _rows(app) -> list:
    """Each entry as ``hermes model`` shows a model: where it goes, its key variable set or not, or its problem."""
    from plugins.fallback import normalized, provider_config
    from plugins.model_command.cli import current

    rows = []
    for i, entry in enumerate(_chain(app)):
        if not entry.get("model"):
            rows.append({"model": "", "problem": "no model: skipped", "entry": entry})
            continue
        now = current(app, provider_config(normalized(i, entry)))
        rows.append({**now, "entry": {k: v for k, v in entry.items() if k not in ("api_key", "key")}})
    return rows


def _save(app, chain: list) -> None:
    from plugins.config_command.edit import EditError, edit, path_of, set_key, unset_key

    def change(document):
        set_key(document, "fallback_providers", chain) if chain else unset_key(document, "fallback_providers")
        unset_key(document, OLDER)

    try:
        edit(path_of(app.config), change)
    except (EditError, OSError) as exc:
        raise Fail(f"config.yaml was not changed: {exc}") from None


def _said(row: dict) -> str:
    where = ", ".join(x for x in (row.get("provider"), row.get("api_mode"), row.get("base_url")) if x)
    key = row.get("key_env") and not row.get("local") and \
        f"{row['key_env']} {'set' if row.get('key_set') else 'not set'}"
    return f"{row['model'] or '(none)'}" + (f" ({where})" if where else "") + (f"; key {key}" if key else "")


@click.group("fallback", invoke_without_command=True)
@click.pass_context
def fallback(ctx):
    """The providers tried in order when the model fails (rate limits, outages): list, add, remove, clear."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@fallback.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def list_cmd(app, as_json):
    """The chain, in the order it is tried, each with its provider and key."""
    rows = _rows(app)
    if as_json:
        return echo_json(rows)
    if not rows:
        return click.echo(f"no fallback providers: when the model fails, the turn fails (`{program()} fallback add "
                          "MODEL --provider NAME`)")
    for i, row in enumerate(rows, 1):
        click.echo(f"{i}. {_said(row)}" + (f"\n   problem: {row['problem']}" if row.get("problem") else ""))


@fallback.command("add")
@click.argument("name")
@click.option("--provider", help="The provider to reach it through (else its name's: claude-* is anthropic's).")
@click.option("--base-url", help="Another endpoint's URL (an OpenAI-compatible server, a proxy).")
@click.option("--api-mode", help="chat_completions, codex_responses, anthropic_messages, ...")
@click.option("--api-key-env", help="The environment variable holding its key (else the provider's).")
@click.pass_obj
def add_cmd(app, name, provider, base_url, api_mode, api_key_env):
    """Put MODEL at the end of the chain."""
    from kernel.types import ProviderConfig
    from plugins.model_command.cli import _plugin_providers, current
    from plugins_providers.defaults import mistake

    if not name.strip():
        raise Fail(f"a fallback needs a model: {program()} fallback add MODEL [--provider NAME]", 2)
    given = {"model": name.strip(), "provider": provider, "base_url": base_url, "api_mode": api_mode,
             "api_key_env": api_key_env}
    entry = {k: v.strip() for k, v in given.items() if v and v.strip()}
    wanted = ProviderConfig(**entry)
    wrong = mistake(wanted, wanted.api_mode or "chat_completions")
    if wrong and not (wanted.provider and wanted.provider in _plugin_providers(app)):
        raise Fail(f"{wrong}; config.yaml was not changed", 2)
    primary = current(app)
    chain = _chain(app)
    same = [i for i, e in enumerate(chain, 1) if {k: str(e.get(k) or "") for k in entry} == entry]
    if same:
        raise Fail(f"{name} is in the chain already (entry {same[0]}); config.yaml was not changed", 2)
    now = current(app, wanted)
    if (now["model"], now.get("provider"), now.get("base_url")) == \
            (primary["model"], primary.get("provider"), primary.get("base_url")):
        raise Fail(f"{name} is the model itself: a fallback must be another model or provider", 2)
    _save(app, chain + [entry])
    click.echo(f"fallback {len(chain) + 1}: {_said(now)}")
    if now.get("problem"):
        click.echo(f"{program()}: warning: {now['problem']}", err=True)
    elif now.get("key_env") and not now.get("key_set") and not now.get("local"):
        click.echo(f"{program()}: warning: {now['key_env']} is not set: this fallback cannot answer until it is",
                   err=True)


@fallback.command("remove")
@click.argument("which")
@click.pass_obj
def remove_cmd(app, which):
    """Take an entry out of the chain: its number in `list`, or its model."""
    chain = _chain(app)
    found = [int(which)] if which.isdigit() and 1 <= int(which) <= len(chain) else \
        [i for i, e in enumerate(chain, 1) if e.get("model") == which]
    if len(found) != 1:
        listed = ", ".join(f"{i}. {e.get('model') or '(none)'}" for i, e in enumerate(chain, 1)) or "none"
        why = "is in the chain more than once: give its number" if found else "is no entry"
        raise Fail(f"{which!r} {why}; the chain: {listed}", 2)
    gone = chain.pop(found[0] - 1)
    _save(app, chain)
    click.echo(f"removed {gone.get('model') or '(none)'}; {len(chain)} left")


@fallback.command("clear")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
@click.pass_obj
def clear_cmd(app, yes):
    """Take every entry out: when the model fails, the turn fails."""
    from plugins.asking import confirm

    chain = _chain(app)
    if not chain:
        return click.echo("no fallback providers to clear")
    if not yes:
        confirm(f"Empty the fallback chain ({len(chain)} entries)?", "the fallback chain was not emptied")
    _save(app, [])
    click.echo(f"the fallback chain is empty ({len(chain)} entries removed)")


fallback.add_command(list_cmd, "ls")
fallback.add_command(remove_cmd, "rm")
