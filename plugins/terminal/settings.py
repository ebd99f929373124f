"""The chat's settings, each for this chat or (``--global``) in config.yaml too: the model, how hard it thinks, fast
mode, what a line typed during a turn does, the personality, the tool lines, the prompt's time, approvals."""

from __future__ import annotations

from plugins.terminal.recap import clip


def model(chat, args):
    """``/model [NAME] [--provider NAME] [--global]`` (hermes-agent's): the next turn starts on it, its provider built
    (and checked) now; ``--global`` saves it in config.yaml too, as ``hermes model set`` does."""
    agent, words, name, provider, everywhere = chat.agent, args.split(), None, None, False
    while words:
        word = words.pop(0)
        if word in ("--global", "--session"):
            everywhere = everywhere or word == "--global"
        elif word == "--provider" and words:
            provider = words.pop(0)
        elif word.startswith("--") or name is not None:
            return "usage: /model [NAME] [--provider NAME] [--global]"
        else:
            name = word
    if name or provider:
        from kernel.types import ProviderError

        change = {"model": name} if name else {}  # another provider: its own endpoint, API and key
        change.update(provider=provider, base_url="", api_mode="", api_key_env="") if provider else None
        wanted = agent.primary.with_(**change)
        try:
            agent.provider_for(wanted)
        except ProviderError as exc:
            return f"cannot use {wanted.label()}: {exc.message}"
        agent.primary = agent.provider_config = wanted
        if everywhere:
            return f"model: {wanted.label()} ({_saved_model(chat, change)})"
    return f"model: {agent.provider_config.label()}"


def _saved_model(chat, change: dict) -> str:
    from hermes.cli.app import Fail

    try:
        from plugins.model_command.cli import save
    except ImportError:
        return "this chat; config.yaml was not changed: no model command plugin here"
    try:
        save(chat.app, {"model": chat.agent.primary.model, **{k: v for k, v in change.items() if k != "model"}})
    except Fail as exc:
        return f"this chat; {exc.format_message()}"
    return "config.yaml too"


def reasoning(chat, args):
    """How hard the model thinks (agent.reasoning_effort: for this chat, or with --global in config.yaml too) and
    whether its reasoning shows (hermes-agent's /reasoning)."""
    from plugins.terminal.console import REASONING_FULL
    from plugins_providers.reasoning import KEY, LEVELS, SPELLINGS

    console, config = chat.console, chat.agent.config
    words = args.lower().split()
    if words in (["on"], ["show"], ["off"], ["hide"]):
        console.show_reasoning = words[0] in ("on", "show")
        return "the model's reasoning is " + ("shown" if console.show_reasoning else "hidden")
    if words in (["full"], ["clamp"]):  # hermes-agent's: reasoning that came whole (not streamed), all of it or not
        config.overrides[REASONING_FULL] = words == ["full"]
        return "reasoning that comes whole is shown " + ("in full" if words == ["full"] else "up to 10 lines")
    scope = [w for w in words if w in ("--global", "--session")]
    level = [w for w in words if w not in scope]
    if not words:
        shown = "shown" if console.show_reasoning else "hidden"
        return f"reasoning effort {_effort(chat.agent)}\nthe reasoning is {shown} (/reasoning LEVEL [--global], " \
               "/reasoning show|hide|full|clamp)"
    if len(level) != 1 or level[0] not in (*LEVELS, *SPELLINGS):
        return f"usage: /reasoning [{'|'.join(LEVELS)}] [--global] or /reasoning show|hide|full|clamp"
    return f"reasoning effort ({_saved(config, KEY, level[0], '--global' in scope)}) {_effort(chat.agent)}"


def _saved(config, key: str, value, everywhere: bool) -> str:
    """``key`` set for this chat, and (``--global``) in config.yaml too, comments kept: where it was set."""
    config.overrides[key] = value
    if not everywhere:
        return "this chat"
    from plugins.config_command.edit import EditError, edit, path_of, set_key

    try:
        edit(path_of(config), lambda document: set_key(document, key, value))
    except (EditError, OSError) as exc:
        return f"this chat; config.yaml was not changed: {exc}"
    return "config.yaml"


def fast(chat, args):
    """Priority processing (agent.service_tier fast: OpenAI's, or Claude Opus 4.6's fast mode) for this chat, or
    with --global in config.yaml too (hermes-agent's /fast)."""
    from plugins_providers.serving import SERVICE_TIER, tier_of

    words, config = args.lower().split(), chat.agent.config
    wanted = [w for w in words if w != "--global"]
    if wanted not in ([], ["on"], ["off"]) or not wanted and words:
        return "usage: /fast [on|off] [--global]"
    where = f"({_saved(config, SERVICE_TIER, 'fast' if wanted == ['on'] else 'normal', '--global' in words)}) " \
        if wanted else ""
    tier = tier_of(config.get(SERVICE_TIER))
    if tier != "priority":
        return f"fast mode {where}off ({SERVICE_TIER}: {config.get(SERVICE_TIER) or 'standard'})"
    return f"fast mode {where}on: OpenAI's own API is asked for priority processing (Claude Opus 4.6 on Anthropic's " \
           "for its fast mode)"


