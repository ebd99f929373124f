"""A hermes ``TTSProvider`` (``ctx.register_tts_provider``) as a backend of the tts plugin's ``text_to_speech``:
``tts.provider`` names it, and ``tts.voice``, ``tts.model``, ``tts.speed`` are what it is given, as in
hermes-agent."""

from __future__ import annotations

from pathlib import Path

from kernel.types import ToolError
from plugins.hermes_compat import state
from plugins.hermes_compat.bridge import call_plugin_callable


def backends(record: state.PluginRecord, agent) -> dict:
    """``{name: speak(text, path)}`` of the providers ``record`` registered."""
    return {str(provider.name): _speaker(provider, str(provider.name), agent.config)
            for provider in record.tts_providers}


def _speaker(provider, name: str, config):
    def speak(text: str, path: Path) -> Path:
        if not call_plugin_callable(provider.is_available):
            raise ToolError(f"text_to_speech: the {name} backend is not available (its key or package is missing)")
        written = call_plugin_callable(provider.synthesize, text, str(path), voice=config.get("tts.voice") or None,
                                       model=config.get("tts.model") or None, speed=float(config.get("tts.speed")),
                                       format=path.suffix[1:] or "mp3")
        return Path(written if isinstance(written, str) and written else path)

    return speak
