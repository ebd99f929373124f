"""Built-in plugin gateway: the agent on a messaging platform, as hermes-agent's gateway (``hermes gateway run``).

Built in, each with hermes-agent's variables: Telegram (:mod:`plugins.gateway.telegram`: ``TELEGRAM_BOT_TOKEN``,
``TELEGRAM_ALLOWED_USERS``), Discord (:mod:`~plugins.gateway.discord`), Slack (:mod:`~plugins.gateway.slack`), Matrix
(:mod:`~plugins.gateway.matrix`), Signal (:mod:`~plugins.gateway.signal`), Mattermost
(:mod:`~plugins.gateway.mattermost`), email (:mod:`~plugins.gateway.mail`), ntfy (:mod:`~plugins.gateway.ntfy`),
WhatsApp's Cloud API (:mod:`~plugins.gateway.whatsapp`), SMS by Twilio (:mod:`~plugins.gateway.sms`), Home
Assistant's events (:mod:`~plugins.gateway.homeassistant`), IRC (:mod:`~plugins.gateway.irc`), Feishu/Lark
(:mod:`~plugins.gateway.feishu`), DingTalk (:mod:`~plugins.gateway.dingtalk`), LINE (:mod:`~plugins.gateway.line`),
iMessage through BlueBubbles (:mod:`~plugins.gateway.bluebubbles`), Microsoft Teams (:mod:`~plugins.gateway.teams`),
Google Chat (:mod:`~plugins.gateway.google_chat`) and webhooks (:mod:`~plugins.gateway.webhook`);
each module's docstring names its variables. A plugin adds another platform through the ``gateway_platforms`` hook.
How messages are answered: :mod:`plugins.gateway.runner`."""

from __future__ import annotations

import os

from kernel import hookimpl


