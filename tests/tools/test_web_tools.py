"""The web plugin's tools through the loop, against a real HTTP server on 127.0.0.1: pages, redirects, limits, the
address checks, and web_search on a server speaking SearXNG's JSON API."""

import json
import os
import re
import socket
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from kernel import hookimpl
from kernel.types import ToolError
from plugins import web

PAGE = """<!doctype html><html><head><meta charset="iso-8859-1"><title>A  caf\xe9 page</title>
<script>var secret = "never shown";</script><style>p {color: red}</style></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav><svg><title>menu icon</title></svg>
<h1>Caf\xe9 notes</h1><p>Some <b>bold</b> words and <a href="/next.html">the next page</a>.</p>
<ul><li>first</li><li>second</li></ul>
<pre>def f():
    return 1</pre><p>Call <code>f()</code> once.</p><img src="cat.png" alt="a cat"><img src="spacer.gif">
</body></html>"""


def make_pdf(pages: list, title: str = "") -> bytes:
    """A PDF with a line of Helvetica text on each page (pypdf writes it; fonts and streams are indirect objects,
    which only its private _add_object makes)."""
    from io import BytesIO

    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                                                NameObject("/Subtype"): NameObject("/Type1"),
                                                NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for text in pages:
        page = writer.add_blank_page(612, 792)
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    if title:
        writer.add_metadata({"/Title": title})
    out = BytesIO()
    writer.write(out)
    return out.getvalue()


class Site(BaseHTTPRequestHandler):
    seen: list = []

    def log_message(self, *args):
        pass

    def send(self, status, body: bytes, kind="text/html", **headers):
        self.send_response(status)
        if kind:
            self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's name
        parts = urlsplit(self.path)
        Site.seen.append(self.path)
        if parts.path == "/page.html":
            self.send(200, PAGE.encode("latin-1"))
        elif parts.path == "/moved":
            self.send(302, b"", Location="/page.html")
        elif parts.path == "/loop":
            self.send(302, b"", Location="/loop")
        elif parts.path == "/to-metadata":
            self.send(302, b"", Location="http://169.254.169.254/latest/meta-data/")
        elif parts.path == "/long.txt":
            self.send(200, ("HEAD\n" + "".join(f"line {n} {'x' * 40}\n" for n in range(1, 1001)) + "TAIL").encode(),
                      "text/plain; charset=utf-8")
        elif parts.path == "/data.json":
            self.send(200, b'{"answer": 42}', "application/json")
        elif parts.path == "/paper.pdf":
            self.send(200, make_pdf([f"Page {n} says {'words ' * 300}" for n in range(1, 6)], "On Tools"),
                      "application/pdf")
        elif parts.path == "/short.pdf":  # served as bytes: read by its signature
            self.send(200, make_pdf(["Only page"]), "application/octet-stream")
        elif parts.path == "/broken.pdf":
            self.send(200, make_pdf(["Only page"])[:300], "application/pdf")
        elif parts.path == "/untyped":
            self.send(200, b"\0\1\2 binary", "")
        elif parts.path == "/cat.png":
            self.send(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "image/png")
        elif parts.path == "/slow":
            time.sleep(3)
            self.send(200, b"late")
        elif parts.path == "/drip":  # a page that never ends
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            for _ in range(300):
                try:
                    self.wfile.write(b"x" * 100 + b"\n")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.1)
        elif parts.path == "/brave":
            if self.headers.get("X-Subscription-Token") != "brave-key":
                return self.send(401, b'{"error": "bad token"}', "application/json")
            query = parse_qs(parts.query)
            rows = [{"title": f"<strong>{query['q'][0]}</strong> &amp; more", "url": f"https://brave.example/{i}",
                     "description": "the <strong>best</strong> one"} for i in range(int(query["count"][0]))]
            self.send(200, json.dumps({"web": {"results": rows}}).encode(), "application/json")
        elif parts.path == "/elsewhere":  # ?to=URL: a redirect to another origin
            self.send(302, b"", Location=parse_qs(parts.query)["to"][0])
        elif parts.path == "/search":
            query = parse_qs(parts.query)
            if query.get("format") != ["json"]:
                return self.send(403, b"Forbidden")
            results = [{"title": f"Result {i} for {query['q'][0]}", "url": f"https://example.org/{i}",
                        "content": f"About result {i}"} for i in range(1, 9)]
            self.send(200, json.dumps({"query": query["q"][0], "results": results}).encode(), "application/json")
        else:
            self.send(404, b"<html><title>Not here</title><body><p>No such page.</p></body></html>")


    def do_POST(self):  # noqa: N802 - http.server's name: Tavily's API
        Site.seen.append(self.path)
        asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("Authorization") != "Bearer tavily-key":
            return self.send(401, b'{"detail": "Unauthorized"}', "application/json")
        if asked["query"] == "busy":
            return self.send(429, b'{"detail": "rate limit"}', "application/json")
        rows = [{"title": asked["query"], "url": f"https://tavily.example/{i}", "content": "found"}
                for i in range(asked["max_results"])]
        self.send(200, json.dumps({"query": asked["query"], "results": rows}).encode(), "application/json")


