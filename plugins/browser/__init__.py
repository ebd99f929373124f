"""Built-in plugin browser: the model uses web pages in a real browser, with hermes-agent's browser tools.

``browser_navigate`` opens a page in a headless Chromium and returns its snapshot: the headings and the elements one
can act on, each with a ref (``@e3``) that ``browser_click``, ``browser_type`` and ``browser_press`` act on;
``browser_snapshot``, ``browser_scroll``, ``browser_back``, ``browser_get_images``, ``browser_vision`` (a screenshot
for a model that sees), ``browser_console`` (what the page logged; a JavaScript expression's value) and
``browser_dialog`` (an alert, confirm or prompt the page opened, as ``browser.dialog_policy`` says) go on from
there (:mod:`plugins.browser.tools`). The tools are offered where selenium (``pip install 'hermes-kernel[browser]'``),
a Chromium or Chrome and chromedriver are installed; ``hermes doctor`` says which is missing.

Each agent has its own browser, started at the first navigation (:mod:`plugins.browser.session`): it ends with the
session, after ``browser.inactivity_timeout`` seconds unused, and with hermes (``kill -9`` too). With
``browser.cdp_url`` the tools drive a Chrome the user started with ``--remote-debugging-port`` instead (their
profile, their logins), which hermes never ends. It runs outside the
tool sandbox, like the web tools, with hermes' environment without the keys. The address rules of the web tools hold
for the URLs the model opens and the pages they lead to: private and local addresses only with
``browser.allow_private_urls`` (or ``security.allow_private_urls``), never a cloud's metadata endpoint or a host of
``security.website_blocklist``, and never a URL, or typed text, that carries a key's value."""

from __future__ import annotations

import functools
import os

from kernel import hookimpl

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def programs(attach: str = "") -> tuple:
    """(the browser, chromedriver) found on PATH, or why not: (None, reason). Attaching to a running browser
    (``browser.cdp_url``), the browser is that address."""
    return _programs(attach, os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)  # asked at every agent's start: one search of PATH while it stays the same
def _programs(attach: str, path: str) -> tuple:
    import importlib.util
    import shutil

    if importlib.util.find_spec("selenium") is None:
        return None, "selenium is not installed (pip install 'hermes-kernel[browser]')"
    browser = attach or next((found for name in BROWSERS if (found := shutil.which(name, path=path))), None)
    if browser is None:
        return None, f"no Chromium or Chrome on PATH ({', '.join(BROWSERS)})"
    driver = shutil.which("chromedriver", path=path)
    if driver is None:
        return None, "no chromedriver on PATH (Debian: apt install chromium-driver)"
    return browser, driver


def address(cdp_url: str) -> str:
    """``host:port`` of a DevTools address as given (http://127.0.0.1:9222, ws://.../devtools/browser/..., or
    host:port), "" for none."""
    from urllib.parse import urlsplit

    cdp_url = cdp_url.strip()
    return urlsplit(cdp_url if "://" in cdp_url else f"//{cdp_url}").netloc if cdp_url else ""


@hookimpl
def register_config(declare):
    declare("browser.command_timeout", float, 30, "seconds a page may take to load, or a script in it to run",
            minimum=1)
    declare("browser.inactivity_timeout", float, 120, "seconds without a browser call after which the browser ends "
            "(its page is gone; 0: it lasts the session)", minimum=0)
    declare("browser.headed", bool, False, "show the browser's window instead of running it headless")
    declare("browser.cdp_url", str, "", "drive a Chrome or Chromium you started with --remote-debugging-port (such "
            "as http://127.0.0.1:9222), its profile and logins, instead of a headless one of hermes' own; hermes never "
            "ends it")
    declare("browser.dialog_policy", str, "must_respond", "a dialog a page opens (alert, confirm, prompt): "
            "must_respond (the model answers it with browser_dialog), auto_dismiss or auto_accept",
            choices=("must_respond", "auto_dismiss", "auto_accept"))
    declare("browser.restrict_evaluate", bool, False, "refuse browser_console expressions that read or send the "
            "page's logins and storage (cookies, localStorage, form values, fetch)")
    declare("browser.allow_unsafe_evaluate", bool, False, "hermes-agent's older override of restrict_evaluate")
    declare("browser.allow_private_urls", bool, False, "let the browser open private and local addresses "
            "(localhost, a router); cloud metadata endpoints stay refused")