@hookimpl
def register_config(declare):
    declare("telegram.extra.base_url", str, "https://api.telegram.org", "the Telegram Bot API server the gateway "
            "talks to (hermes-agent's key: a local telegram-bot-api)")
    declare("telegram.allowed_chats", (list[str], str), "", "the groups the bot answers in (ids, comma-separated; "
            "TELEGRAM_ALLOWED_CHATS; empty: any): private chats are not filtered")
    for name, where in (("discord", "a server's channel"), ("slack", "a channel"), ("mattermost", "a channel")):
        declare(f"{name}.require_mention", bool, True, f"in {where} the bot answers when it is mentioned "
                "(hermes-agent's; direct messages always)")
        declare(f"{name}.free_response_channels", (list[str], str), "", "channels where it answers every message")
        declare(f"{name}.allowed_channels", (list[str], str), "", "the only channels it answers in (empty: any)")
    declare("discord.auto_thread", bool, True, "a mention in a server's channel starts a thread, where the "
            "answer goes, a conversation of its own read without mentions (hermes-agent's; DISCORD_AUTO_THREAD)")
    declare("discord.thread_require_mention", bool, False, "in a thread the bot started or answered in, it answers "
            "only when mentioned too (hermes-agent's; DISCORD_THREAD_REQUIRE_MENTION; for threads shared with other "
            "bots)")
    declare("discord.history_backfill", bool, True, "a mention in a channel comes with the messages before it since "
            "the bot's last answer, those of people not allowed marked [unverified] (hermes-agent's; "
            "DISCORD_HISTORY_BACKFILL)")
    declare("discord.history_backfill_limit", int, 50, "how many at most (DISCORD_HISTORY_BACKFILL_LIMIT)", minimum=0)
    declare("mattermost.reply_mode", str, "off", "thread: an answer in a channel goes in the post's thread, each "
            "thread a conversation read without mentions; off: in the channel (hermes-agent's; MATTERMOST_REPLY_MODE)",
            choices=("off", "thread"))
    declare("slack.reply_in_thread", bool, True, "an answer in a channel goes in a thread under the message, each "
            "thread a conversation (hermes-agent's)")
    for name in ("discord", "slack", "whatsapp_cloud", "sms", "feishu", "dingtalk", "line", "teams", "google_chat"):
        declare(f"{name}.api_url", str, "", f"another {name.title()} API (empty: {name}'s own; a test's)")
    declare("discord.gateway_url", str, "", "another Discord gateway websocket (empty: Discord's; a test's)")
    declare("matrix.require_mention", bool, True, "in a room of more than two the bot answers when it is mentioned "
            "or answered (hermes-agent's; a direct chat always)")
    declare("matrix.free_response_rooms", (list[str], str), "", "rooms where it answers every message "
            "(MATRIX_FREE_RESPONSE_ROOMS)")
    declare("matrix.allowed_rooms", (list[str], str), "", "the only rooms it answers in (MATRIX_ALLOWED_ROOMS; empty: "
            "any; direct chats always)")
    for name, on in (("telegram", False), ("discord", True), ("slack", True), ("matrix", True), ("signal", True),
                     ("mattermost", True), ("whatsapp_cloud", True)):
        declare(f"{name}.channel_prompts", dict, {}, "a chat's own instructions, added to the system prompt of its "
                "conversations: {CHAT_ID: TEXT} (hermes-agent's)")
        declare(f"{name}.reactions", bool, on, f"the user's message on {name.title()} marked while its turn runs, "
                f"then with how it ended (hermes-agent's; {name.upper()}_REACTIONS)")
    for name in ("telegram", "discord", "slack", "matrix", "mattermost"):
        declare(f"display.platforms.{name}.streaming", bool, True, f"the gateway shows an answer on {name.title()} "
                "as it is written (a message edited about once a second), as hermes-agent does")
    declare("streaming.edit_interval", float, 1.5, "seconds between the edits of an answer shown as it is written "
            "(hermes-agent's key, its default 0.8; Telegram takes about one edit a second in a chat)", minimum=0.3)
    declare("streaming.cursor", str, " ▉", "what ends an answer's text while it is written (hermes-agent's)")
    declare("gateway.message_timestamps.enabled", bool, False, "each message the model reads from a chat begins "
            "with when it was sent, [Mon 2026-12-07 14:05:09 CET] in the user's timezone (hermes-agent's)")
    declare("platforms.webhook.enabled", bool, False, "the gateway takes webhooks: events POSTed to /webhooks/ROUTE, "
            "each a turn on its route's prompt (hermes-agent's; WEBHOOK_ENABLED)")
    declare("platforms.webhook.extra.host", str, "0.0.0.0", "the address it listens on")
    declare("platforms.webhook.extra.port", int, 8644, "its port (WEBHOOK_PORT)", minimum=0)
    declare("platforms.webhook.extra.secret", str, "", "the routes' HMAC secret where a route has none "
            "(WEBHOOK_SECRET)")
    declare("platforms.webhook.extra.rate_limit", int, 30, "requests a route takes a minute", minimum=1)
    declare("platforms.webhook.extra.routes", dict, {}, "ROUTE: {secret, events, prompt, deliver, deliver_extra, "
            "deliver_only}: see the README's webhook paragraph")
    declare("unauthorized_dm_behavior", str, "", "what a stranger who writes to the bot is told: pair (their id "
            "and a pairing code for `hermes pairing approve`), ignore (nothing); unset: a code where nobody is allowed "
            "yet, else their id (hermes-agent's key)", choices=("", "pair", "ignore"))
    for key, what in (("watch_domains", "the domains whose entities' changes are each a turn (binary_sensor, ...)"),
                      ("watch_entities", "the entities whose changes are each a turn (binary_sensor.front_door)"),
                      ("ignore_entities", "entities never told")):
        declare(f"platforms.homeassistant.extra.{key}", list[str], [], f"Home Assistant events: {what} "
                "(hermes-agent's; with HASS_TOKEN)")
    declare("platforms.homeassistant.extra.watch_all", bool, False, "Home Assistant events: every entity's changes "
            "(when no domain or entity is listed)")
    declare("platforms.homeassistant.extra.cooldown_seconds", float, 30, "Home Assistant events: an entity's "
            "changes within this are not told again", minimum=0)
    declare("gateway.media_delivery_allow_dirs", list[str], [], "folders whose files a chat may be sent when the "
            "model names them (MEDIA:/path), whenever they were changed (hermes-agent's)")
    declare("gateway.trust_recent_files", bool, True, "a file the model names may be sent when it changed lately "
            "(made by the turn)")
    declare("gateway.trust_recent_files_seconds", float, 600, "how lately", minimum=0)
    declare("voice.auto_tts", bool, False, "every gateway answer comes as a voice note too, spoken with "
            "tts.provider (a chat's /voice on|tts|off wins; hermes-agent's)")
    for key, default, what in (
            ("agent.gateway_notify_interval", 180, "seconds between the gateway's \"still working\" lines while a "
             "turn runs (one message, edited; HERMES_AGENT_NOTIFY_INTERVAL)"),
            ("agent.gateway_timeout_warning", 900, "seconds a gateway turn may do nothing (no word streamed, no tool "
             "call, no model answer) before the chat is told (HERMES_AGENT_TIMEOUT_WARNING)"),
            ("agent.gateway_timeout", 1800, "seconds a gateway turn may do nothing before it is stopped "
             "(HERMES_AGENT_TIMEOUT)")):
        declare(key, float, default, what + "; 0: never", minimum=0)
    declare("max_concurrent_sessions", int, 4, "chats the gateway answers at once (the others wait)", minimum=1)
    declare("max_live_sessions", int, 16, "chats whose agents the gateway keeps built (the least recently used go)",
            minimum=1)


