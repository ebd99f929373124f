"""The built-in search backends of ``web_search``, chosen by ``web.search_backend``:

* ``searxng``: a SearXNG instance's JSON API (``format=json`` enabled in its ``settings.yml``) at ``web.search_url``
  or ``$SEARXNG_URL``, hermes-agent's variable; no key.
* ``brave`` (or ``brave-free``, hermes-agent's name): the Brave Search API, its key in ``$BRAVE_SEARCH_API_KEY``.
* ``tavily``: Tavily's search API, its key in ``$TAVILY_API_KEY``.

Keys live in the environment (or hermes-compat's ``.env``), as the providers' do; tools never see them. Each
``search(query, limit, config, settings)`` returns ``[{"title", "url", "description"}]`` or raises
:class:`ToolError` with what the model (and ``hermes doctor``) should read."""

from __future__ import annotations

import html
import json
import os
import re
from urllib.parse import urlencode

from kernel.types import ToolError
from plugins.tool_args import setting

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
TAVILY_URL = "https://api.tavily.com/search"


def _url(config, default: str = "", env: str = "") -> str:
    """``web.search_url``, else the variable ``env`` names, else ``default``."""
    return (str(setting(config, "web.search_url", "", str) or "") or (os.environ.get(env, "") if env else "")
            or default).strip()


KEYS = {"brave": ("BRAVE_SEARCH_API_KEY", "https://brave.com/search/api/"), "tavily": ("TAVILY_API_KEY",
                                                                                   "https://tavily.com")}


def key(backend: str) -> str:
    """The backend's key from the environment, or the ToolError saying where it goes (``hermes doctor`` asks too)."""
    variable, where = KEYS[backend]
    found = os.environ.get(variable, "").strip()
    if not found:
        raise ToolError(f"web_search: {backend} needs its API key in ${variable} ({where})")
    return found


def _ask(backend: str, url: str, settings: dict, **request) -> dict:
    """The backend's JSON answer; its refusals said as the model should read them."""
    from plugins.web.fetching import fetch

    try:  # the endpoint is the user's choice, often a server of theirs on this network: a private address is fine
        got = fetch(url, **dict(settings, allow_private=True, blocked=()), **request)  # the user's own backend
    except ToolError as exc:
        raise ToolError(f"web_search: {backend} at {url.split('?')[0]}: {exc}") from None
    if got.status in (401, 403):
        raise ToolError(f"web_search: {backend} refused the key (HTTP {got.status})")
    if got.status == 429:
        raise ToolError(f"web_search: {backend} says too many requests (HTTP 429): wait, or search less often")
    try:
        data = json.loads(got.body) if got.status < 400 else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        hint = " (is format=json enabled in its settings.yml?)" if backend == "searxng" else ""
        raise ToolError(f"web_search: {backend} at {url.split('?')[0]} answered HTTP {got.status} without JSON "
                        f"results{hint}")
    return data


def _results(rows, limit: int, text: str) -> list:
    plain = lambda value: html.unescape(re.sub(r"<[^>]+>", "", str(value or "")))  # noqa: E731 - Brave marks <strong>
    return [{"title": plain(r.get("title")), "url": str(r["url"]), "description": plain(r.get(text))}
            for r in (rows if isinstance(rows, list) else [])[:limit] if isinstance(r, dict) and r.get("url")]


def searxng(query: str, limit: int, config, settings: dict) -> list:
    base = _url(config, env="SEARXNG_URL").rstrip("/")
    if not base:
        raise ToolError("web_search: web.search_backend is searxng and neither web.search_url nor $SEARXNG_URL "
                        "says where it runs")
    data = _ask("searxng", f"{base}/search?{urlencode({'q': query, 'format': 'json'})}", settings)
    return _results(data.get("results"), limit, "content")


def brave(query: str, limit: int, config, settings: dict) -> list:
    data = _ask("brave", f"{_url(config, BRAVE_URL)}?{urlencode({'q': query, 'count': limit})}", settings,
                headers={"Accept": "application/json", "X-Subscription-Token": key("brave")})
    return _results((data.get("web") or {}).get("results"), limit, "description")


def tavily(query: str, limit: int, config, settings: dict) -> list:
    data = _ask("tavily", _url(config, TAVILY_URL), settings, headers={"Authorization": f"Bearer {key('tavily')}"},
                json={"query": query, "max_results": limit})
    return _results(data.get("results"), limit, "content")


BACKENDS = {"searxng": searxng, "brave": brave, "brave-free": brave, "tavily": tavily}  # brave-free: hermes-agent's
