"""Built-in plugin gateway: the agent on a messaging platform, as hermes-agent's gateway (``hermes gateway run``).

Telegram is built in (:mod:`plugins.gateway.telegram`: ``TELEGRAM_BOT_TOKEN``, ``TELEGRAM_ALLOWED_USERS``, as in
hermes-agent); a plugin adds another platform through the ``gateway_platforms`` hook. How messages are answered:
:mod:`plugins.gateway.runner`."""

from __future__ import annotations

import os

from kernel import hookimpl


@hookimpl
def register_config(declare):
    declare("telegram.extra.base_url", str, "https://api.telegram.org", "the Telegram Bot API server the gateway "
            "talks to (hermes-agent's key: a local telegram-bot-api)")
    declare("telegram.allowed_chats", (list[str], str), "", "the groups the bot answers in (ids, comma-separated; "
            "TELEGRAM_ALLOWED_CHATS; empty: any): private chats are not filtered")
    declare("telegram.channel_prompts", dict, {}, "a chat's own instructions, added to the system prompt of its "
            "conversations: {CHAT_ID: TEXT}")
    declare("display.platforms.telegram.streaming", bool, True, "the gateway shows an answer on Telegram as it is "
            "written (a message edited about once a second), as hermes-agent does")
    declare("max_concurrent_sessions", int, 4, "chats the gateway answers at once (the others wait)", minimum=1)
    declare("max_live_sessions", int, 16, "chats whose agents the gateway keeps built (the least recently used go)",
            minimum=1)


@hookimpl
def register_hookspecs(add):
    from plugins.gateway import hookspecs

    add(hookspecs)


@hookimpl
def gateway_platforms(config):
    def telegram():
        from plugins.gateway.telegram import Telegram

        token = os.environ.get("TELEGRAM_BOT_TOKEN", "").strip()
        chats = config.get("telegram.allowed_chats") or os.environ.get("TELEGRAM_ALLOWED_CHATS", "")
        chats = chats if isinstance(chats, list) else str(chats).split(",")
        return Telegram(token, str(config.get("telegram.extra.base_url")),
                        allowed_chats={str(c).strip() for c in chats if str(c).strip()}) if token else None

    return {"telegram": telegram}


@hookimpl
def deliver_message(target, text, host):
    from plugins.gateway.sending import deliver

    return deliver(target, text, host)


@hookimpl(optionalhook=True)
def doctor_checks(agent, online):
    """A line for each platform whose token is set: who may talk to it and, online, whether the token is taken."""
    from plugins.doctor.hookspecs import FAIL, OK, WARN, Check
    from plugins.gateway.hookspecs import PlatformError
    from plugins.gateway.runner import allowed_users

    lines = []
    for name, make in gateway_platforms(agent.config).items():
        platform = make()
        if platform is None:
            continue
        allowed = allowed_users(agent.config, name)
        who = "everybody may talk to it" if allowed is None else f"{len(allowed)} user(s) allowed"
        try:
            bot = platform.start() if online else ""
        except PlatformError as exc:
            lines.append(Check(f"gateway {name}", FAIL, str(exc)))
            continue
        finally:
            platform.close()
        lines.append(Check(f"gateway {name}", OK, f"{bot or 'token set (not checked: --offline)'}; {who}")
                     if allowed != set() else
                     Check(f"gateway {name}", WARN, f"nobody may talk to {bot or 'it'} yet: set "
                           f"{name.upper()}_ALLOWED_USERS=ID,... (a stranger is told their id)"))
    return lines


@hookimpl
def register_commands(cli):
    from plugins.gateway.cli import gateway

    cli.add_command(gateway)
