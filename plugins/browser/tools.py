"""The browser tools, with hermes-agent's names and arguments: ``browser_navigate``, ``browser_snapshot``,
``browser_click``, ``browser_type``, ``browser_scroll``, ``browser_back``, ``browser_press``, ``browser_get_images``,
``browser_vision``, ``browser_console`` and ``browser_dialog``."""

from __future__ import annotations

import json
import re
import time
from typing import Any, Callable

from kernel.types import Tool, ToolError
from plugins.browser.page import IMAGES, MOST_ELEMENTS, REF_ATTRIBUTE, SNAPSHOT, key_code, ref_of, shown
from plugins.tool_args import arg, check_args, clip, setting

SNAPSHOT_CHARS = 15_000  # of a snapshot the model reads (hermes-agent's)
MOST_IMAGES = 50
SETTLE = 0.3  # seconds after an action for what it set off (a navigation, a script) to start
POLICIES = ("must_respond", "auto_dismiss", "auto_accept")  # browser.dialog_policy (hermes-agent's)
# what browser.restrict_evaluate keeps a script of the model's from reading or sending: the page's logins and storage
SENSITIVE = re.compile(r"document\.cookie|localStorage|sessionStorage|indexedDB|navigator\.clipboard|\bfetch\s*\(|"
                       r"XMLHttpRequest|WebSocket|sendBeacon|\.value\b|FormData|credentials")


def _settings(config) -> dict:
    policy = str(setting(config, "browser.dialog_policy", "must_respond", str) or "").strip().lower()
    return {"allow_private": bool(setting(config, "browser.allow_private_urls", False, bool)
                                  or setting(config, "security.allow_private_urls", False, bool)),
            "dialogs": policy if policy in POLICIES else "must_respond",
            "restrict": bool(setting(config, "browser.restrict_evaluate", False, bool))
            and not setting(config, "browser.allow_unsafe_evaluate", False, bool)}


def _dialog(driver, policy: str) -> str:
    """A dialog the page opened (alert, confirm, prompt): answered as ``browser.dialog_policy`` says, or left open for
    browser_dialog; what the model reads of it ("" for none)."""
    from selenium.common.exceptions import NoAlertPresentException

    try:
        alert = driver.switch_to.alert
        text = alert.text
    except NoAlertPresentException:
        return ""
    if policy == "must_respond":
        return (f"; the page opened a dialog saying {text[:500]!r}: the page waits for it. Answer it with "
                "browser_dialog (accept or dismiss) before anything else")
    alert.accept() if policy == "auto_accept" else alert.dismiss()
    return f"; the page's dialog said {text[:500]!r}: {policy[5:]}ed (browser.dialog_policy)"


def _session(ctx):
    from plugins.browser.session import session_of

    return session_of(ctx.agent)


def _settled(driver, timeout: float) -> None:
    """Wait (at most ``timeout``) until the page is loaded: after a click or a key, a navigation may have begun."""
    time.sleep(SETTLE)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if driver.execute_script("return document.readyState") == "complete":
                return
        except Exception:  # noqa: BLE001 - between two pages: ask again
            pass
        time.sleep(0.1)


def _snapshot(driver, full: bool = False) -> str:
    return shown(driver.execute_script(SNAPSHOT, full, MOST_ELEMENTS), SNAPSHOT_CHARS)


def _element(driver, raw: str, tool: str):
    from selenium.webdriver.common.by import By

    ref = ref_of(raw)
    if not ref:
        raise ToolError(f"{tool}: 'ref' must be an element's ref from the snapshot, such as @e5 (got {raw[:40]!r})")
    found = driver.find_elements(By.CSS_SELECTOR, f'[{REF_ATTRIBUTE}="{ref}"]')
    if not found:
        raise ToolError(f"{tool}: no element @{ref} on the page now (it changed since the snapshot): take a new "
                        "browser_snapshot")
    return found[0]


def _checked_url(url: str, ctx, settings: dict) -> str:
    from plugins.web import blocklist, refused
    from plugins.web.fetching import check_url, normalized

    url = normalized(url)
    if why := refused(url, ctx.agent, "URL"):
        raise ToolError(f"browser_navigate: {why}")
    check_url(url, settings["allow_private"], blocklist(ctx.agent.config))
    return url