@pytest.fixture
def make_site():
    servers = []

    def start() -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    Site.seen = []
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def site(make_site):
    return make_site()


def tool_results(result) -> list:
    return [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]


def open_page(site: str, path: str) -> str:
    with urllib.request.urlopen(site + path, timeout=10) as page:
        return page.read().decode("utf-8")


def read_file(path: str, offset: int) -> str:
    from plugins.core_tools import make_read_file

    return make_read_file().handler({"path": path, "offset": offset, "limit": 3}, None)


def extract(make_agent, urls, config=None, **args):
    agent = make_agent(web, config={"security": {"allow_private_urls": True}, **(config or {})},
                       script=[{"tool_calls": [["web_extract", {"urls": urls, **args}]]}, "done"])
    [out] = tool_results(agent.run_conversation("read these"))
    return out


def test_a_page_is_read_as_markdown_with_its_title_links_and_code(make_agent, site):
    out = extract(make_agent, [f"{site}/page.html", f"{site}/moved", f"{site}/data.json"])
    page, moved, data = out["results"]
    assert page["title"] == "A café page"  # the meta charset, not UTF-8
    assert page["content"] == (
        "# Café notes\n\nSome bold words and [the next page](" + site + "/next.html).\n\n- first\n- second\n\n"
        "```\ndef f():\n    return 1\n```\n\nCall `f()` once.\n\n[IMAGE: a cat]")
    assert "secret" not in json.dumps(out) and "About" not in page["content"]  # scripts and menus are not the page
    assert moved == dict(page, url=f"{site}/page.html")  # the redirect followed, the final URL reported
    assert data == {"url": f"{site}/data.json", "content": '{"answer": 42}'}


def test_what_cannot_be_read_is_said_per_url_and_the_rest_still_read(make_agent, site):
    out = extract(make_agent, [f"{site}/missing", f"{site}/cat.png", f"{site}/loop", "ftp://example.org/x",
                               f"{site}/untyped"])
    missing, image, loop, ftp, untyped = out["results"]
    assert missing["error"] == "HTTP 404 Not Found" and "No such page." in missing["content"]
    assert image["error"].startswith("not text (image/png, 108 bytes): use terminal")
    assert loop["error"] == "more than 5 redirects"
    assert ftp["error"] == "only http and https URLs are fetched, not 'ftp://example.org/x'"
    assert untyped["error"] == "not text (no content type, 10 bytes): use terminal (curl -o FILE) to download it"


def test_pdfs_are_read_as_text_page_by_page_up_to_the_limit(make_agent, site):
    paper, short, broken = extract(make_agent, [f"{site}/paper.pdf", f"{site}/short.pdf", f"{site}/broken.pdf"],
                                   char_limit=4000)["results"]
    assert paper["title"] == "On Tools"
    text = paper["content"]
    assert text.startswith("[page 1]\nPage 1 says words words") and "[page 2]\nPage 2 says" in text
    assert text.endswith("[... pages 3-5 not read: a larger char_limit reads more ...]") and "Page 3" not in text
    assert short == {"url": f"{site}/short.pdf", "content": "[page 1]\nOnly page"}
    assert broken["error"].startswith("not a readable PDF (")
    whole = extract(make_agent, [f"{site}/paper.pdf"])["results"][0]["content"]
    assert "[page 5]\nPage 5 says" in whole and "not read" not in whole
    too_big = extract(make_agent, [f"{site}/paper.pdf"], config={"web": {"max_bytes": 1000}})["results"][0]
    assert too_big["error"] == ("the PDF is larger than web.max_bytes (1,000 bytes): raise it, or download the file "
                                "with terminal (curl -o FILE)")


