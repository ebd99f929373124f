"""A hermes ``WebSearchProvider`` (``ctx.register_web_search_provider``) as a backend of the web plugin's
``web_search`` tool: ``web.search_backend`` names it, as in hermes-agent."""

from __future__ import annotations

from kernel.types import ToolError
from plugins.hermes_compat import state
from plugins.hermes_compat.bridge import call_plugin_callable


def search_backends(record: state.PluginRecord) -> dict:
    """``{name: search(query, limit)}`` of the providers ``record`` registered that search."""
    backends = {}
    for provider in record.web_providers:
        name = str(getattr(provider, "name", "") or "")
        if name and call_plugin_callable(getattr(provider, "supports_search", lambda: True)):
            backends[name] = _searcher(provider, name)
    return backends


def _searcher(provider, name: str):
    def search(query: str, limit: int) -> list:
        if not call_plugin_callable(provider.is_available):
            raise ToolError(f"web_search: the {name} backend is not available (its key or package is missing)")
        found = call_plugin_callable(provider.search, query, limit=limit)
        if not isinstance(found, dict) or found.get("success") is False:
            why = found.get("error") if isinstance(found, dict) else f"it answered {type(found).__name__}"
            raise ToolError(f"web_search: {name}: {why or 'failed'}")
        rows = (found.get("data") or {}).get("web") if isinstance(found.get("data"), dict) else found.get("data")
        return [{"title": str(r.get("title") or ""), "url": str(r.get("url") or ""),
                 "description": str(r.get("description") or "")}
                for r in rows or [] if isinstance(r, dict) and r.get("url")]

    return search
