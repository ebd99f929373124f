"""``hermes setup``: at a terminal, the provider, its key and the model, asked in turn, saved, and tried once
(hermes-agent's first command). Nothing is written before the last answer; Ctrl+C leaves with nothing changed."""

from __future__ import annotations

import os
import sys

import click

from hermes.cli.app import Fail, program

MODES = ("chat_completions", "anthropic_messages", "codex_responses")
SHOWN = 30  # listed models shown by number; more are typed by name


@click.command("setup")
@click.option("--no-test", is_flag=True, help="Save without trying the model with one short request.")
@click.pass_obj
def setup(app, no_test):
    """Choose the provider, its key and the model at a terminal; save them and try the model once."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise Fail(f"setup asks its questions at a terminal; in a script: `{program()} model set MODEL --provider P` "
                   f"and `{program()} config set KEY_VARIABLE KEY`", 2)
    from plugins.model_command.cli import current, providers, save

    now = current(app)
    click.echo(f"{program()} setup: the model conversations here use, its provider and its key (Ctrl+C leaves; "
               "nothing is saved before the last answer).")
    if now.get("model"):
        click.echo(f"Now: {now['model']}" + (f" through {now['provider']}" if now.get("provider") else ""))
    agent_home = os.path.expanduser("~/.hermes")
    if not os.environ.get("HERMES_HOME") and os.path.isfile(os.path.join(agent_home, "config.yaml")):
        click.echo(f"hermes-agent's folder {agent_home} is here: with `export HERMES_HOME={agent_home}` (Ctrl+C now) "
                   "hermes uses its config.yaml, its keys (.env) and skills instead.")
    given = _provider(now, [row for row in providers(app) if not row["plugin"]])
    typed = _key(given)
    given["model"] = _model(app, now, given)
    if typed:
        _keep(app, *typed)
    save(app, given)
    click.echo(f"saved in {app.config.where()}: model {given['model']}" +
               "".join(f", {k} {v}" for k, v in given.items() if k != "model" and v))
    if no_test:
        return
    _try(app, given)


def _provider(now: dict, table: list) -> dict:
    """The provider chosen from the table, or another endpoint's URL, API and key variable: config's fields."""
    from plugins_providers.defaults import is_local, url_problem

    click.echo("\nProviders (+: its key is set; ~: a server on this machine, no key needed):")
    for number, row in enumerate(table, 1):
        mark = "+" if row["key_set"] else "~" if row["local"] else " "
        click.echo(f"  {number:>2} {mark} {row['name']:<13} {row['key_env']}")
    other = len(table) + 1
    click.echo(f"  {other:>2}   another endpoint (its URL: a server of your own, a proxy, a gateway)")
    names = [row["name"] for row in table]
    chosen = now.get("provider") if now.get("provider") in names else next(
        (row["name"] for row in table if row["key_set"]), names[0])
    number = click.prompt("Provider", type=click.IntRange(1, other), default=names.index(chosen) + 1)
    if number != other:
        row = table[number - 1]
        # config's URL, API and key variable were another provider's: cleared
        return {"provider": row["name"], "base_url": "", "api_mode": "", "api_key_env": ""}

    def checked(url: str) -> str:
        problem = url_problem(url.strip())
        if problem:
            raise click.BadParameter(f"the URL {problem}")
        return url.strip()

    url = click.prompt("Its URL (as http://127.0.0.1:8000/v1)", value_proc=checked)
    mode = click.prompt("Its API", type=click.Choice(MODES), default=MODES[0])
    variable = click.prompt("The environment variable holding its key (empty: none is needed)",
                            default="" if is_local(url) else "OPENAI_API_KEY", show_default=not is_local(url))
    return {"provider": "", "base_url": url, "api_mode": mode, "api_key_env": variable.strip()}


def _key(given: dict) -> "tuple | None":
    """Ask for the key when its variable is not set (set in this process for the listing and the try): the
    (variable, key) typed, kept by :func:`_keep` once every answer is in."""
    from hermes.host.paths import config_dir
    from plugins_providers.defaults import target

    where = target(_chosen(given), given.get("api_mode") or "chat_completions")
    if where.env_var and os.environ.get(where.env_var, "").strip():
        click.echo(f"{where.env_var} is set.")
        return None
    if not where.env_var or where.local and not given.get("api_key_env"):
        return None
    key = click.prompt(f"{where.env_var} (typed hidden; kept in {config_dir() / '.env'})", hide_input=True,
                       default="", show_default=False).strip()
    if not key:
        click.echo(f"No key: set {where.env_var} before the model can answer.")
        return None
    os.environ[where.env_var] = key
    return where.env_var, key


def _keep(app, variable: str, key: str) -> None:
    """The key into the .env beside config.yaml (read at every start, as hermes-agent's), or how to export it
    when nothing here reads that file (a distro without hermes-compat)."""
    from hermes.host.paths import config_dir

    record = app.host.record("hermes-compat")
    if record is None or record.status != "enabled":
        click.echo(f"Nothing here reads .env: export {variable}=... in your shell's profile.")
        return
    from plugins.hermes_compat.dotenv import save

    try:
        save(config_dir(), variable, key)
    except (OSError, ValueError) as exc:
        raise Fail(f"{variable} was not saved: {exc}; nothing was changed") from None


def _model(app, now: dict, given: dict) -> str:
    """A listed model by number or any name typed; the listing is the provider's own (its API's /models)."""
    from plugins.model_command.cli import models_of

    try:
        names = models_of(app, _chosen(given))["models"]
    except Fail as exc:
        click.echo(f"(its models could not be listed: {exc.message})")
        names = []
    default = now["model"] if now.get("model") and (now["model"] in names or not names) else (names or [""])[0]
    if names:
        more = f"; the first {SHOWN} shown, any other by name" if len(names) > SHOWN else ""
        click.echo(f"\nModels it offers ({len(names)}{more}):")
        for number, name in enumerate(names[:SHOWN], 1):
            click.echo(f"  {number:>2} {name}")
    while True:
        answer = click.prompt("Model (a number or a name)" if names else "Model", default=default or None).strip()
        if answer.isdigit() and names and 1 <= int(answer) <= min(len(names), SHOWN):
            return names[int(answer) - 1]
        if answer and not answer.isdigit():
            return answer
        click.echo("Give a number from the list or a model's name.")


def _chosen(given: dict):
    """The answers so far as a ProviderConfig (an answer left out: empty)."""
    from kernel.types import ProviderConfig

    return ProviderConfig(**{k: v or "" for k, v in given.items()})


def _try(app, given: dict) -> None:
    """One short request to the saved model (straight to its provider: no retries, no fallback)."""
    from kernel.agent import Agent, AgentError
    from kernel.types import ProviderConfig
    from plugins.auxiliary import probe

    click.echo("Trying it with one short request ...")
    try:
        agent = Agent(app.host, toolsets=[], platform="cli")
    except AgentError as exc:
        raise Fail(str(exc)) from None
    try:
        check = probe(agent, ProviderConfig.configured(app.config, **given), "model", True)
    finally:
        agent.close()
    if check.status != "ok":
        raise Fail(f"it did not answer: {check.detail} (saved all the same: `{program()} setup` again, or "
                   f"`{program()} doctor`)")
    click.echo(f"It works: {check.detail}. `{program()}` starts a conversation.")