def test_private_addresses_need_the_setting_and_metadata_endpoints_are_never_fetched(make_agent, site):
    agent = make_agent(web, script=[{"tool_calls": [["web_extract", {"urls": [f"{site}/page.html"]}]]}, "done"])
    [out] = tool_results(agent.run_conversation("read"))
    assert out["results"][0]["error"] == (
        "127.0.0.1 is a private or local address (127.0.0.1): not fetched (security.allow_private_urls: true in "
        "config.yaml allows it)")
    assert Site.seen == []  # refused before asking
    out = extract(make_agent, [f"{site}/to-metadata", "http://169.254.169.254/latest/",
                               "http://metadata.google.internal/"])
    assert [r["error"] for r in out["results"]] == [
        "169.254.169.254 is a cloud metadata endpoint (169.254.169.254): never fetched",
        "169.254.169.254 is a cloud metadata endpoint (169.254.169.254): never fetched",
        "metadata.google.internal is a cloud metadata endpoint: never fetched"]
    assert Site.seen == ["/to-metadata"]  # the redirect's target was checked as the first URL is


def test_a_url_or_query_carrying_a_key_is_not_sent(make_agent, site, monkeypatch, tmp_path):
    """A page's hidden instructions can talk a model into "checking" a URL with a key in it: the key would be in
    that server's log. The value is refused as it is and percent-encoded; the model reads which variable it was."""
    key = "sk-proj-Zq8vX2mN4bL7wE1r"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    (tmp_path / "cat.png").write_bytes(b"")
    steps = [{"tool_calls": [["web_extract", {"urls": [f"{site}/page.html?k={key}", f"{site}/page.html?k=sk%2Dproj%2D"
                                                       "Zq8vX2mN4bL7wE1r", f"{site}/data.json"]}],
                             ["web_search", {"query": f"whois {key}"}],
                             ["vision_analyze", {"image_url": f"{site}/cat.png?{key}", "question": "what?"}]]},
             "done"]
    agent = make_agent(web, script=steps, config={"security": {"allow_private_urls": True},
                                                  "web": {"search_backend": "searxng", "search_url": site + "/"}})
    extracted, searched, looked = tool_results(agent.run_conversation("check these"))
    why = "carries the value of $OPENAI_API_KEY: not sent (a key never leaves in a {})"
    assert [r.get("error") for r in extracted["results"]] == [f"the URL {why.format('URL')}"] * 2 + [None]
    assert searched["error"] == f"web_search: the query {why.format('query')}"
    assert looked["error"] == f"vision_analyze: the URL {why.format('URL')}"
    assert Site.seen == ["/data.json"]  # nothing with the key reached the server
    assert key not in json.dumps([m for m in agent.messages if m["role"] == "tool"])  # masked as every result


def test_a_name_that_resolves_elsewhere_the_second_time_reaches_nothing_new(make_agent, site, monkeypatch):
    """DNS rebinding: the name answers a public address to the check, then a local one. The request goes to the
    address that was checked, so the local service is never asked."""
    real, asked = socket.getaddrinfo, []

    def rebinding(host, port, *args, **kwargs):
        if host == "rebind.test":
            asked.append(host)
            host = "1.1.1.1" if len(asked) == 1 else "127.0.0.1"
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    port = site.rsplit(":", 1)[1]
    agent = make_agent(web, config={"web": {"timeout": 1}},
                       script=[{"tool_calls": [["web_extract", {"urls": [f"http://rebind.test:{port}/page.html"]}]]},
                               "done"])
    [out] = tool_results(agent.run_conversation("read"))
    assert "error" in out["results"][0] and Site.seen == []  # the public address is out of reach here; 127.0.0.1 unasked


def test_https_goes_to_the_checked_address_with_the_name_in_the_handshake(tmp_path, monkeypatch):
    """The pinned request still speaks to the name: SNI, Host and the certificate check are the name's."""
    import ssl
    import subprocess

    from plugins.web.fetching import fetch

    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", tmp_path / "key.pem",
                    "-out", tmp_path / "cert.pem", "-days", "1", "-subj", "/CN=pinned.test",
                    "-addext", "subjectAltName=DNS:pinned.test"], check=True, capture_output=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo",
                        lambda host, *a, **k: real("127.0.0.1" if host == "pinned.test" else host, *a, **k))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))  # this test's own authority
    try:
        got = fetch(f"https://pinned.test:{server.server_port}/data.json", timeout=5, max_bytes=1000, allow_private=True)
        assert (got.status, got.url, got.body) == (200, f"https://pinned.test:{server.server_port}/data.json",
                                                   b'{"answer": 42}')
        with pytest.raises(ToolError, match="certificate"):  # by its address the certificate does not fit
            fetch(f"https://127.0.0.1:{server.server_port}/data.json", timeout=5, max_bytes=1000, allow_private=True)
    finally:
        server.shutdown()
        server.server_close()


