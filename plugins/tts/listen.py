"""Speech to text: what a voice note says, for the gateway (hermes-agent's ``stt`` block). ``stt.provider: openai``
sends it to an OpenAI-compatible transcription endpoint (``POST /v1/audio/transcriptions``: OpenAI's Whisper, a
local whisper server's: ``stt.openai.base_url``) with ``stt.openai.model``; its key in ``VOICE_TOOLS_OPENAI_KEY`` or
``OPENAI_API_KEY``. hermes-agent's default, ``local`` (faster-whisper in its process), is not here."""

from __future__ import annotations

from typing import Any


def why_not(config: Any) -> str:
    """Why voice notes are not transcribed here ("" when they are)."""
    from plugins.tts import _key

    if not config.get("stt.enabled", True):
        return "voice notes are not transcribed (stt.enabled: false)"
    if str(config.get("stt.provider", "local") or "").strip() != "openai":
        return ("voice notes are not transcribed here: set stt.provider: openai (a Whisper endpoint, "
                "OPENAI_API_KEY)")
    return "" if _key() else "voice notes are not transcribed: stt.provider openai needs OPENAI_API_KEY"


def transcribe(audio: bytes, filename: str, config: Any) -> str:
    """What ``audio`` says; ``ValueError`` with one line when it cannot be had."""
    import openai

    from plugins.tts import _key
    from plugins.tool_args import endpoint_error

    if why := why_not(config):
        raise ValueError(why)
    client = openai.OpenAI(api_key=_key(), base_url=config.get("stt.openai.base_url", "") or None, max_retries=1,
                           timeout=120)
    try:
        said = client.audio.transcriptions.create(model=config.get("stt.openai.model", "whisper-1") or "whisper-1",
                                                  file=(filename, audio))
    except openai.APIError as exc:
        raise ValueError(str(endpoint_error("transcription", "transcription", exc)).partition(": ")[2]) from None
    return str(getattr(said, "text", "") or "").strip()
