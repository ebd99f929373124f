"""``hermes model [show] [--json]``, ``hermes model list [--provider P]`` and ``hermes model set MODEL [--provider P]
[--base-url URL] [--api-mode M]``."""

from __future__ import annotations

import os

import click

from hermes.cli.app import Fail, echo_json, program


def current(app, pconf=None) -> dict:
    """The model a conversation started here would use (or ``pconf``), as far as it can be told without a request:
    where it is sent and with which key variable (set or not, never its value), or the problem that stops it."""
    from kernel.agent import Agent, AgentError
    from kernel.types import ProviderError
    from plugins.images import mode as image_mode
    from plugins_providers import reasoning

    try:
        agent = Agent(app.host, toolsets=[], platform="cli")
    except AgentError as exc:
        return {"model": app.config.get("model") or "", "problem": str(exc)}
    try:
        pconf = pconf or agent.primary
        found = {"model": pconf.model, "provider": pconf.provider, "api_mode": pconf.api_mode, "base_url": "",
                 "key_env": "", "key_set": False, "images": image_mode(app.config, pconf.model), "problem": ""}
        try:
            provider = agent.provider_for(pconf)
        except ProviderError as exc:
            found["problem"] = exc.message
            provider = None
        mode = agent.caller.modes.get(pconf) or pconf.api_mode or agent.hook.resolve_api_mode(config=pconf) or ""
        found["api_mode"] = mode
        target = getattr(provider, "target", None)  # the built-in providers' (a plugin's may have none)
        if target is None and (provider is None or mode in ("chat_completions", "codex_responses",
                                                            "anthropic_messages")):
            from plugins_providers.defaults import target as target_of

            target = target_of(pconf, mode or "chat_completions")
        if target is not None:
            found.update(provider=target.provider or pconf.provider, base_url=target.base_url, key_env=target.env_var,
                         key_set=bool(os.environ.get(target.env_var, "").strip()), local=target.local)
        level = reasoning.level_for(app.config, pconf.model)
        carried = reasoning.sent(level, mode, target, pconf.model) if level else None
        found["reasoning"] = {"level": level, "sent": carried}
        return found
    finally:
        agent.close()


def providers(app) -> list:
    """The providers a model may be reached through: the built-in table, then what plugins registered (API modes,
    hermes-agent's provider profiles and endpoints), each with its key variable and whether it is set."""
    from kernel.hookspecs import MODEL_PROVIDERS
    from plugins_providers.defaults import PROVIDERS

    rows = [{"name": name, "api_mode": info.api_mode, "base_url": info.base_url, "key_env": info.env_var,
             "key_set": bool(os.environ.get(info.env_var, "").strip()), "local": info.local, "plugin": ""}
            for name, info in sorted(PROVIDERS.items())]
    rows += [{"name": name, "api_mode": "", "base_url": "", "key_env": "", "key_set": False, "local": False,
              "plugin": entry.plugin, "description": entry.description}
             for name, entry in sorted(app.host.registry[MODEL_PROVIDERS].items()) if name not in PROVIDERS]
    return rows