def test_limits_clip_a_long_page_and_stop_a_slow_one(make_agent, site, hermes_home, monkeypatch):
    out = extract(make_agent, [f"{site}/long.txt"], char_limit=2000)
    text, footer = out["results"][0]["content"].rsplit("\n\n", 1)
    assert text.startswith("HEAD\nline 1 x") and text.endswith("x\nTAIL") and "characters omitted" in text
    assert len(text) <= 2100
    # the whole text is kept for read_file, which the footer tells where to go on from
    saved, offset = re.search(r"is in (\S+): read_file\(path, offset=(\d+)\)", footer).groups()
    assert footer.startswith("[the whole page (49,902 characters, 1,002 lines)") and saved.startswith(str(hermes_home))
    assert open(saved, encoding="utf-8").read() == open_page(site, "/long.txt")
    assert os.stat(saved).st_mode & 0o777 == 0o600
    head_end = text.split("\n\n[...")[0].splitlines()[-1]  # the line the head stops in
    assert read_file(saved, int(offset)).startswith(f"{int(offset):>6}|{head_end}")
    monkeypatch.setattr(web, "KEPT_PAGES", 1)  # the newest are kept
    extract(make_agent, [f"{site}/long.txt?again"], char_limit=2000)
    assert [p.name for p in (hermes_home / "web-pages").iterdir()] != [os.path.basename(saved)]
    assert len(list((hermes_home / "web-pages").iterdir())) == 1
    out = extract(make_agent, [f"{site}/long.txt"], config={"web": {"max_bytes": 1000}})
    assert out["results"][0]["content"].endswith("[... the page stopped at web.max_bytes (1,000 bytes) ...]")
    started = time.monotonic()
    out = extract(make_agent, [f"{site}/slow"], config={"web": {"timeout": 1}})
    assert out["results"][0]["error"] == "no answer within 1 s" and time.monotonic() - started < 2.9  # not the 3 s


def test_an_interrupt_stops_a_download_and_the_urls_after_it(make_agent, site):
    agent = make_agent(web, config={"security": {"allow_private_urls": True}},
                       script=[{"tool_calls": [["web_extract", {"urls": [f"{site}/drip", f"{site}/page.html"]}]]}])
    box = {}
    turn = threading.Thread(target=lambda: box.update(agent.run_conversation("read").to_dict()))
    turn.start()
    deadline = time.monotonic() + 20
    while "/drip" not in Site.seen and time.monotonic() < deadline:  # the download is under way
        time.sleep(0.01)
    time.sleep(0.3)
    stopped = time.monotonic()
    agent.interrupt()
    turn.join(10)
    assert not turn.is_alive() and time.monotonic() - stopped < 2
    assert box["exit_reason"] == "interrupted_by_user"
    assert tool_results(box) == [{"results": [
        {"url": f"{site}/drip", "error": "interrupted while downloading"},
        {"url": f"{site}/page.html", "error": "not fetched: the user interrupted the turn"}]}]
    assert Site.seen == ["/drip"]


@pytest.mark.parametrize("args, error", [
    ({}, "web_extract: missing required argument 'urls' (a list)"),
    ({"urls": []}, "web_extract: 'urls' must be a list of 1 to 5 URLs (strings)"),
    ({"urls": ["http://a.example"] * 6}, "web_extract: 'urls' must be a list of 1 to 5 URLs (strings)"),
    ({"urls": [1]}, "web_extract: 'urls' must be a list of 1 to 5 URLs (strings)"),
    ({"urls": "not a list"}, None),  # one URL as a string: read as a list of one
])
def test_bad_arguments_are_one_error_the_model_reads(make_agent, args, error):
    agent = make_agent(web, script=[{"tool_calls": [["web_extract", args]]}, "done"])
    [out] = tool_results(agent.run_conversation("read"))
    if error is None:
        assert out["results"][0]["url"] == "not a list" and "only http and https" in out["results"][0]["error"]
    else:
        assert out == {"error": error}


