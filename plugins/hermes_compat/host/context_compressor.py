"""``agent.context_compressor``: hermes-agent's built-in compressor, as the
base class (or the delegate) of a plugin's context engine.

Published context engines subclass ``ContextCompressor`` and override a few
of its seams (the tool-result prune, ``update_model``, ``name``), or build
one and delegate to it. Here, what such an engine overrides is called where
hermes-agent calls it, and what it inherits is the kernel's compressor
(:class:`plugins.compressor.Compressor`): its head and tail protection, its
summary of the middle through the agent's model (or the deterministic
summary without one), its counters.

``compress`` runs hermes' two phases: first ``self._prune_old_tool_results``
(old tool results longer than ``min_prune_chars`` become a one-line note);
when that is not enough, or the compression is forced, the kernel
summarises the middle. ``prune_tool_results_only`` is the same prune alone,
gated on ``proactive_prune_tokens`` as in hermes-agent (off by default).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from kernel.messages import text_of
from plugins.hermes_compat import state
from plugins.hermes_compat.host.context_engine import ContextEngine

__all__ = ["ContextCompressor", "MINIMUM_CONTEXT_LENGTH", "_retire_stale_tool_result_images"]

MINIMUM_CONTEXT_LENGTH = 64_000
_PRUNE_MIN_CHARS = 200
_IMAGE_NOTE = "[image from an earlier tool result removed to save context]"


def _is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") in ("image_url", "image", "input_image")


def _retire_stale_tool_result_images(messages: List[Dict[str, Any]]) -> int:
    """Replace the images of every tool result but the newest one that has
    images with a note, in place; returns how many results were rewritten."""
    with_images = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "tool"
                   and isinstance(m.get("content"), list) and any(_is_image(p) for p in m["content"])]
    for i in with_images[:-1]:
        messages[i] = {**messages[i], "content": [p if not _is_image(p) else {"type": "text", "text": _IMAGE_NOTE}
                                                  for p in messages[i]["content"]]}
    return max(0, len(with_images) - 1)


class ContextCompressor(ContextEngine):
    """hermes-agent's default context engine, served by the kernel's compressor."""

    def __init__(self, model: str = "", threshold_percent: float = 0.50, protect_first_n: int = 3,
                 protect_last_n: int = 20, summary_target_ratio: float = 0.20, quiet_mode: bool = False,
                 summary_model_override: Optional[str] = None, base_url: str = "", api_key: str = "",
                 config_context_length: Optional[int] = None, provider: str = "", api_mode: str = "",
                 abort_on_summary_failure: bool = False, max_tokens: Optional[int] = None,
                 proactive_prune_tokens: int = 0, proactive_prune_min_result_chars: int = 8000,
                 minimum_context_length: Optional[int] = MINIMUM_CONTEXT_LENGTH, **options: Any):
        self.model, self.base_url, self.api_key, self.provider, self.api_mode = model, base_url, api_key, provider, api_mode
        self.threshold_percent = float(threshold_percent)
        self.protect_first_n, self.protect_last_n = int(protect_first_n), int(protect_last_n)
        self.summary_target_ratio = max(0.10, min(float(summary_target_ratio), 0.80))  # hermes-agent's bounds
        self.quiet_mode = bool(quiet_mode)
        self.summary_model_override, self.abort_on_summary_failure = summary_model_override, abort_on_summary_failure
        self.max_tokens, self.config_context_length = max_tokens, config_context_length
        self.proactive_prune_tokens = int(proactive_prune_tokens or 0)
        self.proactive_prune_min_result_chars = int(proactive_prune_min_result_chars)
        self.minimum_context_length = minimum_context_length or MINIMUM_CONTEXT_LENGTH
        self.options = dict(options)  # hermes' other tuning knobs: accepted, not used
        self.last_prompt_tokens = self.last_completion_tokens = self.last_total_tokens = 0
        self.compression_count = 0
        self.context_length = int(config_context_length or 0) or self._window(model)
        self._set_threshold()
        self._session_id = ""

    @property
    def name(self) -> str:
        return "compressor"

    # -- model and usage
    @staticmethod
    def _window(model: str) -> int:
        from plugins.compressor import context_window

        return context_window(model or "")

    def update_model(self, model: str, context_length: int = 0, base_url: str = "", api_key: Any = "",
                     provider: str = "", api_mode: str = "", max_tokens: Optional[int] = None) -> None:
        self.model, self.base_url, self.api_key, self.provider, self.api_mode = model, base_url, api_key, provider, api_mode
        self.context_length = int(context_length or self.config_context_length or 0) or self._window(model)
        self._set_threshold()
        if max_tokens is not None:
            self.max_tokens = max_tokens

    def _set_threshold(self) -> None:
        """The trigger and, as hermes-agent derives it, the tail's token budget
        (a share of the trigger) that ``compress`` protects from the prune."""
        self.threshold_tokens = int(self.context_length * self.threshold_percent)
        self.tail_token_budget = int(self.threshold_tokens * self.summary_target_ratio)

    def update_from_response(self, usage: Dict[str, Any]) -> None:
        from plugins.compressor import usage_tokens

        self.last_prompt_tokens, self.last_completion_tokens, self.last_total_tokens = usage_tokens(usage)

    def should_compress(self, prompt_tokens: Optional[int] = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return bool(self.threshold_tokens) and int(tokens or 0) >= self.threshold_tokens

    def should_compress_preflight(self, messages: List[Dict[str, Any]]) -> bool:
        from plugins.compressor import estimate_tokens

        return bool(self.threshold_tokens) and estimate_tokens(messages) >= self.threshold_tokens

    def has_content_to_compress(self, messages: List[Dict[str, Any]]) -> bool:
        from plugins.compressor import _without_system, plan

        return plan(_without_system(list(messages))[1], self.protect_first_n, self.protect_last_n) is not None

    def get_status(self) -> Dict[str, Any]:
        return {"last_prompt_tokens": self.last_prompt_tokens, "threshold_tokens": self.threshold_tokens,
                "context_length": self.context_length, "compression_count": self.compression_count,
                "usage_percent": round(100 * self.last_prompt_tokens / self.context_length, 1)
                if self.context_length else 0}

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        self._session_id = session_id or ""

    # -- phase 1: the tool-result prune (a seam subclasses override)
    def _prune_boundary(self, result: List[Dict[str, Any]], protect_tail_count: int,
                        protect_tail_tokens: Optional[int]) -> int:
        """The first index of the protected tail: the last ``protect_tail_count``
        messages, or as many as fit ``protect_tail_tokens`` when that is given."""
        boundary = len(result) - max(0, int(protect_tail_count))
        if protect_tail_tokens:
            from plugins.compressor import message_chars

            used, i = 0, len(result)
            while i > 0 and used + message_chars(result[i - 1]) // 4 <= protect_tail_tokens:
                i -= 1
                used += message_chars(result[i]) // 4
            boundary = min(boundary, i) if i < len(result) else boundary
        return max(0, boundary)

    def _prune_old_tool_results(self, messages: List[Dict[str, Any]], protect_tail_count: int,
                                protect_tail_tokens: Optional[int] = None,
                                min_prune_chars: int = _PRUNE_MIN_CHARS) -> tuple:
        """Old tool results (before the protected tail) longer than
        ``min_prune_chars`` become a one-line note; the calls stay as they
        were. Returns ``(messages, how many were pruned)``."""
        out, count = list(messages), 0
        for i in range(self._prune_boundary(out, protect_tail_count, protect_tail_tokens)):
            msg = out[i]
            if not isinstance(msg, dict) or msg.get("role") != "tool":
                continue
            text = text_of(msg.get("content"))
            if len(text) <= min_prune_chars:
                continue
            first = " ".join(text.split())[:120]
            out[i] = {**msg, "content": f"[tool result pruned to save context: {len(text)} chars; it began: {first}]"}
            count += 1
        return out, count

    def prune_tool_results_only(self, messages: List[Dict[str, Any]], current_tokens: Optional[int] = None) -> tuple:
        """The prune alone, when ``proactive_prune_tokens`` is set and reached."""
        from plugins.compressor import estimate_tokens

        tokens = current_tokens if current_tokens is not None else estimate_tokens(messages)
        if self.proactive_prune_tokens <= 0 or tokens < self.proactive_prune_tokens:
            return messages, 0
        return self._prune_old_tool_results(messages, protect_tail_count=self.protect_last_n, protect_tail_tokens=None,
                                            min_prune_chars=self.proactive_prune_min_result_chars)

    # -- phase 2: the kernel's summary of the middle
    def compress(self, messages: List[Dict[str, Any]], current_tokens: Optional[int] = None,
                 focus_topic: Optional[str] = None, force: bool = False, memory_context: str = "",
                 **kwargs: Any) -> List[Dict[str, Any]]:
        from plugins.compressor import estimate_tokens

        pruned, count = self._prune_old_tool_results(list(messages), protect_tail_count=self.protect_last_n,
                                                     protect_tail_tokens=self.tail_token_budget)
        if count and not force and self.threshold_tokens and estimate_tokens(pruned) < self.threshold_tokens:
            out = pruned  # the prune was enough: no summary call
        else:
            notes = [n for n in (memory_context, f"Focus: {focus_topic}" if focus_topic else "") if n]
            out = self._kernel().compress(pruned, agent=state.ENGINE_AGENT.get(),
                                          reason="forced" if force else "preflight", notes=notes)
        self.compression_count += 1
        self.last_prompt_tokens = 0  # stale until the next real response
        return out

    def _kernel(self):
        """The kernel's compressor with this engine's settings (built per call:
        the agent, model and window may have changed)."""
        from hermes.host.config import Config
        from plugins.compressor import Compressor

        agent = state.ENGINE_AGENT.get()
        config = getattr(agent, "config", None) or Config({})
        kernel = Compressor(config, model=self.model, agent=agent)
        kernel.protect_first_n, kernel.protect_last_n = self.protect_first_n, self.protect_last_n
        kernel.threshold_percent = self.threshold_percent
        kernel.context_length, kernel.threshold_tokens = self.context_length, self.threshold_tokens
        return kernel