@click.group("model", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (as `model show --json`).")
@click.pass_context
def model(ctx, as_json):
    """The model a conversation here uses and the providers there are; `set` saves another model."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(show, as_json=as_json)


@model.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show(app, as_json):
    """The model, its provider, URL and key variable; then every provider, its key set or not."""
    from plugins_providers.reasoning import said

    now, table = current(app), providers(app)
    if as_json:
        echo_json({"current": now, "providers": table})
        return
    key = now.get("key_env") and f"{now['key_env']} (" + ("set" if now["key_set"] else "not set; none needed here"
                                                         if now.get("local") else "not set") + ")"
    images = now.get("images") and now["model"] and ("in the message" if now["images"] == "native" else
                                                     "kept for vision_analyze") + " (agent.image_input_mode)"
    level = (now.get("reasoning") or {}).get("level")
    reasoning = level and said(level, now["reasoning"]["sent"], now["model"])
    for label, value in (("model", now["model"] or "(none)"), ("provider", now.get("provider")),
                         ("API mode", now.get("api_mode")), ("URL", now.get("base_url")), ("key", key),
                         ("images", images), ("reasoning", reasoning)):
        if value:
            click.echo(f"{label:<9} {value}")
    if now["problem"]:
        click.echo(f"problem   {now['problem']}")
    click.echo(f"\nproviders (`{program()} model set MODEL --provider NAME`; + its key is set):")
    for row in table:
        if row["plugin"]:
            continue
        mark = "+" if row["key_set"] else "~" if row["local"] else "-"
        click.echo(f"  {mark} {row['name']:<13} {row['api_mode']:<19} {row['key_env']:<20} {row['base_url']}")
    others = [row for row in table if row["plugin"]]
    if others:
        click.echo("\nfrom plugins (API modes, `--api-mode NAME`; named endpoints, `--provider NAME`):")
        for row in others:
            click.echo(f"    {row['name']:<22} {row['description']} ({row['plugin']})")
    click.echo("\n~: a server on this machine, no key needed")


@model.command("set")
@click.argument("name")
@click.option("--provider", help="The provider to reach it through (else its name's: claude-* is anthropic's).")
@click.option("--base-url", help="Another endpoint's URL (an OpenAI-compatible server, a proxy).")
@click.option("--api-mode", help="chat_completions, codex_responses, anthropic_messages, ...")
@click.pass_obj
def set_model(app, name, provider, base_url, api_mode):
    """Save MODEL (and how to reach it) in config.yaml: what `run` and `chat` use when not told otherwise."""
    from kernel.types import ProviderConfig
    from plugins_providers.defaults import family_of, mistake, provider_name

    name = name.strip()
    given = {"model": name, "provider": provider, "base_url": base_url, "api_mode": api_mode}
    wanted = ProviderConfig.configured(app.config, **given)
    wrong = mistake(wanted, wanted.api_mode or "chat_completions")
    if wrong and not (wanted.provider and wanted.provider in _plugin_providers(app)):
        raise Fail(f"{wrong}; config.yaml was not changed", 2)
    family, kept = family_of(name), provider_name(wanted.provider)
    if provider is None and kept and family and family != kept:  # `claude-x` kept on ollama: said, not guessed
        click.echo(f"note: the provider stays {kept} (config.yaml); `--provider {family}` if {name} is "
                   f"{family}'s", err=True)

    save(app, given)
    now = current(app, wanted)  # what config.yaml now says
    click.echo(f"model: {name}" + (f" (provider {now['provider']}, {now['api_mode']})" if now.get("provider") else ""))
    if now["problem"]:
        click.echo(f"{program()}: warning: {now['problem']}", err=True)


def save(app, given: dict) -> None:
    """Write ``given`` (``model`` and those of ``provider``, ``base_url``, ``api_mode``, ``api_key_env`` not None;
    "" takes one out) into config.yaml, comments kept; hermes-agent's ``model: {default, provider, ...}`` block
    keeps its shape."""
    from plugins.config_command.edit import EditError, edit, get, path_of, set_key, unset_key

    def change(document):
        mapped = isinstance(get(document, "model"), dict)
        set_key(document, "model.default" if mapped else "model", given["model"])
        for key, value in given.items():
            if key != "model" and value == "":
                for where in (key, f"model.{key}") if mapped else (key,):
                    unset_key(document, where)
            elif key != "model" and value is not None:
                set_key(document, f"model.{key}" if mapped and get(document, key) is None else key, value)

    try:
        edit(path_of(app.config), change)
    except (EditError, OSError) as exc:
        raise Fail(f"config.yaml was not changed: {exc}") from None


def _plugin_providers(app) -> set:
    from kernel.hookspecs import MODEL_PROVIDERS

    return set(app.host.registry[MODEL_PROVIDERS])


@model.command("list")
@click.option("--provider", help="Another provider than config's (`hermes model` lists them).")
@click.option("--base-url", help="Another endpoint's URL.")
@click.option("--api-mode", help="chat_completions, codex_responses, anthropic_messages, ...")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def list_models(app, provider, base_url, api_mode, as_json):
    """The models a provider offers, asked of its API (GET /models) with its key: one name a line."""
    from kernel.types import ProviderConfig

    other = {"base_url": "", "api_mode": "", "api_key_env": ""} if provider or base_url else {}  # not config's
    given = {**other, **{k: v for k, v in (("provider", provider), ("base_url", base_url), ("api_mode", api_mode))
                         if v is not None}}
    found = models_of(app, ProviderConfig.configured(app.config, **given))
    if as_json:
        echo_json({k: found[k] for k in ("provider", "base_url", "models")})
        return
    click.echo("\n".join(found["models"]) if found["models"] else f"{found['label']} lists no models")


def models_of(app, pconf) -> dict:
    """``{"models", "provider", "base_url", "label"}``: the names ``pconf``'s provider lists (its SDK's
    ``models.list()``), or :class:`Fail` with why not (exit 2: it cannot be reached as configured)."""
    from kernel.agent import Agent, AgentError
    from kernel.types import ProviderError
    from plugins_providers.errors import classify

    pconf = pconf.with_(model=pconf.model or "-")  # no model is needed to list them
    try:
        agent = Agent(app.host, toolsets=[], platform="cli")
    except AgentError as exc:
        raise Fail(str(exc), 2) from None
    try:
        try:
            found = agent.provider_for(pconf)
        except ProviderError as exc:
            raise Fail(exc.message, 2) from None
        target = getattr(found, "target", None)  # the built-in providers' (where, with which key)
        label = getattr(target, "provider", "") or pconf.provider or getattr(target, "base_url", "") or "the provider"
        client = getattr(found, "client", None)
        if client is None or not hasattr(client, "models"):
            raise Fail(f"the {agent.caller.modes.get(pconf) or 'chosen'} provider cannot list its models")
        try:
            names = sorted(str(m.id) for m in client.models.list())
        except Exception as exc:  # noqa: BLE001 - the SDK's, said in one line as a model call's would be
            said = classify(exc, provider=label, secrets=[getattr(found, "_key", "") or ""]).message
            raise Fail(f"cannot list the models of {label}: {said}") from None
    finally:
        agent.close()
    return {"models": names, "provider": getattr(target, "provider", ""), "base_url": getattr(target, "base_url", ""),
            "label": label}