def _attach(config) -> str:
    from plugins.tool_args import setting

    return address(str(setting(config, "browser.cdp_url", "", str) or ""))


def _available(config) -> bool:
    """Asked when the tools are offered (never for a command that starts no agent)."""
    return programs(_attach(config))[0] is not None


@hookimpl
def register_tools(register, config):
    from functools import partial

    from plugins.browser.tools import make_tools

    for tool in make_tools(config):
        tool.check = partial(_available, config)
        register(tool)


@hookimpl
def register_toolsets(register):
    register("browser", ["browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
                         "browser_back", "browser_press", "browser_get_images", "browser_vision", "browser_console",
                         "browser_dialog"],
             description="A web browser: open pages, click, type, read what they show")


@hookimpl
def on_session_finalize(agent):
    from plugins.browser.session import STATE

    session = agent.state.pop(STATE, None)
    if session is not None:
        session.close()


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    from plugins.doctor.hookspecs import OK, WARN, Check

    browser, driver = programs(_attach(agent.config))
    if browser is None:
        return [Check("browser", WARN, f"the browser tools are not offered: {driver}")]
    return [Check("browser", OK, f"{browser} with {driver}")]


@hookimpl(optionalhook=True)  # the commands plugin's hook
def register_slash_commands(register):
    register("browser", _slash_browser, "the browser the tools drive: /browser connect [URL] (your Chrome, started "
             "with --remote-debugging-port), disconnect, status (hermes-agent's)")


def _slash_browser(raw_args: str, agent) -> str:
    """``/browser connect [URL] | disconnect | status``: for this chat, the browser tools drive the user's own
    browser (as ``browser.cdp_url``) or hermes' headless one; the page open in the other is closed, never the user's
    browser."""
    words = raw_args.split()
    action = words[0] if words else "status"
    if action not in ("connect", "disconnect", "status") or len(words) > (2 if action == "connect" else 1):
        return "usage: /browser connect [URL] | disconnect | status"
    if action == "status":
        return _status(agent)
    url = ""
    if action == "connect":
        url = words[1] if len(words) > 1 else "http://127.0.0.1:9222"
        found = _devtools(address(url))
        if isinstance(found, str):
            return f"/browser connect: {found}"
    from plugins.browser.session import STATE

    session = agent.state.pop(STATE, None)
    if session is not None:
        session.close()
    agent.config.overrides["browser.cdp_url"] = url
    agent.tools_changed()  # the tools are offered where the browser is there
    if action == "disconnect":
        return "the browser tools use a headless browser of hermes' own again"
    return f"the browser tools drive {found.get('Browser') or 'the browser'} at {address(url)} in this chat " \
           "(browser.cdp_url in config.yaml keeps it)"


def _devtools(where: str):
    """What the browser at ``host:port`` says of itself (DevTools' /json/version), or why nothing answers."""
    import json
    from urllib.error import URLError
    from urllib.request import urlopen

    try:
        with urlopen(f"http://{where}/json/version", timeout=3) as answer:
            return json.loads(answer.read())
    except (URLError, OSError, ValueError) as exc:
        why = getattr(exc, "reason", exc)
        return f"nothing answers at {where} ({why}): start Chrome or Chromium with --remote-debugging-port=" \
               f"{where.rpartition(':')[2] or 9222}"


def _status(agent) -> str:
    from plugins.browser.session import STATE

    attach, open_ = _attach(agent.config), agent.state.get(STATE) is not None
    browser, driver = programs(attach)
    if browser is None:
        return f"no browser: {driver}"
    if attach:
        found = _devtools(attach)
        said = found if isinstance(found, str) else f"{found.get('Browser') or 'a browser'}, answering"
        return f"the browser tools drive your browser at {attach}: {said}"
    return f"the browser tools drive a headless browser of hermes' own ({browser}): " + \
        ("open" if open_ else "started at the first page the model opens")