@hookimpl
def register_hookspecs(add):
    from plugins.gateway import hookspecs

    add(hookspecs)


def _number(value, default: int, variable: str) -> int:
    """A variable's whole number (``default`` when it is empty); ValueError naming the variable when it is none."""
    try:
        return int(value or default)
    except ValueError:
        raise ValueError(f"{variable} takes a number") from None


def _listed(config, key: str, env: str = "") -> set:
    """The ids a key holds, as a list or comma-separated (unset: the variable ``env``'s)."""
    raw = config.get(key) or (os.environ.get(env, "") if env else "")
    return {str(v).strip() for v in (raw if isinstance(raw, list) else str(raw).split(",")) if str(v).strip()}


@hookimpl
def gateway_platforms(config):
    from plugins.gateway.sending import switched_on

    def telegram():
        from plugins.gateway.telegram import Telegram

        token = os.environ.get("TELEGRAM_BOT_TOKEN", "").strip()
        return Telegram(token, str(config.get("telegram.extra.base_url")),
                        allowed_chats=_listed(config, "telegram.allowed_chats", "TELEGRAM_ALLOWED_CHATS")) \
            if token else None

    def discord():
        from plugins.gateway.discord import API, GATEWAY, Discord
        from plugins.gateway.runner import allowed_users

        token = os.environ.get("DISCORD_BOT_TOKEN", "").strip()
        backfill = _number(os.environ.get("DISCORD_HISTORY_BACKFILL_LIMIT"), config.get(
            "discord.history_backfill_limit"), "DISCORD_HISTORY_BACKFILL_LIMIT") if switched_on(os.environ.get(
                "DISCORD_HISTORY_BACKFILL", config.get("discord.history_backfill"))) else 0
        return Discord(token, str(config.get("discord.api_url") or API), str(config.get("discord.gateway_url") or
                                                                              GATEWAY),
                       require_mention=bool(config.get("discord.require_mention")),
                       free=_listed(config, "discord.free_response_channels"),
                       allowed=_listed(config, "discord.allowed_channels"),
                       auto_thread=switched_on(os.environ.get("DISCORD_AUTO_THREAD",
                                                              config.get("discord.auto_thread"))),
                       thread_mention=switched_on(os.environ.get("DISCORD_THREAD_REQUIRE_MENTION",
                                                                 config.get("discord.thread_require_mention"))),
                       backfill=backfill, trusted=allowed_users(config, "discord")) if token else None

    def slack():
        from plugins.gateway.runner import allowed_users
        from plugins.gateway.slack import API, Slack

        bot, app = (os.environ.get(f"SLACK_{kind}_TOKEN", "").strip() for kind in ("BOT", "APP"))
        return Slack(bot, app, str(config.get("slack.api_url") or API), trusted=allowed_users(config, "slack"),
                     require_mention=bool(config.get("slack.require_mention")),
                     in_threads=bool(config.get("slack.reply_in_thread")),
                     free=_listed(config, "slack.free_response_channels"),
                     allowed=_listed(config, "slack.allowed_channels")) if bot and app else None

    def matrix():
        from plugins.gateway.matrix import Matrix
        from plugins.gateway.runner import allowed_users

        token, user, password, homeserver = (os.environ.get(f"MATRIX_{v}", "").strip() for v in (
            "ACCESS_TOKEN", "USER_ID", "PASSWORD", "HOMESERVER"))
        return Matrix(homeserver, token, user, password, inviters=allowed_users(config, "matrix"),
                      require_mention=bool(config.get("matrix.require_mention")),
                      free=_listed(config, "matrix.free_response_rooms", "MATRIX_FREE_RESPONSE_ROOMS"),
                      allowed=_listed(config, "matrix.allowed_rooms", "MATRIX_ALLOWED_ROOMS")) \
            if homeserver and (token or user and password) else None

    def signal():
        from plugins.gateway.signal import Signal

        url, account = (os.environ.get(f"SIGNAL_{v}", "").strip() for v in ("HTTP_URL", "ACCOUNT"))
        groups = {g.strip() for g in os.environ.get("SIGNAL_GROUP_ALLOWED_USERS", "").split(",") if g.strip()}
        return Signal(url, account, groups, require_mention=switched_on(os.environ.get("SIGNAL_REQUIRE_MENTION"))) \
            if url and account else None

    def mail():
        from plugins.gateway.mail import Email

        found = {v: os.environ.get(f"EMAIL_{v}", "").strip() for v in (
            "ADDRESS", "PASSWORD", "IMAP_HOST", "IMAP_PORT", "SMTP_HOST", "SMTP_PORT", "POLL_INTERVAL")}
        if not all(found[v] for v in ("ADDRESS", "PASSWORD", "IMAP_HOST", "SMTP_HOST")):
            return None
        try:
            numbers = [float(found[v] or default) for v, default in (("IMAP_PORT", 993), ("SMTP_PORT", 587),
                                                                      ("POLL_INTERVAL", 15))]
        except ValueError:
            raise ValueError("EMAIL_IMAP_PORT, EMAIL_SMTP_PORT and EMAIL_POLL_INTERVAL take numbers") from None
        return Email(found["ADDRESS"], found["PASSWORD"], (found["IMAP_HOST"], int(numbers[0])),
                     (found["SMTP_HOST"], int(numbers[1])), poll=numbers[2],
                     authserv=os.environ.get("EMAIL_AUTHSERV_ID", "").strip(),
                     trust_from=switched_on(os.environ.get("EMAIL_TRUST_FROM_HEADER")))

    def mattermost():
        from plugins.gateway.mattermost import Mattermost

        url, token = (os.environ.get(f"MATTERMOST_{v}", "").strip() for v in ("URL", "TOKEN"))
        return Mattermost(url, token, require_mention=bool(config.get("mattermost.require_mention")),
                          free=_listed(config, "mattermost.free_response_channels",
                                       "MATTERMOST_FREE_RESPONSE_CHANNELS"),
                          allowed=_listed(config, "mattermost.allowed_channels", "MATTERMOST_ALLOWED_CHANNELS"),
                          in_threads=str(os.environ.get("MATTERMOST_REPLY_MODE") or config.get(
                              "mattermost.reply_mode")).strip().lower() == "thread") \
            if url and token else None

    def ntfy():
        from plugins.gateway.ntfy import SERVER, Ntfy

        found = {v: os.environ.get(f"NTFY_{v}", "").strip() for v in ("TOPIC", "SERVER_URL", "TOKEN", "PUBLISH_TOPIC")}
        return Ntfy(found["TOPIC"], found["SERVER_URL"] or SERVER, found["TOKEN"], found["PUBLISH_TOPIC"],
                    markdown=switched_on(os.environ.get("NTFY_MARKDOWN"))) if found["TOPIC"] else None

    def webhook():
        from plugins.gateway.sending import send_to
        from plugins.gateway.webhook import PORT, Webhook
        from plugins.scripts import environment

        if not switched_on(os.environ.get("WEBHOOK_ENABLED", config.get("platforms.webhook.enabled"))):
            return None
        extra = {key: config.get(f"platforms.webhook.extra.{key}") for key in ("host", "port", "secret", "rate_limit")}
        port = _number(os.environ.get("WEBHOOK_PORT"), extra["port"] or PORT, "WEBHOOK_PORT")
        return Webhook(config.get("platforms.webhook.extra.routes") or {}, extra["host"], port,
                       os.environ.get("WEBHOOK_SECRET") or extra["secret"], extra["rate_limit"],
                       deliver=lambda target, text, path: send_to(made, target, text, config, path) or "",
                       data_dir=config.data_dir, environ=lambda: environment(config))

    def whatsapp_cloud():
        from plugins.gateway.whatsapp import GRAPH, WhatsAppCloud

        found = {v: os.environ.get(f"WHATSAPP_CLOUD_{v}", "").strip() for v in (
            "PHONE_NUMBER_ID", "ACCESS_TOKEN", "APP_SECRET", "VERIFY_TOKEN", "WEBHOOK_HOST", "WEBHOOK_PORT",
            "WEBHOOK_PATH", "API_VERSION")}
        if not (found["PHONE_NUMBER_ID"] and found["ACCESS_TOKEN"]):
            return None
        port = _number(found["WEBHOOK_PORT"], 8090, "WHATSAPP_CLOUD_WEBHOOK_PORT")
        return WhatsAppCloud(found["PHONE_NUMBER_ID"], found["ACCESS_TOKEN"], found["APP_SECRET"],
                             found["VERIFY_TOKEN"], found["WEBHOOK_HOST"] or "0.0.0.0", port,
                             found["WEBHOOK_PATH"] or "/whatsapp/webhook",
                             str(config.get("whatsapp_cloud.api_url") or GRAPH), found["API_VERSION"] or "v20.0")

    def sms():
        from plugins.gateway.sms import API, Sms

        found = {v: os.environ.get(v, "").strip() for v in (
            "TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_PHONE_NUMBER", "SMS_WEBHOOK_URL", "SMS_WEBHOOK_HOST",
            "SMS_WEBHOOK_PORT")}
        if not (found["TWILIO_ACCOUNT_SID"] and found["TWILIO_AUTH_TOKEN"] and found["TWILIO_PHONE_NUMBER"]):
            return None
        port = _number(found["SMS_WEBHOOK_PORT"], 8080, "SMS_WEBHOOK_PORT")
        return Sms(found["TWILIO_ACCOUNT_SID"], found["TWILIO_AUTH_TOKEN"], found["TWILIO_PHONE_NUMBER"],
                   found["SMS_WEBHOOK_URL"], found["SMS_WEBHOOK_HOST"] or "127.0.0.1", port,
                   str(config.get("sms.api_url") or API),
                   unsigned=switched_on(os.environ.get("SMS_INSECURE_NO_SIGNATURE")))

    def dingtalk():
        from plugins.gateway.dingtalk import API, DingTalk

        found = {v: os.environ.get(f"DINGTALK_{v}", "").strip() for v in ("CLIENT_ID", "CLIENT_SECRET", "WEBHOOK_URL")}
        if not (found["CLIENT_ID"] and found["CLIENT_SECRET"]):
            return None
        return DingTalk(found["CLIENT_ID"], found["CLIENT_SECRET"], str(config.get("dingtalk.api_url") or API),
                        found["WEBHOOK_URL"])

    def feishu():
        from plugins.gateway.feishu import DOMAINS, Feishu

        found = {v: os.environ.get(f"FEISHU_{v}", "").strip() for v in (
            "APP_ID", "APP_SECRET", "DOMAIN", "VERIFICATION_TOKEN", "ENCRYPT_KEY", "WEBHOOK_HOST", "WEBHOOK_PORT",
            "WEBHOOK_PATH")}
        if not (found["APP_ID"] and found["APP_SECRET"]):
            return None
        api = str(config.get("feishu.api_url") or DOMAINS.get(found["DOMAIN"].lower() or "feishu") or "")
        if not api:
            raise ValueError(f"FEISHU_DOMAIN takes feishu or lark, not {found['DOMAIN']!r}")
        return Feishu(found["APP_ID"], found["APP_SECRET"], found["VERIFICATION_TOKEN"], found["ENCRYPT_KEY"],
                      found["WEBHOOK_HOST"] or "127.0.0.1", _number(found["WEBHOOK_PORT"], 8765, "FEISHU_WEBHOOK_PORT"),
                      found["WEBHOOK_PATH"] or "/feishu/webhook", api)

    def bluebubbles():
        from plugins.gateway.bluebubbles import BlueBubbles

        found = {v: os.environ.get(f"BLUEBUBBLES_{v}", "").strip() for v in (
            "SERVER_URL", "PASSWORD", "WEBHOOK_HOST", "WEBHOOK_PORT", "WEBHOOK_PATH", "REQUIRE_MENTION")}
        if not (found["SERVER_URL"] and found["PASSWORD"]):
            return None
        return BlueBubbles(found["SERVER_URL"], found["PASSWORD"], found["WEBHOOK_HOST"] or "127.0.0.1",
                           _number(found["WEBHOOK_PORT"], 8645, "BLUEBUBBLES_WEBHOOK_PORT"),
                           found["WEBHOOK_PATH"] or "/bluebubbles-webhook", switched_on(found["REQUIRE_MENTION"]))

    def teams():
        from plugins.gateway.teams import LOGIN, OPENID, SERVICE, Teams

        found = {v: os.environ.get(f"TEAMS_{v}", "").strip() for v in (
            "CLIENT_ID", "CLIENT_SECRET", "TENANT_ID", "HOST", "PORT", "SERVICE_URL")}
        if not (found["CLIENT_ID"] and found["CLIENT_SECRET"]):
            return None
        if not found["TENANT_ID"]:
            raise ValueError("TEAMS_TENANT_ID is needed: the tenant of the bot's app registration (a bot made "
                             "since 2025 is single-tenant)")
        test = str(config.get("teams.api_url") or "")
        return Teams(found["CLIENT_ID"], found["CLIENT_SECRET"], found["TENANT_ID"], found["HOST"] or "127.0.0.1",
                     _number(found["PORT"], 3978, "TEAMS_PORT"), test or LOGIN, test or OPENID,
                     (found["SERVICE_URL"] or SERVICE).rstrip("/") + "/")

    def google_chat():
        from plugins.gateway.google_chat import API, CERTS, CHAT_ACCOUNT, EVENTS_PATH, GoogleChat, service_account

        found = {v: os.environ.get(f"GOOGLE_CHAT_{v}", "").strip() for v in (
            "SERVICE_ACCOUNT_JSON", "HTTP_EVENTS_URL", "HTTP_EVENTS_AUDIENCE", "HTTP_EVENTS_SERVICE_ACCOUNT_EMAIL",
            "HTTP_EVENTS_HOST", "HTTP_EVENTS_PORT")}
        if not found["HTTP_EVENTS_URL"]:
            return None
        key = found["SERVICE_ACCOUNT_JSON"] or os.environ.get("GOOGLE_APPLICATION_CREDENTIALS", "").strip()
        if not key:
            raise ValueError("GOOGLE_CHAT_SERVICE_ACCOUNT_JSON is needed: the key of the service account the Chat "
                             "app answers as (a file's path or the key itself)")
        accounts = frozenset(a.strip().lower() for a in (found["HTTP_EVENTS_SERVICE_ACCOUNT_EMAIL"] or CHAT_ACCOUNT)
                             .split(",") if a.strip())
        test = str(config.get("google_chat.api_url") or "").rstrip("/")
        return GoogleChat(service_account(key), found["HTTP_EVENTS_URL"] or EVENTS_PATH,
                          found["HTTP_EVENTS_AUDIENCE"], accounts, found["HTTP_EVENTS_HOST"] or "127.0.0.1",
                          _number(found["HTTP_EVENTS_PORT"], 8642, "GOOGLE_CHAT_HTTP_EVENTS_PORT"), test or API,
                          f"{test}/oauth2/v3/certs" if test else CERTS)

    def line():
        from plugins.gateway.line import API, DATA, Line

        found = {v: os.environ.get(f"LINE_{v}", "").strip() for v in (
            "CHANNEL_ACCESS_TOKEN", "CHANNEL_SECRET", "HOST", "PORT", "ALLOWED_GROUPS", "ALLOWED_ROOMS", "PUBLIC_URL")}
        if not found["CHANNEL_ACCESS_TOKEN"]:
            return None
        if not found["CHANNEL_SECRET"]:
            raise ValueError("LINE_CHANNEL_SECRET is needed: every event LINE posts is signed with it (without the "
                             "check anybody could post messages as anybody)")
        everything = frozenset(c.strip() for c in f"{found['ALLOWED_GROUPS']},{found['ALLOWED_ROOMS']}".split(",")
                               if c.strip())
        return Line(found["CHANNEL_ACCESS_TOKEN"], found["CHANNEL_SECRET"], found["HOST"] or "127.0.0.1",
                    _number(found["PORT"], 8646, "LINE_PORT"), str(config.get("line.api_url") or API),
                    str(config.get("line.api_url") or DATA), everything, found["PUBLIC_URL"])

    def homeassistant():
        from plugins.gateway.homeassistant import HomeAssistant

        extra = {key: config.get(f"platforms.homeassistant.extra.{key}") for key in (
            "watch_domains", "watch_entities", "ignore_entities", "watch_all", "cooldown_seconds")}
        token = os.environ.get("HASS_TOKEN", "").strip()
        if not token or not (extra["watch_domains"] or extra["watch_entities"] or extra["watch_all"]):
            return None  # the token alone is the tools': nothing to watch
        return HomeAssistant(os.environ.get("HASS_URL", "").strip() or "http://homeassistant.local:8123", token,
                             frozenset(extra["watch_domains"]), frozenset(extra["watch_entities"]),
                             frozenset(extra["ignore_entities"]), bool(extra["watch_all"]),
                             float(extra["cooldown_seconds"]))

    def irc():
        from plugins.gateway.irc import Irc

        found = {v: os.environ.get(f"IRC_{v}", "").strip() for v in (
            "SERVER", "PORT", "NICKNAME", "CHANNEL", "USE_TLS", "SERVER_PASSWORD", "NICKSERV_PASSWORD")}
        if not (found["SERVER"] and found["NICKNAME"]):
            return None
        port = _number(found["PORT"], 6697, "IRC_PORT")
        return Irc(found["SERVER"], found["NICKNAME"], [c.strip() for c in found["CHANNEL"].split(",") if c.strip()],
                   port, tls=found["USE_TLS"].lower() not in ("false", "0", "no", "off"),
                   password=found["SERVER_PASSWORD"], nickserv=found["NICKSERV_PASSWORD"])

    made = {"telegram": telegram, "discord": discord, "slack": slack, "matrix": matrix, "signal": signal,
            "email": mail, "mattermost": mattermost, "ntfy": ntfy, "whatsapp_cloud": whatsapp_cloud,
            "sms": sms, "homeassistant": homeassistant, "irc": irc, "feishu": feishu, "dingtalk": dingtalk,
            "line": line, "bluebubbles": bluebubbles, "teams": teams, "google_chat": google_chat}
    return {**made, "webhook": webhook}


