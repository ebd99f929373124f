"""The browser plugin with the system's Chromium and chromedriver (scripts/install_test_system_packages.sh) against
pages served on 127.0.0.1: hermes-agent's browser tools through the agent loop, the address rules, and a browser that
ends with its session, when unused, and with hermes at kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from plugins import browser
from plugins.browser import programs
from plugins.browser.session import STATE

pytestmark = pytest.mark.skipif(programs()[0] is None, reason=f"no browser here: {programs()[1]}")

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a2e1f3c30000000049454e44ae426082")
PAGES = {
    "/": "<title>Shop</title><h1>Welcome</h1><a href='/login'>Sign in</a>"
         "<script>console.error('boom from the shop')</script>",
    "/ask": "<title>Ask</title><button onclick=\"document.title = confirm('Delete it?') ? 'yes' : 'no'\">Delete"
            "</button><button onclick=\"document.title = prompt('Your name?') || 'none'\">Name</button>",
    "/login": "<title>Sign in</title><h2>Your account</h2><form action='/hello'>"
              "<label>Email <input name='email'></label><label>Password <input type='password' name='pw'></label>"
              "<button>Submit</button></form>",
}


class Site(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        parts = urlsplit(self.path)
        if parts.path == "/dot.png":
            body, kind = PNG, "image/png"
        elif parts.path == "/hello":
            email = parse_qs(parts.query).get("email", ["nobody"])[0]
            body, kind = (f"<title>Hello</title><h1>Hello {email}</h1><img src='/dot.png' alt='a dot' width=40>"
                          f"<div style='height:3000px'></div><p>the end</p>").encode(), "text/html"
        elif parts.path == "/away":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.end_headers()
            return
        else:
            body, kind = PAGES.get(parts.path, "<title>Missing</title>").encode(), "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def results(result) -> list:
    return [m["content"] for m in result["messages"] if m["role"] == "tool"]


def test_a_model_signs_in_through_the_browser_tools(make_agent, site):
    """Navigate, click a link by its ref, type into the form, press Enter, then back, scroll, the images, the console
    and a screenshot a model that sees looks at (the scripted model answers the vision call too)."""
    agent = make_agent(browser, config={"browser": {"allow_private_urls": True}}, script=[
        {"tool_calls": [("browser_navigate", {"url": site})]},
        {"tool_calls": [("browser_click", {"ref": "@e1"})]},
        {"tool_calls": [("browser_type", {"ref": "@e1", "text": "ann@example.com"}),
                        ("browser_type", {"ref": "@e2", "text": "secret"}),
                        ("browser_snapshot", {})]},
        {"tool_calls": [("browser_press", {"key": "Enter"})]},
        {"tool_calls": [("browser_get_images", {}), ("browser_scroll", {"direction": "down"}),
                        ("browser_snapshot", {"full": True}), ("browser_console", {"expression": "window.scrollY > 0"})]},
        {"tool_calls": [("browser_vision", {"question": "What does the page greet?"})]},
        "It greets Ann.",  # the vision call's answer
        {"tool_calls": [("browser_back", {}), ("browser_click", {"ref": "e9"})]},
        "signed in",
    ])
    result = agent.run_conversation("sign in")
    assert result["final_response"] == "signed in", result
    opened, clicked, typed, typed_pw, form, pressed, images, scrolled, full, console, vision, back, bad = \
        results(result)
    assert opened.splitlines()[:5] == ["Shop", f"{site}/", "", "# Welcome", '[@e1] link "Sign in" -> /login']
    assert clicked.startswith("clicked @e1; the page is now:\nSign in\n")
    assert typed == "typed 15 characters into @e1 (browser_snapshot shows the page now)"
    assert form.splitlines()[3:] == ["## Your account", '[@e1] textbox "Email" = "ann@example.com"',
                                     '[@e2] textbox "Password" = "(a password)"', '[@e3] button "Submit"']
    assert pressed.startswith("pressed Enter; the page is now:\nHello\n") and "# Hello ann@example.com" in pressed
    assert json.loads(images) == {"images": [{"src": f"{site}/dot.png", "alt": "a dot", "width": 1, "height": 1}],
                                  "count": 1}
    assert scrolled == "scrolled down (browser_snapshot shows the page now)"
    assert "--- the page's text ---\nHello ann@example.com" in full and full.rstrip().endswith("the end")
    console = json.loads(console)
    assert console["result"] == "true"
    assert any("boom from the shop" in m["message"] and m["level"] == "SEVERE" for m in console["messages"])
    vision = json.loads(vision)
    assert vision["analysis"] == "It greets Ann." and open(vision["screenshot_path"], "rb").read(8) == PNG[:8]
    [aux] = [r for r in agent.scripted.requests if isinstance(r.messages[-1]["content"], list)]  # the vision call
    assert [p["type"] for p in aux.messages[-1]["content"]] == ["text", "image_url"]
    assert aux.messages[-1]["content"][0]["text"] == "What does the page greet?"
    assert back.startswith("went back; the page is now:\nSign in\n")
    assert bad == '{"error": "browser_click: no element @e9 on the page now (it changed since the snapshot): take ' \
                  'a new browser_snapshot"}'

    session = agent.state[STATE]
    driver_pid = session.driver.service.process.pid
    agent.close()  # the session ends: so does its browser
    assert session.driver is None and not os.path.exists(f"/proc/{driver_pid}")


def test_addresses_the_web_tools_refuse_and_a_page_that_needs_opening_first(make_agent, site):
    agent = make_agent(browser, script=[
        {"tool_calls": [("browser_snapshot", {}), ("browser_navigate", {"url": site}),
                        ("browser_navigate", {"url": "file:///etc/passwd"})]},
        "refused"])
    first, local, file_url = (json.loads(r)["error"] for r in results(agent.run_conversation("go")))
    assert first == "no page is open: open one with browser_navigate first"
    assert local == "127.0.0.1 is a private or local address (127.0.0.1): not fetched (security.allow_private_urls: " \
                    "true in config.yaml allows it)"
    assert file_url == "only http and https URLs are fetched, not 'file:///etc/passwd'"

    agent = make_agent(browser, config={"browser": {"allow_private_urls": True}}, script=[
        {"tool_calls": [("browser_navigate", {"url": f"{site}/away"})]}, "refused"])
    [redirected] = results(agent.run_conversation("go"))  # the browser cannot even resolve a metadata endpoint;
    # Chromium reports the failed redirect as the load's error, or as the address it stopped at, which is refused
    assert json.loads(redirected)["error"] in (
        f"browser_navigate: {site}/away could not be opened (net::ERR_NAME_NOT_RESOLVED)",
        f"browser_navigate: {site}/away led to http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a cloud "
        "metadata endpoint (169.254.169.254): never fetched")


def test_an_unused_browser_ends_and_the_model_is_told(make_agent, site):
    agent = make_agent(browser, config={"browser": {"allow_private_urls": True, "inactivity_timeout": 1}}, script=[
        {"tool_calls": [("browser_navigate", {"url": site})]}, "open",
        {"tool_calls": [("browser_snapshot", {})]}, "gone"])
    agent.run_conversation("open")
    pid = agent.state[STATE].driver.service.process.pid
    time.sleep(2.5)
    assert not os.path.exists(f"/proc/{pid}")
    [said] = results(agent.run_conversation("look again"))[-1:]
    assert json.loads(said)["error"] == ("the browser was closed after 1 s without use (browser.inactivity_timeout): "
                                         "open one with browser_navigate first")


def test_the_browser_ends_with_hermes_at_kill_9(tmp_path, site):
    """hermes killed with SIGKILL runs no clean-up: the guard ends chromedriver and Chromium."""
    own_tmp = tmp_path / "tmp"  # the profile folder is made here: the browser using it is this test's
    own_tmp.mkdir()
    (tmp_path / "script.json").write_text(json.dumps([
        {"tool_calls": [["browser_navigate", {"url": site}]]},
        {"tool_calls": [["terminal", {"command": "sleep 60"}]]}, "never"]))
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home"), "TMPDIR": str(own_tmp)}
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.yaml").write_text("browser:\n  allow_private_urls: true\n")
    from tests.conftest import hermes_command

    run = subprocess.Popen([*hermes_command(), "run", "--api-mode", "scripted", "--base-url",
                            str(tmp_path / "script.json"), "--yolo", "go"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=tmp_path)

    def group_of_our_browser() -> int:
        """The process group of the Chromium using a profile in own_tmp (chromedriver's, and its guard's), or 0."""
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if f"--user-data-dir={own_tmp}".encode() in fh.read():
                        return os.getpgid(int(pid))
            except OSError:
                pass
        return 0

    def alive(group: int) -> list:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
                if int(fields[2]) == group and fields[0] != b"Z":
                    found.append(pid)
            except (OSError, IndexError):
                pass
        return found

    deadline, group = time.monotonic() + 30, 0
    while not group and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.2)
        group = group_of_our_browser()
    assert group, run.stderr.read() if run.poll() is not None else "no browser started"
    assert len(alive(group)) >= 3  # the guard, chromedriver, Chromium's processes
    time.sleep(1)  # the page opened, the next step's command running
    run.send_signal(signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 10
    while alive(group) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert alive(group) == []


def users_browser(tmp_path) -> tuple:
    """(the process, its DevTools port) of a Chromium started as a user would, with --remote-debugging-port."""
    profile = tmp_path / "profile"
    user = subprocess.Popen([programs()[0], "--headless=new", "--remote-debugging-port=0", f"--user-data-dir={profile}",
                             "--no-first-run", *(["--no-sandbox"] if os.geteuid() == 0 else []), "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not (profile / "DevToolsActivePort").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return user, (profile / "DevToolsActivePort").read_text().split()[0]


def test_browser_cdp_url_drives_a_browser_the_user_started_and_leaves_it_running(make_agent, site, tmp_path):
    """hermes-agent's browser.cdp_url: a Chromium started with --remote-debugging-port (its profile, its logins) is
    driven, and still runs, with the page open, after the session ends."""
    from urllib.request import urlopen

    user, port = users_browser(tmp_path)
    try:
        agent = make_agent(browser, config={"browser": {"cdp_url": f"http://127.0.0.1:{port}",
                                                        "allow_private_urls": True}},
                           script=[{"tool_calls": [("browser_navigate", {"url": f"{site}/login"})]}, "there"])
        [page] = results(agent.run_conversation("go"))
        assert page.startswith("Sign in\n")
        agent.close()
        assert user.poll() is None  # still running
        pages = json.loads(urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5).read())
        assert f"{site}/login" in [p["url"] for p in pages]
    finally:
        user.kill()
        user.wait()


def test_slash_browser_connects_the_chat_to_the_users_browser_and_back(make_agent, site, tmp_path):
    """hermes-agent's /browser connect|disconnect|status: a chat's browser tools move to a Chromium the user started
    with --remote-debugging-port, and back to hermes' own; nothing answering is one line."""
    from urllib.request import urlopen

    agent = make_agent(browser, config={"browser": {"allow_private_urls": True}},
                       script=[{"tool_calls": [("browser_navigate", {"url": f"{site}/"})]}, "here",
                               {"tool_calls": [("browser_navigate", {"url": f"{site}/login"})]}, "there",
                               {"tool_calls": [("browser_navigate", {"url": f"{site}/ask"})]}, "back"])
    assert browser._slash_browser("", agent).startswith("the browser tools drive a headless browser of hermes' own (")
    results(agent.run_conversation("open the shop"))
    own = agent.state[STATE]
    assert browser._slash_browser("connect http://127.0.0.1:9", agent) == (
        "/browser connect: nothing answers at 127.0.0.1:9 ([Errno 111] Connection refused): start Chrome or "
        "Chromium with --remote-debugging-port=9")
    assert agent.state[STATE] is own  # a failed connect changes nothing
    assert browser._slash_browser("open", agent) == "usage: /browser connect [URL] | disconnect | status"

    user, port = users_browser(tmp_path)
    try:
        said = browser._slash_browser(f"connect http://127.0.0.1:{port}", agent)
        assert said.startswith("the browser tools drive ") and "Chrome/" in said and f" at 127.0.0.1:{port} in this " \
            "chat (browser.cdp_url in config.yaml keeps it)" in said
        assert own.driver is None  # hermes' own browser closed
        status = browser._slash_browser("status", agent)
        assert status.startswith(f"the browser tools drive your browser at 127.0.0.1:{port}: ") and "Chrome/" in status
        assert results(agent.run_conversation("sign in"))[-1].startswith("Sign in\n")
        pages = json.loads(urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5).read())
        assert f"{site}/login" in [p["url"] for p in pages]  # in the user's browser

        assert browser._slash_browser("disconnect", agent) == "the browser tools use a headless browser of hermes' " \
                                                              "own again"
        assert results(agent.run_conversation("ask"))[-1].startswith("Ask\n")
        assert user.poll() is None and agent.state[STATE].attach == ""
        pages = json.loads(urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5).read())
        assert f"{site}/ask" not in [p["url"] for p in pages]
        agent.close()
    finally:
        user.kill()
        user.wait()