def test_a_bare_host_is_read_as_https():
    from plugins.web.fetching import normalized

    assert normalized("  example.org/a b ") == "https://example.org/a b"
    assert normalized("http://x.org") == "http://x.org" and normalized("localhost:8000") == "localhost:8000"


def test_web_search_is_offered_only_with_a_backend_and_asks_searxng(make_agent, site):
    agent = make_agent(web, script=["hi"])
    assert "web_extract" in agent.tools and "web_search" not in agent.tools
    steps = [{"tool_calls": [["web_search", {"query": "café hours", "limit": 3}]]}, "done"]
    agent = make_agent(web, script=steps, config={"web": {"search_backend": "searxng", "search_url": site + "/"}})
    [out] = tool_results(agent.run_conversation("search"))
    assert out == {"query": "café hours", "results": [
        {"title": f"Result {i} for café hours", "url": f"https://example.org/{i}", "description": f"About result {i}"}
        for i in (1, 2, 3)]}


def test_web_search_says_what_is_missing(make_agent, site, monkeypatch):
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    call = [{"tool_calls": [["web_search", {"query": "x"}]]}, "done"]
    cases = [({"search_backend": "searxng"}, "web_search: web.search_backend is searxng and neither web.search_url "
                                             "nor $SEARXNG_URL says where it runs"),
             ({"search_backend": "searxng", "search_url": site + "/nothing"},
              f"web_search: searxng at {site}/nothing/search answered HTTP 404 without JSON results (is format=json "
              "enabled in its settings.yml?)"),
             ({"search_backend": "bing"}, "web_search: no plugin provides the search backend 'bing' "
                                           "(web.search_backend); there are: brave, brave-free, searxng, tavily")]
    for settings, error in cases:
        agent = make_agent(web, script=call, config={"web": settings})
        assert tool_results(agent.run_conversation("search")) == [{"error": error}]
    monkeypatch.setenv("SEARXNG_URL", site)
    agent = make_agent(web, script=call, config={"web": {"search_backend": "searxng"}})
    assert len(tool_results(agent.run_conversation("search"))[0]["results"]) == 5


def test_brave_and_tavily_send_their_keys_and_say_what_they_refuse(make_agent, site, make_site, monkeypatch):
    def search(backend, url, *queries):
        steps = [{"tool_calls": [["web_search", {"query": q, "limit": 2}] for q in queries]}, "done"]
        agent = make_agent(web, script=steps, config={"web": {"search_backend": backend, "search_url": url}})
        return tool_results(agent.run_conversation("search"))

    monkeypatch.delenv("BRAVE_SEARCH_API_KEY", raising=False)
    monkeypatch.setenv("TAVILY_API_KEY", "wrong")
    assert search("brave", f"{site}/brave", "x") == [
        {"error": "web_search: brave needs its API key in $BRAVE_SEARCH_API_KEY (https://brave.com/search/api/)"}]
    assert search("tavily", f"{site}/tavily", "x") == [{"error": "web_search: tavily refused the key (HTTP 401)"}]
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "brave-key")
    monkeypatch.setenv("TAVILY_API_KEY", "tavily-key")
    [found] = search("brave", f"{site}/brave", "tea")
    assert search("brave-free", f"{site}/brave", "tea") == [found]  # hermes-agent's name for it
    assert found["results"] == [{"title": "tea & more", "url": f"https://brave.example/{i}",
                                 "description": "the best one"} for i in (0, 1)]
    found, busy = search("tavily", f"{site}/tavily", "tea", "busy")
    assert found["results"] == [{"title": "tea", "url": f"https://tavily.example/{i}", "description": "found"}
                                for i in (0, 1)]
    assert busy == {"error": "web_search: tavily says too many requests (HTTP 429): wait, or search less often"}
    assert "brave-key" not in json.dumps(found)
    other = make_site()  # another origin: the key stays with the one it was meant for
    moved = f"{site}/elsewhere?to={other}/brave"
    assert search("brave", moved, "tea") == [{"error": "web_search: brave refused the key (HTTP 401)"}]
    assert Site.seen[-2:] == [f"/elsewhere?to={other}/brave?q=tea&count=2", "/brave?q=tea"]  # followed, no key


