"""A gateway turn watched while it runs, as hermes-agent's gateway watches one: "typing" shown, a line now and then
saying it still works, and a turn that does nothing for too long told, then stopped."""

from __future__ import annotations

import logging
import os
import threading
import time

from plugins.gateway.hookspecs import PlatformError

log = logging.getLogger("hermes.gateway")
TYPING_EVERY = 4.0  # seconds: Telegram shows "typing" for about five
WATCHED = {"agent.gateway_notify_interval": "HERMES_AGENT_NOTIFY_INTERVAL",  # key: hermes-agent's variable for it
           "agent.gateway_timeout_warning": "HERMES_AGENT_TIMEOUT_WARNING",
           "agent.gateway_timeout": "HERMES_AGENT_TIMEOUT"}


def watch_setting(config, key: str) -> float:
    """Seconds of a :data:`WATCHED` key; its hermes-agent variable wins, as there (0: off)."""
    try:
        return max(float(os.environ.get(WATCHED[key], "") or config.get(key) or 0), 0.0)
    except ValueError:
        return max(float(config.get(key) or 0), 0.0)


def watch(gateway, chat, done: threading.Event) -> None:
    """Until ``done``: "typing" shown in ``chat``; every ``agent.gateway_notify_interval``
    seconds a line saying it still works (one message, edited where the platform can); after
    ``agent.gateway_timeout_warning`` seconds without activity the chat is told, once, and after
    ``agent.gateway_timeout`` the turn is stopped (0: never)."""
    every, warn, limit = (watch_setting(gateway.config, key) for key in WATCHED)
    chat.platform.typing(chat.chat)
    started = typed = noticed = time.monotonic()
    notice, warned = None, False
    while not done.wait(0.5):
        now = time.monotonic()
        if now - typed >= TYPING_EVERY:
            chat.platform.typing(chat.chat)
            typed = now
        idle, doing = now - chat.active, f"the tool {chat.tool} runs" if chat.tool else "waiting for the model"
        if limit and idle >= limit:
            chat.why = (f"⏱️ stopped: nothing happened for {_span(limit)} ({doing}); agent.gateway_timeout "
                        "says how long a turn may stay idle (0: no limit)")
            chat.agent.interrupt()
            return
        if warn and idle >= warn and not warned:
            warned = True
            gateway._send(chat, f"⏳ nothing has happened for {_span(warn)} ({doing}); /stop ends it")
        if every and now - noticed >= every:
            noticed, text = now, f"⏳ still working: {_span(int(now - started))}" + (
                f", {chat.tool}" if chat.tool else "")
            try:
                if notice is None or not callable(getattr(chat.platform, "edit", None)):
                    notice = chat.platform.send(chat.chat, text)
                else:
                    chat.platform.edit(chat.chat, notice, text)
            except PlatformError as exc:
                log.warning("gateway: %s: %s", chat.key, exc)


def _span(seconds: float) -> str:
    return f"{seconds:g} s" if seconds < 120 else f"{seconds // 60:.0f} min"
