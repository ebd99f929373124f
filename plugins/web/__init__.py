"""Built-in plugin web: the model reads web pages, searches the web and looks at images.

* ``web_extract``: up to five URLs, each fetched here (no service, no key) and read as text: HTML as Markdown-like
  text, PDFs page by page, other text as it is; a long page keeps its head and tail (``web.extract_char_limit``),
  its whole text in a file of the data folder's ``web-pages`` that read_file pages through.
  ``web.extract_backend`` names a plugin's service that reads them instead (the ``web_extract_backends`` hook).
* ``web_search``: offered when ``web.search_backend`` names a backend: ``searxng``, ``brave`` or ``tavily``
  (:mod:`plugins.web.search`), or a plugin's, through the ``web_search_backends`` hook
  (:mod:`plugins.web.hookspecs`).
* ``vision_analyze``: an image (a file, a URL, a ``data:`` URL) and a question to a model that sees
  (``auxiliary.vision``, else the conversation's): :mod:`plugins.web.vision`.

Private and local addresses are refused unless ``security.allow_private_urls`` is true (hermes-agent's key);
cloud metadata endpoints always, and the hosts of ``security.website_blocklist`` (:mod:`plugins.web.fetching`).
A URL or a search query that carries the value of a key the agent knows (``agent.secrets``) is not sent.
Settings: ``web.timeout`` (20 s a request), ``web.max_bytes`` (20 MB a page: a PDF is read whole or not at all).
"""

from __future__ import annotations

from kernel import hookimpl
from kernel.types import Tool, ToolError
from plugins.images import MODES
from plugins.text import is_binary
from plugins.tool_args import arg, check_args, clip, is_interrupted, setting

EXTRACT_CHARS, MAX_URLS, TIMEOUT, MAX_BYTES = 15_000, 5, 20.0, 20_000_000
KEPT_PAGES = 100  # whole texts of clipped pages kept for read_file
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript", "+json", "+xml")


def _fetch_settings(config) -> dict:
    return {"timeout": setting(config, "web.timeout", TIMEOUT, float, 1),
            "max_bytes": setting(config, "web.max_bytes", MAX_BYTES, int, 1000),
            "allow_private": setting(config, "security.allow_private_urls", False, bool),
            "blocked": blocklist(config)}