def test_a_plugin_provides_a_search_backend_and_its_errors_reach_the_model(make_agent):
    class Engine:
        @hookimpl
        def web_search_backends(self, agent):
            def search(query, limit):
                if query == "fail":
                    raise ToolError("web_search: the engine's quota is used up")
                return [{"title": query.upper(), "url": "https://engine.example/1", "description": ""}] * 9
            return {"engine": search}

    steps = [{"tool_calls": [["web_search", {"query": "ok", "limit": 2}], ["web_search", {"query": "fail"}]]}, "done"]
    agent = make_agent(web, Engine(), script=steps, config={"web": {"search_backend": "engine"}})
    ok, failed = tool_results(agent.run_conversation("search"))
    assert ok["results"] == [{"title": "OK", "url": "https://engine.example/1", "description": ""}] * 2
    assert failed == {"error": "web_search: the engine's quota is used up"}


def test_a_plugin_reads_the_pages_when_web_extract_backend_names_it(make_agent, site):
    class Reader:
        @hookimpl
        def web_extract_backends(self, agent):
            def extract(url):
                if "fail" in url:
                    raise ToolError("web_extract: the reader could not render it")
                return "just text" if "odd" in url else {"title": "Rendered", "content": "x" * 5000 + " END"}
            return {"reader": extract}

    urls = [f"{site}/page.html", "https://fail.example/", "https://odd.example/"]
    agent = make_agent(web, Reader(), config={"web": {"extract_backend": "reader"}},
                       script=[{"tool_calls": [["web_extract", {"urls": urls, "char_limit": 2000}]]}, "done"])
    [out] = tool_results(agent.run_conversation("read"))
    page, failed, odd = out["results"]
    content, footer = page["content"].rsplit("\n\n", 1)
    assert page["title"] == "Rendered" and content.endswith(" END") and "characters omitted" in content
    assert footer.startswith("[the whole page (5,004 characters, 1 line) is in ")  # a backend's page is kept too
    assert failed == {"url": "https://fail.example/", "error": "web_extract: the reader could not render it"}
    assert odd == {"url": "https://odd.example/", "error": "the extract backend answered str, not a page"}
    assert Site.seen == []  # nothing fetched here: the backend reads them
    agent = make_agent(web, config={"web": {"extract_backend": "nosuch"}},
                       script=[{"tool_calls": [["web_extract", {"urls": urls}]]}, "done"])
    assert tool_results(agent.run_conversation("read")) == [{"error": "web_extract: no plugin provides the extract "
                                                             "backend 'nosuch' (web.extract_backend); there are: none"}]


