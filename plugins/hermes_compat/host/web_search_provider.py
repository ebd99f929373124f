"""``agent.web_search_provider``: the base class of hermes web search backends (hermes-agent 0.21 and later).

The same abstract members and defaults, so a provider written for hermes-agent can be instantiated here; its
``search`` answers hermes' ``web_search`` tool and its ``extract`` ``web_extract`` when the config names it
(:func:`plugins.hermes_compat.web.backends`)."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import Any, Dict, List


def get_provider_env(name: str) -> str:
    """A provider's variable (hermes-compat has read the data folder's ``.env`` into the environment already)."""
    return (os.environ.get(name) or "").strip()


class WebSearchProvider(ABC):
    """A web search (and extract) backend, selected by ``web.search_backend``."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The name ``web.search_backend`` selects (``searxng``, ``brave-free``, ...)."""

    @property
    def display_name(self) -> str:
        return self.name

    @abstractmethod
    def is_available(self) -> bool:
        """Whether keys and packages are here (no request)."""

    def supports_search(self) -> bool:
        return True

    def supports_extract(self) -> bool:
        return False

    def search(self, query: str, limit: int = 5) -> Dict[str, Any]:
        """``{"success": True, "data": {"web": [{"title", "url", "description", "position"}]}}`` or
        ``{"success": False, "error": str}``."""
        raise NotImplementedError(f"{self.name} does not search")

    def extract(self, urls: List[str], **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self.name} does not extract")

    def get_setup_schema(self) -> Dict[str, Any]:
        return {"name": self.display_name, "env_vars": []}
