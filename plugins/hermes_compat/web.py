"""A hermes ``WebSearchProvider`` (``ctx.register_web_search_provider``) as a backend of the web plugin's tools:
``web.search_backend`` and ``web.extract_backend`` name it, as in hermes-agent."""

from __future__ import annotations

from kernel.types import ToolError
from plugins.hermes_compat import state
from plugins.hermes_compat.bridge import call_plugin_callable


def backends(record: state.PluginRecord, kind: str) -> dict:
    """``{name: search(query, limit)}`` (``kind`` "search") or ``{name: extract(url)}`` ("extract") of the
    providers ``record`` registered that do it."""
    found, default = {}, lambda: kind == "search"  # hermes' defaults: every provider searches, none extracts
    for provider in record.web_providers:
        name = str(getattr(provider, "name", "") or "")
        if name and call_plugin_callable(getattr(provider, f"supports_{kind}", default)):
            found[name] = (_searcher if kind == "search" else _extractor)(provider, name)
    return found


def _available(provider, name: str, tool: str) -> None:
    if not call_plugin_callable(provider.is_available):
        raise ToolError(f"{tool}: the {name} backend is not available (its key or package is missing)")


def _extractor(provider, name: str):
    def extract(url: str) -> dict:
        _available(provider, name, "web_extract")
        pages = call_plugin_callable(provider.extract, [url])
        page = pages[0] if isinstance(pages, list) and pages and isinstance(pages[0], dict) else None
        if page is None or page.get("error"):
            raise ToolError(f"web_extract: {name}: {page.get('error') if page else 'it answered no page'}")
        return {"title": page.get("title") or "", "content": page.get("content") or page.get("raw_content") or ""}

    return extract


def _searcher(provider, name: str):
    def search(query: str, limit: int) -> list:
        _available(provider, name, "web_search")
        found = call_plugin_callable(provider.search, query, limit=limit)
        if not isinstance(found, dict) or found.get("success") is False:
            why = found.get("error") if isinstance(found, dict) else f"it answered {type(found).__name__}"
            raise ToolError(f"web_search: {name}: {why or 'failed'}")
        rows = (found.get("data") or {}).get("web") if isinstance(found.get("data"), dict) else found.get("data")
        return [{"title": str(r.get("title") or ""), "url": str(r.get("url") or ""),
                 "description": str(r.get("description") or "")}
                for r in rows or [] if isinstance(r, dict) and r.get("url")]

    return search