def test_hermes_run_reads_a_page_and_searches(hermes, hermes_home, site, tmp_path):
    (hermes_home / "config.yaml").write_text(
        f"security: {{allow_private_urls: true}}\nweb: {{search_backend: searxng, search_url: '{site}'}}\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["web_search", {"query": "notes"}],
                                                  ["web_extract", {"urls": [f"{site}/page.html"]}]]}, "done"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "find the notes")
    assert out.returncode == 0, out.stderr
    searched, read = tool_results(json.loads(out.stdout))
    assert searched["results"][0]["title"] == "Result 1 for notes"
    assert read["results"][0]["content"].startswith("# Café notes")
    assert hermes("config", "check").returncode == 0
    # a key in the environment reaches the backend through the command too, and the model never reads it
    (hermes_home / "config.yaml").write_text(f"web: {{search_backend: brave, search_url: '{site}/brave'}}\n")
    script.write_text(json.dumps([{"tool_calls": [["web_search", {"query": "tea"}],
                                                  ["terminal", {"command": "echo $BRAVE_SEARCH_API_KEY"}]]}, "done"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "--yolo", "find tea",
                 env={"BRAVE_SEARCH_API_KEY": "brave-key"})
    searched, _ = tool_results(json.loads(out.stdout))
    assert searched["results"][0]["title"] == "tea & more" and "brave-key" not in out.stdout
    # hermes-agent's config: its shared web.backend, SEARXNG_URL in the environment
    (hermes_home / "config.yaml").write_text("web:\n  backend: searxng\n")
    assert hermes("config", "check").stdout.startswith("ok")
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "--yolo", "find tea",
                 env={"SEARXNG_URL": site})
    assert tool_results(json.loads(out.stdout))[0]["results"][0]["title"] == "Result 1 for tea"


def test_hermes_doctor_asks_the_search_backend(hermes, hermes_home, site):
    def web_line(*args, key=""):
        out = hermes("doctor", "--json", *args, env={"TAVILY_API_KEY": key})
        return [c for c in json.loads(out.stdout) if c["name"].startswith("web ")]

    assert web_line("--offline") == []  # no backend: web_search is not offered, nothing to check
    config = hermes_home / "config.yaml"
    config.write_text(f"web: {{search_backend: searxng, search_url: '{site}'}}\n")
    assert web_line("--offline") == [{"name": "web search", "status": "ok", "detail": "searxng (not asked: --offline)"}]
    assert Site.seen == []
    assert web_line() == [{"name": "web search", "status": "ok",
                           "detail": "searxng answered a test query (1 result)"}]
    config.write_text(f"web: {{search_backend: searxng, search_url: '{site}/gone'}}\n")
    assert web_line()[0]["status"] == "fail" and "answered HTTP 404 without JSON results" in web_line()[0]["detail"]
    config.write_text("web: {search_backend: tavily}\n")  # offline, its key is looked for
    assert web_line("--offline") == [{"name": "web search", "status": "fail",
                                      "detail": "tavily needs its API key in $TAVILY_API_KEY (https://tavily.com)"}]
    assert web_line("--offline", key="tvly-k") == [{"name": "web search", "status": "ok",
                                                    "detail": "tavily (not asked: --offline)"}]
    config.write_text("web: {extract_backend: firecrawl}\n")
    assert web_line("--offline") == [{"name": "web extract", "status": "fail", "detail": "no plugin provides the "
                                      "extract backend 'firecrawl' (web.extract_backend); there are: none"}]
    config.write_text("web: {search_backend: bing}\n")
    assert web_line("--offline") == [{"name": "web search", "status": "fail", "detail":
                                      "no plugin provides the search backend 'bing' (web.search_backend); there "
                                      "are: brave, brave-free, searxng, tavily"}]


def test_markup_that_trips_the_parser_is_read_as_text():
    from plugins.web.page import html_to_text

    assert html_to_text("<p>a <![ b</p><p>c <![CDATA[d]]> e</p>") == ("", "a <![ b\n\nc e")
    assert html_to_text("<a href='http://[::1'>broken</a> <a href='/ok'>fine</a>", "http://e.org/x") == (
        "", "broken [fine](http://e.org/ok)")


def make_png(width: int = 2, height: int = 2) -> bytes:
    """A red PNG, written by hand: the format is eight bytes and three chunks."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("api_mode", ["chat_completions", "anthropic_messages"])
def test_vision_analyze_sends_the_image_to_the_model_auxiliary_vision_names(hermes, hermes_home, make_wire_server,
                                                                           tmp_path, api_mode):
    import base64

    import yaml

    from plugins_providers.testserver import reply

    main, seeing = make_wire_server(), make_wire_server()
    (tmp_path / "red.png").write_bytes(make_png())
    url = seeing.openai_url if api_mode == "chat_completions" else seeing.url
    (hermes_home / "config.yaml").write_text(yaml.safe_dump(
        {"auxiliary": {"vision": {"model": "eyes-1", "base_url": url, "api_mode": api_mode}}}))
    main.push(reply(tool_calls=[("vision_analyze", {"image_url": "red.png", "question": "Which colour?"})]),
              reply("It is red."))
    seeing.push(reply("A red square."))
    out = hermes("run", "--json", "--api-mode", "chat_completions", "--base-url", main.openai_url, "-m", "big-1",
                 "-t", "vision", "look at red.png", cwd=tmp_path,
                 env={"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"})
    assert out.returncode == 0, out.stderr
    assert tool_results(json.loads(out.stdout)) == [{"analysis": "A red square."}]
    [asked] = seeing.requests
    assert asked.body["model"] == "eyes-1" and not asked.body.get("tools")
    parts = asked.body["messages"][-1]["content"]
    encoded = base64.b64encode(make_png()).decode()
    if api_mode == "chat_completions":
        assert parts == [{"type": "text", "text": "Which colour?"},
                         {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}"}}]
    else:
        assert parts == [{"type": "text", "text": "Which colour?"},
                         {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": encoded}}]
    assert len(main.requests) == 2  # the image went to the model that sees, not the conversation's
    seeing.push(reply("OK"))  # hermes doctor asks the model that sees too
    checks = json.loads(hermes("doctor", "--json", env={"OPENAI_API_KEY": "sk-test",
                                                        "ANTHROPIC_API_KEY": "sk-ant-test"}).stdout)
    [line] = [c for c in checks if c["name"] == "auxiliary.vision"]
    assert line["status"] == "ok" and line["detail"].startswith(f"{api_mode}:eyes-1: answered in"), checks


def test_vision_analyze_says_what_it_cannot_look_at(make_agent, site, tmp_path):
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "red.png").write_bytes(make_png())
    calls = [["vision_analyze", {"image_url": str(tmp_path / "missing.png")}],
             ["vision_analyze", {"image_url": str(tmp_path / "notes.txt")}],
             ["vision_analyze", {"image_url": "data:image/png;base64,%%%"}],
             ["vision_analyze", {"image_url": "data:text/plain;base64,aGVsbG8="}],
             ["vision_analyze", {"image_url": f"{site}/data.json"}],
             ["vision_analyze", {"image_url": f"{site}/missing.png"}],
             ["vision_analyze", {"image_url": str(tmp_path / "red.png")}]]
    agent = make_agent(web, script=[{"tool_calls": calls}, {"error": {"reason": "bad_request", "status_code": 400,
                                                                      "message": "this model does not take images"}},
                                    "done"], config={"security": {"allow_private_urls": True}})
    results = tool_results(agent.run_conversation("look"))
    assert results[:6] == [
        {"error": f"vision_analyze: no image file at {tmp_path / 'missing.png'}"},
        {"error": f"vision_analyze: {tmp_path / 'notes.txt'} is not a PNG, JPEG, GIF or WebP image"},
        {"error": "vision_analyze: the data: URL holds no base64 image"},
        {"error": "vision_analyze: the data: URL is not a PNG, JPEG, GIF or WebP image"},
        {"error": f"vision_analyze: {site}/data.json is not a PNG, JPEG, GIF or WebP image"},
        {"error": f"vision_analyze: {site}/missing.png answered HTTP 404 Not Found"}]
    assert results[6] == {"error": "vision_analyze: the model could not look at it: scripted:test-model: "
                                   "bad_request (400): this model does not take images"}


def test_the_website_blocklist_refuses_its_hosts_and_redirects_to_them(make_agent, site, hermes_home):
    """hermes-agent's security.website_blocklist: its domains and shared files, checked before any request and at
    every redirect (a config.yaml of hermes-agent's with a blocklist was unknown keys here, and nothing blocked)."""
    (hermes_home / "blocked.txt").write_text("# the team's list\nwww.Evil.test\n")
    config = {"security": {"allow_private_urls": True, "website_blocklist": {
        "domains": ["https://blocked.example/any/path", "*.sub.test"], "shared_files": ["blocked.txt"]}}}
    urls = ["http://blocked.example/", "http://a.blocked.example/x", "http://x.sub.test/",
            f"{site}/elsewhere?to=http://www.evil.test/", f"{site}/page.html"]
    out = extract(make_agent, urls, config=config)
    errors = [r.get("error") for r in out["results"]]
    assert errors[:4] == [
        "blocked.example is blocked by security.website_blocklist (rule 'blocked.example'): not fetched",
        "a.blocked.example is blocked by security.website_blocklist (rule 'blocked.example'): not fetched",
        "x.sub.test is blocked by security.website_blocklist (rule '*.sub.test'): not fetched",
        "www.evil.test is blocked by security.website_blocklist (rule 'evil.test'): not fetched"]
    assert errors[4] is None and out["results"][4]["title"]
    assert Site.seen == ["/elsewhere?to=http://www.evil.test/", "/page.html"]  # the blocked hosts: never asked
    # *.sub.test leaves sub.test itself; enabled: false turns the list off (the names then do not resolve here)
    config["security"]["website_blocklist"]["enabled"] = False
    out = extract(make_agent, ["http://sub.test/", "http://blocked.example/"], config=config)
    assert all("blocklist" not in r["error"] for r in out["results"])
    # a plugin's extract backend never gets a blocked URL either
    asked = []

    class Reader:
        @hookimpl
        def web_extract_backends(self, agent):
            return {"reader": lambda url: asked.append(url) or {"title": "t", "content": "c"}}

    config["security"]["website_blocklist"]["enabled"] = True
    agent = make_agent(web, Reader(), config={**config, "web": {"extract_backend": "reader"}}, script=[
        {"tool_calls": [["web_extract", {"urls": ["https://www.blocked.example/", "https://fine.example/"]}]]}, "done"])
    [out] = tool_results(agent.run_conversation("read"))
    assert out["results"][0] == {"url": "https://www.blocked.example/",
                                 "error": "blocked by security.website_blocklist (rule 'blocked.example')"}
    assert asked == ["https://fine.example/"]
