"""One agent's browser: a headless Chromium driven through chromedriver (selenium), started at its first use.

chromedriver runs under the MCP servers' guard (:mod:`plugins.mcp.guard`) in a process group of its own, with the
Chromium it starts: both end with hermes however it ends, ``kill -9`` included. The browser also ends with the
session (``on_session_finalize``), and after ``browser.inactivity_timeout`` seconds without a call; the next call
starts a new one and says the page is gone. Its profile is a temporary folder, removed with it."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any, Optional

from kernel.types import ToolError
from plugins.browser import address, programs
from plugins.tool_args import tool_environment

STATE = "browser.session"  # agent.state: the agent's BrowserSession
_open: set = set()  # every session of this process, for the exit


class BrowserSession:
    """The browser of one agent; every call goes through :meth:`run`, one at a time."""

    def __init__(self, config: Any, environment: Optional[dict] = None):
        from plugins.tool_args import setting

        self.environment = environment  # the browser's: hermes' without the keys

        self.timeout = setting(config, "browser.command_timeout", 30.0, float, 1)
        self.idle = setting(config, "browser.inactivity_timeout", 120.0, float, 0)
        self.headed = setting(config, "browser.headed", False, bool)
        self.attach = address(str(setting(config, "browser.cdp_url", "", str) or ""))  # the user's own browser
        self.driver: Any = None
        self.profile = ""
        self.closed_idle = False  # the last browser ended for want of use: the next call says so
        self.console: list = []  # what the page logged, kept between browser_console calls
        self._lock = threading.RLock()
        self._timer: Optional[threading.Timer] = None

    def run(self, work, fresh_ok: bool = False):
        """``work(driver)`` on this browser (started now if it is not running). A call other than a navigation
        (``fresh_ok``) on a browser started for it has no page to act on: that is the error the model reads."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            try:
                if self.driver is None:
                    if not fresh_ok:
                        why = (f"the browser was closed after {self.idle:g} s without use (browser.inactivity_timeout)"
                               if self.closed_idle else "no page is open")
                        raise ToolError(f"{why}: open one with browser_navigate first")
                    self._start()
                return work(self.driver)
            except ToolError:
                raise
            except Exception as exc:  # selenium's errors: their first line, without the driver's stack
                from selenium.common.exceptions import WebDriverException

                if not isinstance(exc, WebDriverException):
                    raise
                message = said(exc)
                if "invalid session id" in message or "disconnected" in message or "no such window" in message:
                    self.close()  # the browser is gone (it crashed, or was killed): the next navigation starts one
                raise ToolError(f"the browser: {message[:300]}") from None
            finally:
                if self.driver is not None and self.idle:
                    self._timer = threading.Timer(self.idle, self._expire)
                    self._timer.daemon = True
                    self._timer.start()

    def _start(self) -> None:
        import importlib.util
        import shutil
        import tempfile

        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        guard = importlib.util.find_spec("plugins.mcp.guard").origin  # its file, not imported: the guard runs alone
        browser, driver = programs(self.attach)
        if browser is None:
            raise ToolError(f"the browser cannot start: {driver}")

        class Guarded(Service):  # python -I -S guard.py HERMES_PID chromedriver --port=N ...
            def command_line_args(self) -> list:
                return ["-I", "-S", guard, str(os.getpid()), driver, *super().command_line_args()]

        options = webdriver.ChromeOptions()
        if self.attach:  # the user's browser, its profile and its logins: only driven, never ended here
            options.debugger_address = self.attach
        else:
            self._own_browser(options, browser, tempfile.mkdtemp(prefix="hermes-browser-"))
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        options.unhandled_prompt_behavior = "ignore"  # a dialog waits for the tools (browser.dialog_policy)
        environment = dict(self.environment if self.environment is not None else os.environ)
        if len(tempfile.gettempdir()) > 40 and os.path.isdir("/tmp"):  # Chromium's singleton socket lives there, and
            environment["TMPDIR"] = "/tmp"  # a socket's path may not pass 107 bytes: it would exit as it starts
        service = Guarded(executable_path=sys.executable, env=environment, popen_kw={"start_new_session": True})
        try:
            self.driver = webdriver.Chrome(service=service, options=options)
        except Exception as exc:
            if self.profile:
                shutil.rmtree(self.profile, ignore_errors=True)
                self.profile = ""
            raise ToolError(f"the browser cannot start ({browser}, {driver}): {said(exc)[:300]}") from None
        self.driver.set_page_load_timeout(self.timeout)
        self.driver.set_script_timeout(self.timeout)
        self.closed_idle, self.console = False, []
        _open.add(self)

    def _own_browser(self, options: Any, browser: str, profile: str) -> None:
        """A Chromium of this session's own: headless (unless ``browser.headed``), a fresh profile."""
        from plugins.web.fetching import METADATA_ADDRESSES, METADATA_HOSTS

        options.binary_location, self.profile = browser, profile
        for flag in ("--disable-gpu", "--window-size=1280,900", f"--user-data-dir={self.profile}",
                     "--no-first-run", "--disable-dev-shm-usage",
                     "--disable-crash-reporter", "--disable-breakpad",  # its handler would live outside the group
                     *(() if self.headed else ("--headless=new",)),
                     *(("--no-sandbox",) if os.geteuid() == 0 else ())):  # Chromium refuses root with its sandbox
            options.add_argument(flag)
        # a page (or a redirect) never reaches a cloud's metadata endpoint: the browser cannot resolve it at all
        unknown = ", ".join(f"MAP {host} ~NOTFOUND" for host in sorted(METADATA_HOSTS | METADATA_ADDRESSES))
        options.add_argument(f"--host-resolver-rules={unknown}")

    def _expire(self) -> None:
        with self._lock:
            if self.driver is not None:
                self.close()
                self.closed_idle = True

    def close(self) -> None:
        """End the browser (its page is gone); a later navigation starts another."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            driver, self.driver = self.driver, None
            _open.discard(self)
            if driver is not None:
                try:
                    driver.quit()
                except Exception:  # noqa: BLE001 - already gone: its guard ends what is left
                    pass
            if self.profile:
                import shutil

                shutil.rmtree(self.profile, ignore_errors=True)
                self.profile = ""


def said(exc: BaseException) -> str:
    """A selenium error's first line, without chromedriver's stack."""
    text = (getattr(exc, "msg", None) or str(exc) or type(exc).__name__).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def session_of(agent: Any) -> BrowserSession:
    session = agent.state.get(STATE)
    if session is None:
        secrets = getattr(agent, "secrets", None)
        session = agent.state[STATE] = BrowserSession(agent.config, tool_environment(secrets) if secrets else None)
    return session


@atexit.register
def _close_all() -> None:
    for session in list(_open):
        session.close()
