"""``agent.context_engine``: the base class of hermes context engines."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Any, Dict, List, Optional

_SECRET = re.compile(r"(?i)\b(sk-[a-z0-9_\-]{8,}|(?:api[_-]?key|token|secret|password)\s*[:=]\s*\S+)")
_HEAD, _TAIL = 4000, 1500
MEMORY_CONTEXT_MAX_CHARS = 6000


def sanitize_memory_context(memory_context: str) -> str:
    """Redact obvious secrets and cap the text (head and tail kept)."""
    text = _SECRET.sub("[REDACTED]", str(memory_context or ""))
    if len(text) > MEMORY_CONTEXT_MAX_CHARS:
        text = text[:_HEAD] + "\n[... truncated ...]\n" + text[-_TAIL:]
    return text


class ContextEngine(ABC):
    """Decides when and how the history is compacted."""

    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    last_total_tokens: int = 0
    threshold_tokens: int = 0
    context_length: int = 0
    compression_count: int = 0
    threshold_percent: float = 0.75
    protect_first_n: int = 3
    protect_last_n: int = 6

    @property
    @abstractmethod
    def name(self) -> str:
        """The value of ``context.engine`` that selects this engine."""

    @abstractmethod
    def update_from_response(self, usage: Dict[str, Any]) -> None:
        """Record the usage of the last model call."""

    @abstractmethod
    def should_compress(self, prompt_tokens: Optional[int] = None) -> bool:
        """Whether to compact now."""

    @abstractmethod
    def compress(self, messages: List[Dict[str, Any]], current_tokens: Optional[int] = None,
                 focus_topic: Optional[str] = None, force: bool = False,
                 memory_context: str = "") -> List[Dict[str, Any]]:
        """Return the compacted message list."""

    def should_compress_preflight(self, messages: List[Dict[str, Any]]) -> bool:
        return False

    def should_defer_preflight_to_real_usage(self, rough_tokens: int) -> bool:
        return False

    def has_content_to_compress(self, messages: List[Dict[str, Any]]) -> bool:
        return True

    def on_session_start(self, session_id: str, **kwargs) -> None:
        return None

    def on_session_end(self, session_id: str, messages: List[Dict[str, Any]]) -> None:
        return None

    def on_session_reset(self) -> None:
        self.last_prompt_tokens = self.last_completion_tokens = self.last_total_tokens = 0
        self.compression_count = 0

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return []

    def handle_tool_call(self, name: str, args: Dict[str, Any], **kwargs) -> str:
        import json

        return json.dumps({"error": f"context engine {self.name!r} has no tool {name!r}"})

    def get_status(self) -> Dict[str, Any]:
        pct = (self.last_prompt_tokens / self.context_length * 100) if self.context_length else 0.0
        return {
            "last_prompt_tokens": self.last_prompt_tokens,
            "threshold_tokens": self.threshold_tokens,
            "context_length": self.context_length,
            "usage_percent": round(pct, 1),
            "compression_count": self.compression_count,
        }

    def update_model(self, model: str, context_length: int, base_url: str = "", api_key: str = "",
                     provider: str = "", api_mode: str = "") -> None:
        self.context_length = int(context_length or 0)
        self.threshold_tokens = int(self.context_length * self.threshold_percent)
