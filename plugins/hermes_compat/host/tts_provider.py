"""``agent.tts_provider``: the base class of hermes text-to-speech backends.

The same abstract members and defaults, so a provider written for hermes-agent can be instantiated here; its
``synthesize`` answers the tts plugin's ``text_to_speech`` when ``tts.provider`` names it
(:func:`plugins.hermes_compat.speech.backends`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Dict, Iterator, List, Optional

DEFAULT_OUTPUT_FORMAT = "mp3"


class TTSProvider(ABC):
    """A speech backend, selected by ``tts.provider``."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The name ``tts.provider`` selects (lowercase, no spaces)."""

    @property
    def display_name(self) -> str:
        return self.name.title()

    def is_available(self) -> bool:
        """Whether keys and packages are here (no request)."""
        return True

    def list_voices(self) -> List[Dict[str, Any]]:
        return []

    def list_models(self) -> List[Dict[str, Any]]:
        return []

    def get_setup_schema(self) -> Dict[str, Any]:
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}

    def default_model(self) -> Optional[str]:
        models = self.list_models()
        return models[0].get("id") if models else None

    def default_voice(self) -> Optional[str]:
        voices = self.list_voices()
        return voices[0].get("id") if voices else None

    @abstractmethod
    def synthesize(self, text: str, output_path: str, *, voice: Optional[str] = None, model: Optional[str] = None,
                   speed: Optional[float] = None, format: str = DEFAULT_OUTPUT_FORMAT, **extra: Any) -> str:
        """Write the audio of ``text`` to ``output_path`` (its folder exists) and return the path written."""

    def stream(self, text: str, *, voice: Optional[str] = None, model: Optional[str] = None, format: str = "opus",
               **extra: Any) -> Iterator[bytes]:
        raise NotImplementedError(f"TTS provider {self.name!r} does not stream")

    @property
    def voice_compatible(self) -> bool:
        return False