@hookimpl
def deliver_message(target, text, host):
    from plugins.gateway.sending import deliver

    return deliver(target, text, host)


@hookimpl(optionalhook=True)
def doctor_checks(agent, online):
    """A line for each platform whose token is set: who may talk to it and, online, whether the token is taken (not
    while a gateway runs on this data folder: a start would take its port, its connection or its webhook)."""
    from plugins.doctor.hookspecs import FAIL, OK, WARN, Check
    from plugins.gateway.hookspecs import PlatformError
    from plugins.gateway.runner import allowed_users, automated
    from plugins.gateway.sending import holder

    running = holder(agent.config.data_dir) if online else None
    lines = []
    for name, make in gateway_platforms(agent.config).items():
        try:
            platform = make()
        except ValueError as exc:  # a setting it cannot take: this platform's line
            lines.append(Check(f"gateway {name}", FAIL, str(exc)))
            continue
        if platform is None:
            continue
        if automated(platform):  # started, it would take the port of a gateway that runs
            routes = getattr(platform, "routes", None)
            lines.append(Check(f"gateway {name}", OK, "set up" if routes is None else f"{len(routes)} route(s)"))
            platform.close()
            continue
        allowed = allowed_users(agent.config, name)
        who = "everybody may talk to it" if allowed is None else f"{len(allowed)} user(s) allowed"
        try:
            bot = platform.start() if online and running is None else ""
        except PlatformError as exc:
            lines.append(Check(f"gateway {name}", FAIL, str(exc)))
            continue
        finally:
            platform.close()
        checked = "not checked: --offline" if not online else f"not checked: the gateway here runs (pid {running})"
        lines.append(Check(f"gateway {name}", OK, f"{bot or f'token set ({checked})'}; {who}")
                     if allowed != set() else
                     Check(f"gateway {name}", WARN, f"nobody may talk to {bot or 'it'} yet: set "
                           f"{name.upper()}_ALLOWED_USERS=ID,... (a stranger is told their id)"))
    return lines


@hookimpl
def register_commands(cli):
    from plugins.gateway.cli import gateway
    from plugins.gateway.pairing import pairing
    from plugins.gateway.send import send
    from plugins.gateway.webhook_cli import webhook

    cli.add_command(gateway)
    cli.add_command(send)
    cli.add_command(webhook)
    cli.add_command(pairing)
