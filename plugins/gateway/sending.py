"""What the gateway sends: an answer in parts a platform takes, the files an answer names (``MEDIA:/path``), and a
message outside any conversation (a cron job's answer), sent from whichever process runs it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Optional

from plugins.gateway.hookspecs import PlatformError

STATE = "gateway/state.json"  # in the data folder: where receiving goes on, the chats' sessions, the inbox, homes
LOCK = "gateway/gateway.lock"  # in the data folder: held by the gateway running on it, its pid inside
MEDIA = re.compile(r"^[ \t]*MEDIA:[ \t]*(\S[^\n]*?)[ \t]*$\n?", re.MULTILINE)


def switched_on(value) -> bool:
    """A variable's or key's value that says yes (hermes-agent's ``true``, ``1``, ``yes``, ``on``)."""
    return str(value).strip().lower() in ("true", "1", "yes", "on")


def token_variable(platform: str) -> str:
    """The variable holding a platform's token (hermes-agent's names)."""
    return {"matrix": "MATRIX_ACCESS_TOKEN", "signal": "SIGNAL_ACCOUNT", "email": "EMAIL_PASSWORD",
            "mattermost": "MATTERMOST_TOKEN", "ntfy": "NTFY_TOPIC",
            "whatsapp_cloud": "WHATSAPP_CLOUD_ACCESS_TOKEN", "sms": "TWILIO_AUTH_TOKEN", "feishu": "FEISHU_APP_SECRET",
            "dingtalk": "DINGTALK_CLIENT_SECRET", "line": "LINE_CHANNEL_ACCESS_TOKEN",
            "bluebubbles": "BLUEBUBBLES_PASSWORD", "teams": "TEAMS_CLIENT_SECRET",
            "google_chat": "GOOGLE_CHAT_HTTP_EVENTS_URL",
            "homeassistant": "HASS_TOKEN", "irc": "IRC_NICKNAME"}.get(
        platform, f"{platform.upper()}_BOT_TOKEN")


def first_part(text: str, most: int) -> int:
    """Where ``text``'s first part ends: at most ``most`` characters, cut at a line's end where one is."""
    return len(text) if len(text) <= most else (text.rfind("\n", 0, most) + 1 or most)


def send_parts(platform, chat: str, text: str) -> None:
    """``text`` to ``chat`` in parts of at most ``platform.most`` characters (:func:`first_part`)."""
    rest = text
    while rest:
        cut = first_part(rest, platform.most)
        platform.send(chat, rest[:cut])
        rest = rest[cut:]


def holder(data_dir) -> Optional[str]:
    """What the gateway running on ``data_dir`` wrote in :data:`LOCK` (its pid; "" when unread), or None when no
    gateway holds it."""
    import fcntl

    try:
        with open(Path(data_dir) / LOCK) as held:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return held.read().strip()
    except OSError:
        pass
    return None


def claim(path: Path, mine: str, taken) -> Any:
    """Hold the lock file ``path`` for this process's life, ``mine`` written in it; :class:`PlatformError` (lasting),
    ``taken(what its holder wrote)``, when another process holds it."""
    import fcntl

    held = open(path, "a+")
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        held.seek(0)
        said = held.read().strip()
        held.close()
        raise PlatformError(taken(said), lasting=True) from None
    held.truncate(0)
    held.write(mine)
    held.flush()
    return held


def platforms(host) -> dict:
    """``{name: make}`` of every platform the plugins' ``gateway_platforms`` provide."""
    makers: dict = {}
    for each in host.pm.hook.gateway_platforms(config=host.config) or []:
        makers.update(each if isinstance(each, dict) else {})
    return makers


def home_variable(platform: str) -> str:
    """The variable naming a platform's home chat (hermes-agent's names)."""
    return "EMAIL_HOME_ADDRESS" if platform == "email" else f"{platform.upper()}_HOME_CHANNEL"


def home_chat(config, platform: str) -> str:
    """A platform's home chat: its variable's, else the chat that said ``/sethome`` ("" for none)."""
    return os.environ.get(home_variable(platform), "").strip() or _home(config, platform)


def _home(config, platform: str) -> str:
    """The chat that said ``/sethome`` on ``platform`` ("" for none)."""
    try:
        state = json.loads((config.data_dir / STATE).read_text(encoding="utf-8"))
        return str((state.get("homes") or {}).get(platform) or "")
    except (OSError, ValueError, AttributeError):
        return ""


def deliver(target: str, text: str, host) -> Optional[str]:
    """:func:`plugins.gateway.hookspecs.deliver_message` for the platforms of ``gateway_platforms``."""
    return send_to(platforms(host), target, text, host.config)


def send_to(makers: dict, target: str, text: str, config, path: str = "") -> Optional[str]:
    """``text`` (or the file at ``path``) to ``target`` (``PLATFORM:CHAT``, or ``PLATFORM``: its home chat) by
    ``makers`` (``gateway_platforms``'); "" when sent, else why not (``None``: no such platform)."""
    name, _, chat = target.partition(":")
    if name not in makers:
        return None
    chat = chat or home_chat(config, name)
    if not chat:
        return (f"no chat to send to: {target} names none, {home_variable(name)} is not set and no chat said "
                "/sethome")
    platform = makers[name]()
    if platform is None:
        return f"{name} is not set up here (no {token_variable(name)})"
    try:
        if path:
            platform.send_file(chat, path, kind_of(path))
        else:
            send_parts(platform, chat, text)
    except PlatformError as exc:
        return str(exc)
    finally:
        platform.close()
    return ""


def media_of(answer: str) -> tuple:
    """hermes-agent's ``MEDIA:/path`` lines of an answer (the model sending a file): the answer without them, and
    ``(path, kind)`` of each, its kind told by its suffix."""
    named = [m.strip() for m in MEDIA.findall(answer)]
    return MEDIA.sub("", answer).strip(), [(p, kind_of(p)) for p in named]


def kind_of(path: str) -> str:
    """How a file should show, told by its suffix: ``photo``, ``audio`` or ``document``."""
    kinds = {".png": "photo", ".jpg": "photo", ".jpeg": "photo", ".gif": "photo", ".webp": "photo",
             ".mp3": "audio", ".ogg": "audio", ".opus": "audio", ".wav": "audio", ".m4a": "audio", ".flac": "audio"}
    return kinds.get(Path(path).suffix.lower(), "document")