def busy(chat, args):
    """What a line typed during a turn does (display.busy_input_mode: for this chat, or with --global in config.yaml
    too), hermes-agent's /busy."""
    from plugins.terminal.busy import MEANS, MODE, MODES

    words, config = args.lower().split(), chat.agent.config
    wanted = [w for w in words if w != "--global"]
    if len(wanted) > 1 or wanted and wanted[0] not in (*MODES, "status") or not wanted and words:
        return f"usage: /busy [{'|'.join(MODES)}] [--global]"
    where = f" ({_saved(config, MODE, wanted[0], '--global' in words)})" if wanted and wanted[0] != "status" else ""
    mode = config.get(MODE)
    return f"busy input mode {mode}{where}: a line typed during a turn {MEANS[mode]}"


def _effort(agent) -> str:
    """The chat's reasoning effort and what its model gets for it."""
    from kernel.types import ProviderError
    from plugins_providers.reasoning import for_agent, level_for, said

    pconf = agent.provider_config
    try:
        level, carried = for_agent(agent, pconf)
    except ProviderError:
        return level_for(agent.config, pconf.model)
    return said(level, carried, pconf.model) if level else "the model's own"


def personalities(config) -> dict:
    """The named prompts chat's ``/personality`` offers: config.yaml's ``personalities`` (hermes-agent's older
    ``agent.personalities`` too), their names in lower case."""
    from plugins.terminal import PERSONALITIES

    found = {}
    for key in ("agent.personalities", PERSONALITIES):
        value = config.get(key)
        found.update({str(name).lower(): prompt for name, prompt in (value.items() if isinstance(value, dict) else ())
                      if personality_prompt(prompt)})
    return found


def personality_prompt(value) -> str:
    """A personality's prompt: its text, or hermes-agent's ``{system_prompt, tone, style}`` as lines."""
    if isinstance(value, dict):
        parts = (value.get("system_prompt"), value.get("tone") and f"Tone: {value['tone']}",
                 value.get("style") and f"Style: {value['style']}")
        return "\n".join(str(part) for part in parts if part)
    return value.strip() if isinstance(value, str) else ""


def personality(chat, args):
    """hermes-agent's /personality: a named prompt of ``personalities`` (config.yaml) is the identity from now on,
    saved there as agent.system_prompt; ``none`` goes back to the configured identity. The chat goes on in a new
    session linked to this one, so the prompt a session was sent with stays what its store says."""
    from plugins.terminal import PERSONALITIES

    agent, name = chat.agent, args.strip().lower()
    named = personalities(agent.config)
    if not name:
        if not named:
            return f"no personalities: add them to config.yaml as {PERSONALITIES}: {{NAME: PROMPT}}"
        rows = [("none", "the identity as configured")] + [(n, clip(" ".join(personality_prompt(v).split()), 60))
                                                          for n, v in named.items()]
        width = max(len(n) for n, _ in rows)
        return "\n".join([*(f"{n:<{width}}  {text}" for n, text in rows), "usage: /personality NAME"])
    if name not in named and name not in ("none", "default", "neutral"):
        from kernel.hints import did_you_mean

        return f"no personality '{name}'{did_you_mean(name, named)}; there are: {', '.join(['none', *named])}"
    prompt = personality_prompt(named[name]) if name in named else ""
    where = _saved(agent.config, "agent.system_prompt", prompt, everywhere=True)
    where = "saved in config.yaml as agent.system_prompt" if where == "config.yaml" else where
    if agent.messages:
        agent.rotate_session("personality")
    else:
        agent.new_session()  # nothing said yet: its system prompt is made with the first turn
    return f"personality {'none' if not prompt else name} ({where}); the chat goes on in session {agent.session_id}"


def verbose(chat, args):
    """hermes-agent's /verbose: the tool calls shown, off -> new -> all -> verbose -> off, for this chat."""
    from plugins.terminal.console import PROGRESS, TOOL_PROGRESS, progress

    mode = PROGRESS[(PROGRESS.index(progress(chat.agent)) + 1) % len(PROGRESS)]
    chat.agent.config.overrides[TOOL_PROGRESS] = mode
    return "tool progress: " + {"off": "off (the answer alone)", "new": "new (a tool called again in a row gets no "
                                "line)", "all": "all (every call)", "verbose": "verbose (each call's arguments whole, "
                                "and its result)"}[mode]


def timestamps(chat, args):
    """hermes-agent's /timestamps: the prompt says the time (display.timestamps), for this chat or --global."""
    from plugins.terminal.chat import TIMESTAMPS

    words, config = args.lower().split(), chat.agent.config
    wanted = [w for w in words if w != "--global"]
    if len(wanted) > 1 or wanted and wanted[0] not in ("on", "off", "status"):
        return "usage: /timestamps [on|off|status] [--global]"
    if wanted != ["status"]:
        on = wanted == ["on"] or not wanted and not config.get(TIMESTAMPS)
        return f"timestamps {'on' if on else 'off'} ({_saved(config, TIMESTAMPS, on, '--global' in words)})"
    return f"timestamps {'on' if config.get(TIMESTAMPS) else 'off'}"


def yolo(chat, args):
    """Approvals off for this chat, or back to what config says (hermes-agent's /yolo)."""
    overrides = chat.agent.config.overrides
    if args not in ("", "on", "off"):
        return "usage: /yolo [on|off] (no argument: switch)"
    if args == "on" or not args and overrides.get("approvals.mode") != "off":
        overrides["approvals.mode"] = "off"
        return "approvals are off in this chat: every command runs without asking (/yolo again asks again)"
    overrides.pop("approvals.mode", None)
    return f"approvals are back to config's: {chat.agent.config.get('approvals.mode', 'manual')}"