def blocklist(config) -> tuple:
    """The host rules of ``security.website_blocklist`` (hermes-agent's): its ``domains`` and the lines of its
    ``shared_files`` (relative to the config folder; ``#`` starts a comment), unless ``enabled`` is false."""
    if config is None or setting(config, "security.website_blocklist.enabled", True, bool) is False:
        return ()
    from pathlib import Path

    from hermes.host.paths import config_dir

    rules = [d for d in config.get("security.website_blocklist.domains") or [] if isinstance(d, str)]
    for name in config.get("security.website_blocklist.shared_files") or []:
        path = config_dir() / Path(str(name)).expanduser()
        try:
            rules += [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
        except (OSError, UnicodeDecodeError) as exc:
            import logging

            logging.getLogger("hermes.web").warning("security.website_blocklist.shared_files: %s: %s", path,
                                                    getattr(exc, "strerror", None) or exc)
    return tuple(dict.fromkeys(r for r in map(_rule, rules) if r))


def _rule(raw: str) -> str:
    """A rule as hermes-agent reads one: lower case, a URL's host only, no leading ``www.``."""
    from urllib.parse import urlsplit

    value = raw.strip().lower()
    if not value or value.startswith("#"):
        return ""
    if "://" in value:
        value = urlsplit(value).netloc or value
    value = value.split("/", 1)[0].rstrip(".")
    return value[4:] if value.startswith("www.") else value


def refused(text: str, agent, what: str) -> str:
    """Why ``text`` may not leave the machine (:func:`~plugins.tool_args.carried_key`), or ""."""
    from plugins.tool_args import carried_key

    name = carried_key(text, agent)
    return f"the {what} carries the value of ${name}: not sent (a key never leaves in a {what})" if name else ""


def _read(url: str, limit: int, settings: dict, agent) -> dict:
    """One URL as ``web_extract`` reports it: its title and text, or why not."""
    from plugins.web.fetching import fetch, normalized
    from plugins.web.page import charset, html_to_text

    try:
        got = fetch(normalized(url), cancelled=lambda: is_interrupted(agent), **settings)
    except ToolError as exc:
        return {"url": url, "error": str(exc)}
    kind = got.content_type.split(";")[0].strip().lower()
    found = {"url": got.url}
    if got.status >= 400:
        found["error"] = f"HTTP {got.status} {got.reason}".strip()
    if kind == "application/pdf" or got.body.startswith(b"%PDF-"):
        return {**found, **_pdf(got, limit, settings, agent)}
    textual = any(kind.startswith(t) or kind.endswith(t) for t in TEXT_TYPES) if kind else not is_binary(got.body)
    if not textual:
        return {**found, "error": found.get("error") or f"not text ({kind or 'no content type'}, {len(got.body):,} "
                "bytes): use terminal (curl -o FILE) to download it"}
    text = got.body.decode(charset(got.content_type, got.body), "replace")
    title = ""
    if kind in ("text/html", "application/xhtml+xml") or (not kind and "<html" in text[:1000].lower()):
        title, text = html_to_text(text, got.url)
    if got.truncated:
        text += f"\n\n[... the page stopped at web.max_bytes ({settings['max_bytes']:,} bytes) ...]"
    return {**found, **_page(title, text, limit, got.url)}


def _page(title: str, text: str, limit: int, url: str = "") -> dict:
    """A page as ``web_extract`` returns it: its title when it has one, its text clipped to ``limit``; a clipped
    page's whole text is kept in a file (``url`` given) that the footer names, for read_file to page through."""
    content = clip(text, limit)
    if content != text and url and (saved := _keep(url, text)):
        first = text[:int(limit * 0.4)].count("\n") + 1  # the line clip() cut the head in: where the gap starts
        lines = text.count("\n") + 1
        content += (f"\n\n[the whole page ({len(text):,} characters, {lines:,} line{'s' * (lines > 1)}) is in {saved}: "
                    f"read_file(path, offset={first}) reads on from where the head stops]")
    return {**({"title": title} if title else {}), "content": content}


def _keep(url: str, text: str) -> str:
    """Write a page's whole text to the data folder's ``web-pages`` (the newest :data:`KEPT_PAGES` stay); its path,
    or "" when it cannot be written (the clipped page still stands)."""
    import hashlib
    import re
    from urllib.parse import urlsplit

    from plugins.tool_args import kept

    host = re.sub(r"[^A-Za-z0-9.-]", "-", urlsplit(url).hostname or "page")[:60]
    name = f"{host}-{hashlib.sha256(url.encode('utf-8', 'replace')).hexdigest()[:12]}.md"
    return kept("web-pages", name, text.encode("utf-8", "replace"), KEPT_PAGES)


def _pdf(got, limit: int, settings: dict, agent) -> dict:
    from plugins.web.page import pdf_text

    if got.truncated:
        return {"error": f"the PDF is larger than web.max_bytes ({settings['max_bytes']:,} bytes): raise it, or "
                         "download the file with terminal (curl -o FILE)"}
    try:
        title, text = pdf_text(got.body, limit, lambda: is_interrupted(agent))
    except ToolError as exc:
        return {"error": str(exc)}
    return _page(title, text, limit + 200)  # whole pages that fit, and the line saying which were not read


def _extracted(url: str, limit: int, extract) -> dict:
    """One URL as a plugin's extract backend read it."""
    try:
        page = extract(url)
    except ToolError as exc:
        return {"url": url, "error": str(exc)}
    if not isinstance(page, dict):
        return {"url": url, "error": f"the extract backend answered {type(page).__name__}, not a page"}
    return {"url": url, **_page(str(page.get("title") or ""), str(page.get("content") or ""), limit, url)}


def make_web_extract(config=None) -> Tool:
    default_limit = setting(config, "web.extract_char_limit", EXTRACT_CHARS, int, 2000)
    settings, backend = _fetch_settings(config), backend_name(config, "extract")

    def web_extract(args, ctx):
        from plugins.web.fetching import blocked_by

        args = check_args(args, "web_extract")
        urls = args.get("urls") if args.get("urls") is not None else args.get("url")  # one URL sent as 'url'
        urls = [urls] if isinstance(urls, str) else arg({"urls": urls}, "urls", list, tool="web_extract")
        if not urls or len(urls) > MAX_URLS or not all(isinstance(u, str) and u.strip() for u in urls):
            raise ToolError(f"web_extract: 'urls' must be a list of 1 to {MAX_URLS} URLs (strings)")
        limit = max(arg(args, "char_limit", int, tool="web_extract", default=default_limit), 2000)
        extract = _backend(ctx.agent, backend, "web_extract") if backend else None
        results = []
        for url in urls:
            if is_interrupted(ctx.agent):
                results.append({"url": url, "error": "not fetched: the user interrupted the turn"})
                continue
            if why := refused(url, ctx.agent, "URL"):
                results.append({"url": url, "error": why})  # the result is masked: the model reads $NAME
                continue
            if extract and (rule := blocked_by(url, settings["blocked"])) is not None:  # a backend fetches it
                results.append({"url": url, "error": f"blocked by security.website_blocklist (rule '{rule}')"})
                continue
            ctx.progress(f"fetching {url[:80]}")
            results.append(_extracted(url, limit, extract) if extract else _read(url, limit, settings, ctx.agent))
        return {"results": results}

    return Tool(
        name="web_extract",
        description=(
            f"Read web pages: up to {MAX_URLS} URLs, each returned as text (HTML as Markdown: headings, lists, "
            f"[links](url), code). Pages longer than char_limit (default {default_limit}) keep their head and tail; "
            "the footer names a file with the whole text for read_file. "
            "PDFs are read as text, page by page. Not for other files (images, archives): use terminal for those."),
        parameters={"type": "object", "properties": {
            "urls": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_URLS,
                     "description": "The URLs to read (http or https)"},
            "char_limit": {"type": "integer", "minimum": 2000, "description": "Characters of each page returned"}},
            "required": ["urls"]},
        handler=web_extract, toolset="web", parallel_safe=True)