def make_tools(config=None) -> list:
    settings = _settings(config)

    def navigate(args, ctx):
        url = _checked_url(arg(check_args(args, "browser_navigate"), "url", str, tool="browser_navigate"), ctx,
                           settings)
        session = _session(ctx)
        ctx.progress(f"opening {url[:80]}")

        def go(driver):
            try:
                driver.get(url)
            except Exception as exc:  # a page still loading at the timeout is read as it is
                failed = re.search(r"net::ERR_\w+", str(exc))
                if failed:  # no page: a host not found (a metadata endpoint's never is), a refused connection
                    raise ToolError(f"browser_navigate: {url[:80]} could not be opened ({failed.group()})") from None
                if "timeout" not in type(exc).__name__.lower():
                    raise
            landed = driver.current_url
            try:  # where redirects led: the same address rules
                _checked_url(landed, ctx, settings)
            except ToolError as exc:
                driver.get("about:blank")
                raise ToolError(f"browser_navigate: {url[:80]} led to {landed[:80]}: {exc}") from None
            return _snapshot(driver)

        return session.run(go, fresh_ok=True)

    def snapshot(args, ctx):
        full = arg(check_args(args, "browser_snapshot"), "full", bool, tool="browser_snapshot", default=False)
        def look(driver):  # a dialog a timer opened since: what it asks, or answered as the policy says
            said = _dialog(driver, settings["dialogs"]).lstrip("; ")
            if said and settings["dialogs"] == "must_respond":
                return said
            return _snapshot(driver, full) + (f"\n({said})" if said else "")

        return _session(ctx).run(look)

    def dialog(args, ctx):
        from selenium.common.exceptions import NoAlertPresentException

        args = check_args(args, "browser_dialog")
        action = arg(args, "action", str, tool="browser_dialog").strip().lower()
        if action not in ("accept", "dismiss"):
            raise ToolError("browser_dialog: 'action' must be accept or dismiss")
        answer = arg(args, "prompt_text", str, tool="browser_dialog", default=None)
        session = _session(ctx)

        def respond(driver):
            try:
                alert = driver.switch_to.alert
                text = alert.text
            except NoAlertPresentException:
                raise ToolError("browser_dialog: no dialog is open") from None
            if answer is not None and action == "accept":
                alert.send_keys(answer)  # a prompt's answer
            alert.accept() if action == "accept" else alert.dismiss()
            _settled(driver, session.timeout)
            return f"{action}ed the dialog saying {text[:200]!r}; the page is now:\n{_snapshot(driver)}"

        return session.run(respond)

    def act(tool: str, work: Callable[[Any, dict], str]) -> Callable:
        """A tool that acts on the page and returns where the page is then (its snapshot for a new address)."""
        def handler(args, ctx):
            args = check_args(args, tool)
            session = _session(ctx)

            def run(driver):
                before = driver.current_url
                done = work(driver, args, ctx)
                if said := _dialog(driver, settings["dialogs"]):
                    if settings["dialogs"] == "must_respond":
                        return done + said
                    done += said
                _settled(driver, session.timeout)
                if driver.current_url != before:
                    return f"{done}; the page is now:\n{_snapshot(driver)}"
                return f"{done} (browser_snapshot shows the page now)"

            return session.run(run)
        return handler

    def click(driver, args, ctx):
        element = _element(driver, arg(args, "ref", str, tool="browser_click"), "browser_click")
        try:
            element.click()
        except Exception as exc:  # covered by another element, or not clickable as WebDriver sees it: as a script would
            if "intercepted" not in str(exc) and "not interactable" not in str(exc):
                raise
            driver.execute_script("arguments[0].click()", element)
        return f"clicked {args['ref']}"

    def type_text(driver, args, ctx):
        from plugins.web import refused

        text = arg(args, "text", str, tool="browser_type")
        if why := refused(text, ctx.agent, "text"):
            raise ToolError(f"browser_type: {why}")
        element = _element(driver, arg(args, "ref", str, tool="browser_type"), "browser_type")
        if element.get_attribute("isContentEditable") == "true":
            driver.execute_script("arguments[0].textContent = ''", element)
        else:
            element.clear()
        element.send_keys(text)
        return f"typed {len(text)} characters into {args['ref']}"

    def press(driver, args, ctx):
        from selenium.webdriver.common.action_chains import ActionChains

        name = arg(args, "key", str, tool="browser_press")
        code = key_code(name)
        if not code:
            raise ToolError(f"browser_press: unknown key {name[:30]!r}: Enter, Tab, Escape, Backspace, Delete, "
                            "Space, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, or one character")
        ActionChains(driver).send_keys(code).perform()
        return f"pressed {name}"

    def scroll(driver, args, ctx):
        direction = arg(args, "direction", str, tool="browser_scroll").strip().lower()
        if direction not in ("up", "down"):
            raise ToolError("browser_scroll: 'direction' must be up or down")
        driver.execute_script("window.scrollBy(0, arguments[0] * window.innerHeight * 0.8)",
                              1 if direction == "down" else -1)
        return f"scrolled {direction}"

    def back(driver, args, ctx):
        driver.back()
        return "went back"

    def images(args, ctx):
        check_args(args, "browser_get_images")
        found = _session(ctx).run(lambda driver: driver.execute_script(IMAGES, MOST_IMAGES))
        return {"images": found, "count": len(found)}

    def vision(args, ctx):
        from plugins.web.vision import DEFAULT_QUESTION, look

        args = check_args(args, "browser_vision")
        question = arg(args, "question", str, tool="browser_vision", default="").strip() or DEFAULT_QUESTION
        png = _session(ctx).run(lambda driver: driver.get_screenshot_as_png())
        import os

        from plugins.tool_args import kept

        name = f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{time.monotonic_ns() % 10**6}.png"
        path = kept("browser-screenshots", name, png, 20)  # the newest 20 stay
        return {"analysis": look(ctx, png, question, "browser_vision"), "screenshot_path": path}

    def console(args, ctx):
        args = check_args(args, "browser_console")
        expression = arg(args, "expression", str, tool="browser_console", default="")
        clear = arg(args, "clear", bool, tool="browser_console", default=False)
        session = _session(ctx)

        def read(driver):
            session.console += [{"level": e.get("level"), "message": e.get("message")}
                                for e in driver.get_log("browser")]
            found: dict = {"messages": session.console[-100:]}
            if expression.strip():
                if settings["restrict"] and (sensitive := SENSITIVE.search(expression)):
                    raise ToolError(f"browser_console: the expression uses {sensitive.group()!r}, which "
                                    "browser.restrict_evaluate keeps scripts from (the page's logins and storage)")
                value = driver.execute_script("return eval(arguments[0])", expression)
                found["result"] = clip(json.dumps(value, ensure_ascii=False, default=str), SNAPSHOT_CHARS)
            if clear:
                session.console = []
            return found

        return session.run(read)

    ref = {"ref": {"type": "string", "description": "The element's ref from the snapshot (e.g. '@e5')"}}
    needs_page = " Needs a page open with browser_navigate."
    return [
        Tool("browser_navigate", "Open a URL in the browser (a real Chromium: scripts run, forms work) and return "
             "the page's snapshot: its headings and every element you can act on, each with a ref (@e1, @e2...) "
             "for browser_click and browser_type. To only read a page, web_extract is faster; the browser is for "
             "pages you interact with or that need their scripts.",
             {"type": "object", "properties": {"url": {"type": "string", "description": "The URL (http or https)"}},
              "required": ["url"]}, navigate, toolset="browser"),
        Tool("browser_snapshot", "The page as it is now: headings and elements with refs; full=true adds all of "
             "its text. Refs are renumbered by each snapshot: use the latest." + needs_page,
             {"type": "object", "properties": {"full": {"type": "boolean", "description": "Add the page's text"}}},
             snapshot, toolset="browser"),
        Tool("browser_click", "Click the element with this ref (a link, a button, a checkbox)." + needs_page,
             {"type": "object", "properties": ref, "required": ["ref"]}, act("browser_click", click),
             toolset="browser"),
        Tool("browser_type", "Type text into the field with this ref, replacing what it held." + needs_page,
             {"type": "object", "properties": {**ref, "text": {"type": "string", "description": "What to type"}},
              "required": ["ref", "text"]}, act("browser_type", type_text), toolset="browser"),
        Tool("browser_scroll", "Scroll the page up or down by most of a screen." + needs_page,
             {"type": "object", "properties": {"direction": {"type": "string", "enum": ["up", "down"]}},
              "required": ["direction"]}, act("browser_scroll", scroll), toolset="browser"),
        Tool("browser_back", "Go back to the previous page." + needs_page, {"type": "object", "properties": {}},
             act("browser_back", back), toolset="browser"),
        Tool("browser_press", "Press a key in the page: Enter (submit a form), Tab, Escape, ArrowDown..." + needs_page,
             {"type": "object", "properties": {"key": {"type": "string", "description": "The key, e.g. 'Enter'"}},
              "required": ["key"]}, act("browser_press", press), toolset="browser"),
        Tool("browser_get_images", "The page's images: their URLs, alt texts and sizes (for vision_analyze)."
             + needs_page, {"type": "object", "properties": {}}, images, toolset="browser"),
        Tool("browser_vision", "Look at the page as it shows: a screenshot goes to a model that sees, which "
             "answers the question (a layout, a chart, a CAPTCHA, what the text snapshot misses). Returns its "
             "answer and the screenshot's file." + needs_page,
             {"type": "object", "properties": {"question": {"type": "string", "description": "What to find out"}},
              "required": ["question"]}, vision, toolset="browser"),
        Tool("browser_dialog", "Answer the dialog the page opened (an alert, a confirm, a prompt), which it waits "
             "for: accept (OK, with 'prompt_text' for a prompt) or dismiss (Cancel)." + needs_page,
             {"type": "object", "properties": {
                 "action": {"type": "string", "enum": ["accept", "dismiss"]},
                 "prompt_text": {"type": "string", "description": "A prompt dialog's answer"}},
              "required": ["action"]}, dialog, toolset="browser"),
        Tool("browser_console", "What the page logged (console messages and script errors) since it was opened; "
             "with 'expression', also the value of that JavaScript in the page (document.title, ...)." + needs_page,
             {"type": "object", "properties": {
                 "expression": {"type": "string", "description": "JavaScript to evaluate in the page"},
                 "clear": {"type": "boolean", "description": "Forget the messages read"}}}, console,
             toolset="browser"),
    ]