def test_dialogs_wait_for_browser_dialog_or_are_answered_as_the_policy_says(make_agent, site):
    """hermes-agent's browser.dialog_policy: must_respond (its default) leaves a confirm or prompt for browser_dialog;
    auto_dismiss answers it; browser.restrict_evaluate keeps the page's cookies from a script."""
    agent = make_agent(browser, config={"browser": {"allow_private_urls": True}}, script=[
        {"tool_calls": [("browser_navigate", {"url": f"{site}/ask"})]},
        {"tool_calls": [("browser_click", {"ref": "@e1"})]},
        {"tool_calls": [("browser_snapshot", {})]},
        {"tool_calls": [("browser_dialog", {"action": "accept"})]},
        {"tool_calls": [("browser_click", {"ref": "@e2"})]},
        {"tool_calls": [("browser_dialog", {"action": "accept", "prompt_text": "Ann"})]},
        {"tool_calls": [("browser_dialog", {"action": "dismiss"})]},
        "answered"])
    _, clicked, waiting, accepted, _, named, none = results(agent.run_conversation("go"))
    assert clicked == ("clicked @e1; the page opened a dialog saying 'Delete it?': the page waits for it. Answer it "
                       "with browser_dialog (accept or dismiss) before anything else")
    assert waiting.startswith("the page opened a dialog saying 'Delete it?'")
    assert accepted.startswith("accepted the dialog saying 'Delete it?'; the page is now:\nyes\n")
    assert named.startswith("accepted the dialog saying 'Your name?'; the page is now:\nAnn\n")
    assert json.loads(none)["error"] == "browser_dialog: no dialog is open"

    agent = make_agent(browser, config={"browser": {"allow_private_urls": True, "dialog_policy": "auto_dismiss",
                                                    "restrict_evaluate": True}}, script=[
        {"tool_calls": [("browser_navigate", {"url": f"{site}/ask"})]},
        {"tool_calls": [("browser_click", {"ref": "@e1"}), ("browser_console", {"expression": "document.title"}),
                        ("browser_console", {"expression": "document.cookie"})]},
        "dismissed"])
    _, clicked, title, cookie = results(agent.run_conversation("go"))
    assert clicked == "clicked @e1; the page's dialog said 'Delete it?': dismissed (browser.dialog_policy) " \
                      "(browser_snapshot shows the page now)"
    assert json.loads(json.loads(title)["result"]) == "no"
    assert json.loads(cookie)["error"] == ("browser_console: the expression uses 'document.cookie', which "
                                           "browser.restrict_evaluate keeps scripts from (the page's logins and storage)")