def backend_name(config, kind: str = "search") -> str:
    """What ``web.search_backend`` (or ``web.extract_backend``) names; "" for none."""
    return str(setting(config, f"web.{kind}_backend", "", str) or "").strip()


def _backend(agent, name: str, tool: str = "web_search"):
    """The function of the backend ``name`` of ``tool``, from the plugins' ``web_search_backends`` (or
    ``web_extract_backends``)."""
    backends, kind = {}, tool.split("_")[1]
    for provided in agent.ask(f"web_{kind}_backends") or []:
        backends.update(provided if isinstance(provided, dict) else {})
    if not callable(backends.get(name)):
        raise ToolError(f"{tool}: no plugin provides the {kind} backend {name!r} (web.{kind}_backend); "
                        f"there are: {', '.join(sorted(backends)) or 'none'}")
    return backends[name]


def make_web_search(config=None) -> Tool:
    backend = backend_name(config)

    def web_search(args, ctx):
        args = check_args(args, "web_search")
        query = arg(args, "query", str, tool="web_search").strip()
        if not query:
            raise ToolError("web_search: 'query' is empty")
        if why := refused(query, ctx.agent, "query"):
            raise ToolError(f"web_search: {why}")
        limit = min(max(arg(args, "limit", int, tool="web_search", default=5), 1), 20)
        return {"query": query, "results": list(_backend(ctx.agent, backend)(query, limit))[:limit]}

    return Tool(
        name="web_search",
        description=("Search the web: titles, URLs and descriptions of the best results (5 unless 'limit' says "
                     "more). Read a result with web_extract."),
        parameters={"type": "object", "properties": {
            "query": {"type": "string", "description": "What to search for (site:example.com and the like may work)"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many results (5)"}},
            "required": ["query"]},
        handler=web_search, toolset="web", parallel_safe=True, check=lambda: bool(backend))


@hookimpl
def web_search_backends(agent):
    from functools import partial

    from plugins.web.search import BACKENDS

    settings = _fetch_settings(agent.config)
    return {name: partial(search, config=agent.config, settings=settings) for name, search in BACKENDS.items()}


@hookimpl
def register_hookspecs(add):
    from plugins.web import hookspecs

    add(hookspecs)


@hookimpl
def register_config(declare):
    declare("web.search_backend", str, "", "the backend web_search asks: searxng, brave, tavily or a plugin's (empty: "
            "web_search is not offered)")
    declare("web.search_url", str, "", "where the search backend answers: a SearXNG instance ($SEARXNG_URL if unset); "
            "brave and tavily use their public API unless set")
    declare("web.extract_backend", str, "", "a plugin's backend that reads pages for web_extract (empty: they are "
            "fetched here)")
    declare("web.extract_char_limit", int, EXTRACT_CHARS, "characters of each page web_extract returns unless the "
            "model asks for more", minimum=2000)
    declare("web.timeout", float, TIMEOUT, "seconds a web request may take", minimum=1)
    declare("web.max_bytes", int, MAX_BYTES, "the most bytes of a page downloaded", minimum=1000)
    declare("agent.image_input_mode", str, "auto", "how the user's images reach the model: native (in the message), "
            "text (kept in the data folder's images/, the message saying where, for vision_analyze), or auto (native "
            "for a model known to see, else text); plugins/images.py", choices=MODES)
    declare("auxiliary.vision", dict, None, "the model vision_analyze asks about an image: {model, provider, "
            "base_url, ...} (the conversation's when unset)")
    declare("security.allow_private_urls", bool, False, "let the web tools fetch private and local addresses (a "
            "router, localhost); cloud metadata endpoints stay refused")
    declare("security.website_blocklist.enabled", bool, True, "refuse the hosts of security.website_blocklist "
            "(hermes-agent's; off only when false)")
    declare("security.website_blocklist.domains", list[str], [], "hosts the web tools never fetch: a domain and its "
            "subdomains (example.com), or only the subdomains (*.example.com)")
    declare("security.website_blocklist.shared_files", list[str], [], "files of such hosts, one a line (relative to "
            "the config folder)")


@hookimpl
def on_session_start(agent):
    if agent.config.get("auxiliary.vision", None) is not None:
        from plugins import auxiliary

        auxiliary.check(agent, "vision")  # a model vision_analyze cannot use: said now, not at the first image


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent, online):
    from plugins import auxiliary
    from plugins.doctor.hookspecs import FAIL, OK, Check

    checks, name = auxiliary.doctor_lines(agent, "vision", online) or [], backend_name(agent.config, "extract")
    if name:  # asked only whether a plugin provides it: a page read to check would be a choice of page
        try:
            _backend(agent, name, "web_extract")
            checks.append(Check("web extract", OK, f"{name} reads the pages"))
        except ToolError as exc:
            checks.append(Check("web extract", FAIL, str(exc).removeprefix("web_extract: ")))
    name = backend_name(agent.config)
    if not name:
        return checks  # web_search is not offered: nothing more to check
    try:
        search = _backend(agent, name)
        if not online:
            from plugins.web.search import KEYS, key

            if name.removesuffix("-free") in KEYS:  # its key is here, at least
                key(name.removesuffix("-free"))
            return [*checks, Check("web search", OK, f"{name} (not asked: --offline)")]
        found = len(list(search("hermes agent", 1)))
    except ToolError as exc:
        return [*checks, Check("web search", FAIL, str(exc).removeprefix("web_search: "))]
    return [*checks, Check("web search", OK, f"{name} answered a test query ({found} result{'s' * (found != 1)})")]


@hookimpl
def register_tools(register, config):
    from plugins.web.vision import make_vision_analyze

    register(make_web_extract(config))
    register(make_web_search(config))
    register(make_vision_analyze(_fetch_settings(config)))


@hookimpl
def register_toolsets(register):
    register("web", ["web_search", "web_extract"], description="The web: search it and read pages")
    register("vision", ["vision_analyze"], description="Images: a model that sees answers questions about them")
