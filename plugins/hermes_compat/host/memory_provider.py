"""``agent.memory_provider``: the base class of hermes memory providers.

Same abstract methods and defaults as hermes-agent 0.19, so a subclass that
implements the abstract ones can be instantiated here too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Dict, List, Optional


class MemoryProvider(ABC):
    """An external memory store driven by the agent's memory manager."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Short identifier, the value of ``memory.provider``."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether config and dependencies are present (no network)."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs) -> None:
        """Prepare for a session; kwargs hold ``hermes_home`` and ``platform``."""

    @abstractmethod
    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        """Tool schemas ``{"name", "description", "parameters"}``."""

    def system_prompt_block(self) -> str:
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        return None

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: Optional[List[Dict[str, Any]]] = None) -> None:
        return None

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        raise NotImplementedError(f"{type(self).__name__} does not handle tool {tool_name!r}")

    def shutdown(self) -> None:
        return None

    def on_turn_start(self, turn_number: int, message: str, **kwargs) -> None:
        return None

    def on_session_end(self, messages: List[Dict[str, Any]]) -> None:
        return None

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          **kwargs) -> None:
        return None

    def on_pre_compress(self, messages: List[Dict[str, Any]]) -> str:
        return ""

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs) -> None:
        return None

    def get_config_schema(self) -> List[Dict[str, Any]]:
        return []

    def save_config(self, values: Dict[str, Any], hermes_home: str) -> None:
        return None

    def on_memory_write(self, action: str, target: str, content: str, metadata: Optional[dict] = None) -> None:
        return None

    def backup_paths(self) -> List[str]:
        return []
