"""The presets of config.yaml's ``moa.presets``, read into :class:`Preset`, and chat's ``/moa`` command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

FANOUTS = ("per_iteration", "user_turn")


class PresetError(ValueError):
    """A preset that cannot run, in one line that says how to mend it."""


@dataclass(frozen=True)
class Preset:
    name: str
    references: tuple  # ProviderConfigs (partial: a slot with only a model takes the conversation's endpoint)
    aggregator: Optional[Any]  # a ProviderConfig, or None: the conversation's model acts
    max_tokens: Optional[int]
    reference_max_tokens: Optional[int]
    fanout: str


def _slot(raw: Any, where: str) -> Any:
    from kernel.types import ProviderConfig
    from plugins.auxiliary import FIELDS

    if isinstance(raw, str) and raw.strip():
        raw = {"model": raw}  # a bare model name
    if not isinstance(raw, dict):
        raise PresetError(f"{where}: expected a mapping with a model (model, provider, base_url ...), got {raw!r}")
    bad = [f"{field}={raw[field]!r}" for field in FIELDS if field in raw and not isinstance(raw[field], str)]
    if bad:
        raise PresetError(f"{where}: {', '.join(bad)}: expected strings")
    fields = {field: raw[field].strip() for field in FIELDS if str(raw.get(field) or "").strip()}
    if not fields.get("model"):
        raise PresetError(f"{where}: names no model")
    return ProviderConfig(**fields)


def _count(raw: Any, where: str) -> Optional[int]:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise PresetError(f"{where}: expected a whole number of at least 1, got {raw!r}")
    return raw


def load(config: Any, name: str) -> Preset:
    """The preset ``name`` of ``moa.presets``, checked: :class:`PresetError` says what is wrong with it."""
    from kernel.hints import did_you_mean

    presets = config.get("moa.presets") or {}
    raw = presets.get(name) if isinstance(presets, dict) else None
    where = f"moa.presets.{name}"
    if raw is None:
        known = sorted(presets) if isinstance(presets, dict) else []
        raise PresetError(f"there is no Mixture of Agents preset '{name}'{did_you_mean(name, known)}: "
                          + (f"known: {', '.join(known)}" if known else f"add one as {where} in config.yaml "
                             "(reference_models: [{model: ...}])"))
    if not isinstance(raw, dict):
        raise PresetError(f"{where}: expected a mapping (reference_models, aggregator ...), got {raw!r}")
    if raw.get("enabled", True) is False:
        raise PresetError(f"{where} is turned off (enabled: false)")
    slots = raw.get("reference_models")
    slots = [slots] if isinstance(slots, (dict, str)) else slots
    if not isinstance(slots, list) or not slots:
        raise PresetError(f"{where}.reference_models: expected a list of models to consult, got {slots!r}")
    fanout = str(raw.get("fanout") or "per_iteration")
    if fanout not in FANOUTS:
        raise PresetError(f"{where}.fanout: expected per_iteration or user_turn, got {fanout!r}")
    aggregator = raw.get("aggregator")
    return Preset(name, tuple(_slot(s, f"{where}.reference_models[{i}]") for i, s in enumerate(slots)),
                  _slot(aggregator, f"{where}.aggregator") if aggregator else None,
                  _count(raw.get("max_tokens"), f"{where}.max_tokens"),
                  _count(raw.get("reference_max_tokens"), f"{where}.reference_max_tokens"), fanout)


def describe(preset: Preset) -> str:
    acting = preset.aggregator.label() if preset.aggregator else "the conversation's model"
    return (f"{preset.name}: {', '.join(r.label() for r in preset.references)} advise, {acting} acts"
            f" ({preset.fanout.replace('_', ' ')})")


def command(raw_args: str, agent: Any):
    """``/moa PROMPT`` | ``/moa --use NAME`` | ``/moa --off`` | ``/moa``."""
    from plugins.moa import NEXT, SESSION

    config, words = agent.config, raw_args.split()
    if words[:1] == ["--off"]:
        agent.state.pop(SESSION, None)
        return "Mixture of Agents is off for this chat" + (
            f" (moa.active_preset '{config.get('moa.active_preset')}' still applies: set it empty to stop it)"
            if config.get("moa.active_preset") else "")
    if words[:1] == ["--use"]:
        if len(words) != 2:
            return "usage: /moa --use NAME (the presets: /moa)"
        try:
            preset = load(config, words[1])
        except PresetError as exc:
            return str(exc)
        agent.state[SESSION] = preset.name
        return f"every turn of this chat now runs through {describe(preset)}"
    if not raw_args.strip():
        presets = config.get("moa.presets") or {}
        if not isinstance(presets, dict) or not presets:
            return ("no Mixture of Agents presets: add one in config.yaml as moa.presets.NAME "
                    "(reference_models: [{model: ...}], aggregator: {model: ...})")
        lines = []
        for name in sorted(presets):
            try:
                lines.append("  " + describe(load(config, name)))
            except PresetError as exc:
                lines.append(f"  {name}: cannot run: {exc}")
        now = agent.state.get(SESSION) or config.get("moa.active_preset")
        lines.append(f"every turn runs through {now}" if now else "usage: /moa PROMPT, /moa --use NAME, /moa --off")
        return "\n".join(lines)
    name = str(config.get("moa.default_preset") or "default")
    try:
        preset = load(config, name)
    except PresetError as exc:
        return str(exc)
    agent.state[NEXT] = preset.name
    return {"reply": f"asking through {describe(preset)}", "send": raw_args.strip()}
