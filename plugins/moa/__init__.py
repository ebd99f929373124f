"""Built-in plugin moa: a turn on which other models advise the acting one (hermes-agent's Mixture of Agents).

A preset (``moa.presets.NAME``) names reference models and, optionally, an aggregator. On a turn run through it,
each model call of the conversation first asks the reference models, side by side and without tools, what they make
of the conversation so far; their answers go at the end of the acting model's request (never into the history), and
the acting model (the aggregator, or the conversation's model) decides and calls the tools. ``fanout: user_turn``
asks them once per turn instead of at every call.

In chat, ``/moa PROMPT`` sends one prompt through ``moa.default_preset``; ``/moa --use NAME`` runs every turn of
this chat through a preset, ``/moa --off`` stops it, ``/moa`` alone lists the presets. ``moa.active_preset`` does
the same for every conversation (``hermes run`` too). A preset's entry (hermes-agent's shape)::

    moa:
      presets:
        default:
          reference_models: [{provider: openrouter, model: deepseek/deepseek-v4-pro}, {model: gpt-5.5}]
          aggregator: {provider: openrouter, model: anthropic/claude-opus-4.8}   # optional
          max_tokens: 4096               # the aggregator's answer
          reference_max_tokens: 600      # each reference's (optional)
          fanout: per_iteration          # or user_turn

A model slot takes ``model``, ``provider``, ``base_url``, ``api_mode``, ``api_key_env`` as ``auxiliary.*`` blocks do;
a slot with only a model uses the conversation's endpoint. ``moa.save_traces`` writes each consultation (what the
references were asked and answered) to ``moa-traces/SESSION.jsonl`` of the data folder, or ``moa.trace_dir``."""

from __future__ import annotations

from kernel import hookimpl

TURN, NEXT, SESSION = "moa.turn", "moa.next", "moa.session"  # agent.state: this turn's preset, the next's, the chat's


@hookimpl
def register_config(declare):
    declare("moa.presets", dict, {}, "Mixture of Agents presets: {NAME: {reference_models: [{model, provider, ...}], "
            "aggregator: {...}, max_tokens, reference_max_tokens, fanout: per_iteration | user_turn, enabled}}")
    declare("moa.default_preset", str, "default", "the preset /moa PROMPT uses")
    declare("moa.active_preset", str, "", "a preset every turn runs through (empty: none; chat's /moa --use for one "
            "chat)")
    declare("moa.save_traces", bool, False, "write what the reference models were asked and answered to "
            "moa-traces/SESSION.jsonl of the data folder")
    declare("moa.trace_dir", str, "", "where moa.save_traces writes (empty: moa-traces in the data folder)")


@hookimpl(tryfirst=True)
def choose_provider(primary, agent):
    """As a turn starts: does it run through a preset (/moa's, the chat's, config's)? Its aggregator acts, if named."""
    name = agent.state.pop(NEXT, None) or agent.state.get(SESSION) or agent.config.get("moa.active_preset") or ""
    agent.state[TURN] = None
    if not name or agent.parent is not None:  # a subagent acts for its parent: no advisers of its own
        return None
    from plugins.moa.presets import PresetError, load  # here: a turn without a preset imports nothing

    try:
        preset = load(agent.config, name)
    except PresetError as exc:
        agent.emit("on_status", status="moa", detail=f"{exc}; this turn goes without advice")
        return None
    agent.state[TURN] = preset
    if preset.aggregator is None:
        return None
    from plugins.auxiliary import joined

    return joined(agent, preset.aggregator)


@hookimpl
def pre_api_request(call, agent):
    """A model call of a turn run through a preset: the references' advice goes at the end of its request."""
    preset = agent.state.get(TURN) if not call.aux_task else None
    if preset is None:
        return
    from plugins.moa.advice import advise

    advise(agent, preset, call)


@hookimpl
def on_session_end(agent):
    agent.state[TURN] = None


@hookimpl(optionalhook=True)  # the commands plugin's hook
def register_slash_commands(register, config):
    register("moa", _command, "PROMPT: one prompt with other models advising (Mixture of Agents); --use NAME, --off, "
             "or alone: the presets")


def _command(raw_args, agent):
    from plugins.moa.presets import command  # here: registering the command imports nothing

    return command(raw_args, agent)


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """Each preset: can it run (its slots, its numbers), and does the active one exist?"""
    presets = agent.config.get("moa.presets") or {}
    active = str(agent.config.get("moa.active_preset") or "")
    if not presets and not active:
        return None
    from plugins.doctor.hookspecs import FAIL, OK, Check
    from plugins.moa.presets import PresetError, describe, load

    checks = []
    for name in sorted({*(presets if isinstance(presets, dict) else ()), *([active] if active else [])}):
        try:
            checks.append(Check("moa", OK, describe(load(agent.config, name))))
        except PresetError as exc:
            checks.append(Check("moa", FAIL, str(exc)))
    return checks
