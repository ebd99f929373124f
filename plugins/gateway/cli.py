"""``hermes gateway``: run the gateway in the foreground, or say how it is set up."""

from __future__ import annotations

import click


def _configured(app, only: tuple) -> dict:
    """``{name: make}`` of the platforms plugins provide (``only``: those named)."""
    from hermes.cli.app import EXIT_USAGE, Fail

    from plugins.gateway.sending import platforms

    provided = platforms(app.host)
    unknown = [name for name in only if name not in provided]
    if unknown:
        raise Fail(f"no platform named {', '.join(unknown)}; there are: {', '.join(sorted(provided)) or 'none'}",
                   EXIT_USAGE)
    return {name: make for name, make in provided.items() if not only or name in only}


def _made(app, only: tuple) -> list:
    """The platforms configured here (a token set), made: ``(name, platform or None)``; a plugin's that fails to
    make one is a one-line error."""
    from hermes.cli.app import Fail

    made = []
    for name, make in _configured(app, only).items():
        try:
            made.append((name, make()))
        except Exception as exc:  # noqa: BLE001 - a plugin's platform may raise anything: one line
            raise Fail(f"{name}: {type(exc).__name__}: {exc}") from None
    return made


@click.group(invoke_without_command=True)
@click.pass_context
def gateway(ctx):
    """The agent on messaging platforms (Telegram, Discord, Slack...): setup, run, status, install."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(status)


@gateway.command()
@click.option("--platform", "only", multiple=True, help="Only this platform (again for more; default: every one "
                                                         "whose token is set).")
@click.option("-m", "--model", default=None, help="The model the chats start with (default: config.yaml's; a chat's "
                                                  "/model changes its own).")
@click.pass_obj
def run(app, only, model):
    """Answer the platforms' messages until Ctrl+C (or SIGTERM), one conversation per chat."""
    from hermes.cli.app import Fail, program
    from plugins.front import build_agent
    from plugins.gateway.hookspecs import PlatformError
    from plugins.gateway.runner import Gateway, allowed_users, automated

    if model:
        app.config.overrides["model"] = model

    platforms = [platform for _, platform in _made(app, only) if platform is not None]
    if not platforms:
        raise Fail("no platform to answer on: `hermes gateway setup [--platform NAME]` (or set TELEGRAM_BOT_TOKEN, "
                   "DISCORD_BOT_TOKEN, ..., in the environment or the data folder's .env)")
    try:
        build_agent(app, {}, None, platform="gateway").close()  # no model or key: one line now, not in every chat
    except Fail:
        for platform in platforms:
            platform.close()
        raise
    running = Gateway(app, platforms)
    try:
        running.hold()
    except PlatformError as exc:
        raise Fail(str(exc)) from None
    for platform in platforms:
        try:
            who = platform.start()
        except Exception as exc:  # noqa: BLE001 - a plugin's platform may raise anything: one line
            raise Fail(str(exc) if isinstance(exc, PlatformError) else f"{platform.name}: {type(exc).__name__}: "
                       f"{exc}") from None
        allowed = allowed_users(app.config, platform.name)
        click.echo(f"{program()}: gateway on {platform.name} as {who} ("
                   + ("signed requests only" if automated(platform) else "everybody may talk to it" if allowed is None
                      else f"{len(allowed)} user(s) allowed" if allowed else f"nobody is allowed yet: set "
                      f"{platform.name.upper()}_ALLOWED_USERS=ID,...; a stranger is told their id")
                   + "); Ctrl+C stops", err=True)
    if app.host.record("cron") is not None:  # the cron jobs run here too, as they come due (cron.with_serve)
        from plugins.cron.jobs import tick_beside

        tick_beside(app)
    running.run()
    if running.failure:
        raise Fail(running.failure)


@gateway.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def status(app, as_json):
    """Each platform: whether its token is set and who may talk to it (nothing is sent)."""
    from hermes.cli.app import echo_json, program
    from plugins.gateway.runner import allowed_users

    rows, running = [], _running(app)
    for name, make in sorted(_configured(app, ()).items()):
        try:
            platform, error = make(), None
        except Exception as exc:  # noqa: BLE001 - a setting it cannot take (a plugin's may raise anything): its row
            platform, error = None, f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else str(exc)
        allowed = None if name in IN_CONFIG else allowed_users(app.config, name)  # their senders: no users
        rows.append({"platform": name, "configured": platform is not None, "running": running,
                     "allowed_users": None if allowed is None else sorted(allowed),
                     **({"routes": sorted(platform.routes) if platform else []} if name == "webhook" else {}),
                     **({"error": error} if error else {})})
        if platform is not None:
            platform.close()
    if as_json:
        echo_json(rows)
        return
    for row in rows:
        who = "everybody" if row["allowed_users"] is None else ", ".join(row["allowed_users"]) or "nobody yet"
        if row["platform"] in IN_CONFIG:
            click.echo(f"{row['platform']}: " + (f"routes {', '.join(row['routes']) or '(none)'}" if "routes" in row
                                                 and row["configured"] else "set up" if row["configured"] else
                                                 f"not set up ({IN_CONFIG[row['platform']]})"))
            continue
        click.echo(f"{row['platform']}: " + (f"cannot start: {row['error']}" if "error" in row else
                                              f"token set; may talk to it: {who}" if row["configured"] else
                                              f"not set up (`{program()} gateway setup --platform "
                                              f"{row['platform']}`)"))
    click.echo(f"a gateway runs on this data folder (pid {running})" if running else
               "no gateway runs on this data folder (`hermes gateway run`)")


def _running(app) -> "int | None":
    """The pid of the gateway running on this data folder (it holds gateway/gateway.lock), or None."""
    from plugins.gateway.sending import holder

    held = holder(app.config.data_dir)
    return int(held) if held and held.isdigit() and int(held) else None


CARRIED = ("HERMES_HOME", "HERMES_PROFILE", "HERMES_DISTRO")  # and the platforms' allow-lists and home chats
UNIT = """[Unit]
Description=hermes gateway: the agent on {platforms}
After=network-online.target
Wants=network-online.target

[Service]
ExecStart={command}
{environment}Restart=on-failure
RestartSec=10
TimeoutStopSec=60

[Install]
WantedBy=default.target
"""


def _unit() -> str:
    """The service's name: a profile's gateway is a service of its own (hermes-agent's), beside the default's."""
    from hermes.cli.entry import profile_name

    return "hermes-gateway" + ("" if profile_name() == "default" else f"-{profile_name()}")


def _unit_path():
    import os
    from pathlib import Path

    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "systemd" / "user" / f"{_unit()}.service"


@gateway.command()
@click.option("--platform", "only", multiple=True, help="The service answers only this platform (again for more).")
@click.option("-m", "--model", default=None, help="The model its chats start with (default: config.yaml's).")
@click.option("--print", "only_print", is_flag=True, help="Print the unit instead of writing it.")
@click.pass_obj
def install(app, only, model, only_print):
    """A systemd user service that keeps `hermes gateway run` going (after a crash, and from the next login or boot
    with lingering), with the same --platform and -m."""
    import os
    import shlex
    import sys

    from hermes.cli.app import program
    from hermes.host.files import atomic_write
    from hermes.host.paths import config_dir

    made = _made(app, only)
    platforms = sorted(name for name, platform in made if platform is not None)
    for _, platform in made:
        if platform is not None:
            platform.close()
    keep = {name: os.environ[name] for name in (*CARRIED, *(f"{p.upper()}_{v}" for p in platforms for v in (
        "ALLOWED_USERS", "ALLOW_ALL_USERS", "HOME_CHANNEL"))) if os.environ.get(name)}  # no key: the unit is readable
    text = UNIT.format(platforms=", ".join(platforms) or "Telegram",
                       command=" ".join(shlex.quote(part) for part in (
                           sys.executable, "-m", "hermes.cli", "gateway", "run",
                           *(f"--platform={name}" for name in only), *(("-m", model) if model else ()))),
                       environment="".join(f"Environment={shlex.quote(f'{k}={v}')}\n" for k, v in keep.items()))
    if only_print:
        click.echo(text, nl=False)
        return
    path = _unit_path()
    atomic_write(path, text)
    click.echo(f"wrote {path}\nstart it now and at each login: systemctl --user daemon-reload && systemctl --user "
               f"enable --now {_unit()}\nand at boot, without a login: loginctl enable-linger $USER\n"
               f"its output: journalctl --user -u {_unit()} -f")
    dotenv = config_dir() / ".env"
    written = dotenv.read_text(encoding="utf-8") if dotenv.is_file() else ""
    from plugins.gateway.sending import token_variable

    for name in (token_variable(p) for p in platforms):
        if os.environ.get(name) and f"{name}=" not in written:  # the service has no shell: it reads the .env
            click.echo(f"{program()}: warning: {name} is set in this shell only: the service will not see it; keep "
                       f"it in {dotenv} (`{program()} config set {name} ...` does)", err=True)


@gateway.command()
def uninstall():
    """Remove the systemd user service `install` wrote (stop it first: systemctl --user disable --now
    hermes-gateway, or hermes-gateway-PROFILE)."""
    from hermes.cli.app import Fail

    path = _unit_path()
    if not path.is_file():
        raise Fail(f"no service to remove ({path} is not there)")
    path.unlink()
    click.echo(f"removed {path}")


IN_CONFIG = {  # platform -> what sets it up, where no question is asked (no users: their events are signed)
    "webhook": "platforms.webhook in config.yaml (enabled, routes) or `hermes webhook subscribe`",
    "homeassistant": "HASS_TOKEN and platforms.homeassistant.extra.watch_domains in config.yaml"}
ASKED = {  # platform -> (variable, question, typed hidden) of what setup asks; else its token
    "telegram": [("TELEGRAM_BOT_TOKEN", "Telegram bot token (from @BotFather; typed hidden)", True)],
    "discord": [("DISCORD_BOT_TOKEN", "Discord bot token (its developer portal, Bot tab; typed hidden)", True)],
    "slack": [("SLACK_BOT_TOKEN", "Slack bot token (xoxb-..., the app's OAuth page; typed hidden)", True),
              ("SLACK_APP_TOKEN", "Slack app-level token (xapp-..., with connections:write; typed hidden)", True)],
    "matrix": [("MATRIX_ACCESS_TOKEN", "Matrix access token of the bot's account (Element: Settings, Help & About; "
                                       "typed hidden)", True),
               ("MATRIX_HOMESERVER", "Matrix homeserver (https://matrix.example.org)", False)],
    "signal": [("SIGNAL_HTTP_URL", "signal-cli daemon's address (its --http; http://127.0.0.1:8080)", False),
               ("SIGNAL_ACCOUNT", "the bot's Signal number, registered with signal-cli (+15551234567)", False)],
    "mattermost": [("MATTERMOST_URL", "Mattermost server (https://mm.example.com)", False),
                   ("MATTERMOST_TOKEN", "the bot account's token (System Console, Bot Accounts; typed hidden)", True)],
    "email": [("EMAIL_ADDRESS", "the bot's email address", False),
              ("EMAIL_PASSWORD", "its password (an app password; typed hidden)", True),
              ("EMAIL_IMAP_HOST", "its IMAP server (imap.gmail.com)", False),
              ("EMAIL_SMTP_HOST", "its SMTP server (smtp.gmail.com)", False)],
    "ntfy": [("NTFY_SERVER_URL", "ntfy server (https://ntfy.sh, or your own)", False),
             ("NTFY_TOPIC", "the topic it reads and answers (hard to guess: anyone who knows it may talk to it)",
              False),
             ("NTFY_TOKEN", "an access token for it, or USER:PASSWORD (empty: none; typed hidden)", True)],
    "whatsapp_cloud": [("WHATSAPP_CLOUD_PHONE_NUMBER_ID", "the number's Phone number ID (Meta's WhatsApp API Setup)",
                        False),
                       ("WHATSAPP_CLOUD_ACCESS_TOKEN", "a system user's access token (typed hidden)", True),
                       ("WHATSAPP_CLOUD_APP_SECRET", "the app's secret (App settings, Basic; typed hidden)", True),
                       ("WHATSAPP_CLOUD_VERIFY_TOKEN", "a verify token of your choosing, the same in Meta's webhook "
                                                       "settings (typed hidden)", True)],
    "irc": [("IRC_SERVER", "the IRC server (irc.libera.chat)", False),
            ("IRC_NICKNAME", "the bot's nickname (registered with NickServ, best)", False),
            ("IRC_CHANNEL", "the channels it joins, comma-separated (#hermes; empty: private messages only)", False)],
    "sms": [("TWILIO_ACCOUNT_SID", "Twilio's Account SID (AC...)", False),
            ("TWILIO_AUTH_TOKEN", "its Auth Token (typed hidden)", True),
            ("TWILIO_PHONE_NUMBER", "the bot's Twilio number (+15551234567)", False),
            ("SMS_WEBHOOK_URL", "the public address of this machine's port 8080 that Twilio's number posts to", False)],
    "feishu": [("FEISHU_APP_ID", "the app's App ID (cli_..., its Credentials page)", False),
               ("FEISHU_APP_SECRET", "its App Secret (typed hidden)", True),
               ("FEISHU_DOMAIN", "feishu (open.feishu.cn) or lark (open.larksuite.com)", False),
               ("FEISHU_VERIFICATION_TOKEN", "the event subscription's Verification Token (typed hidden)", True)],
    "dingtalk": [("DINGTALK_CLIENT_ID", "the app's AppKey (Client ID)", False),
                 ("DINGTALK_CLIENT_SECRET", "its AppSecret (Client Secret; typed hidden)", True)],
    "line": [("LINE_CHANNEL_ACCESS_TOKEN", "the channel's access token (its Messaging API page; typed hidden)", True),
             ("LINE_CHANNEL_SECRET", "the channel secret (its Basic settings page; typed hidden)", True)],
    "bluebubbles": [("BLUEBUBBLES_SERVER_URL", "the BlueBubbles server's address (http://192.168.1.10:1234)", False),
                    ("BLUEBUBBLES_PASSWORD", "its password (typed hidden)", True)],
    "teams": [("TEAMS_CLIENT_ID", "the Azure bot's Microsoft App ID (its app registration's client id)", False),
              ("TEAMS_CLIENT_SECRET", "a client secret of that app registration (typed hidden)", True),
              ("TEAMS_TENANT_ID", "its tenant id (Directory ID)", False)],
    "google_chat": [("GOOGLE_CHAT_SERVICE_ACCOUNT_JSON", "the path of the app's service account key (JSON)", False),
                    ("GOOGLE_CHAT_HTTP_EVENTS_URL", "the public HTTPS address the Chat app posts to (its HTTP "
                     "endpoint URL; its path is where the gateway listens)", False)]}
FIRST = {"matrix": "invite it to a direct chat and send any message", "email": "send it an email",
         "ntfy": "publish a message to the topic",
         "irc": "send it a private message (/msg NICK hello)",
         "sms": "set the number's messaging webhook to that address and text it",
         "whatsapp_cloud": "point Meta's webhook at this machine's port 8090 (/whatsapp/webhook) and send it a message",
         "feishu": "set the event subscription's request URL to this machine's port 8765 (/feishu/webhook), subscribe "
                   "to im.message.receive_v1 and send the bot a message",
         "line": "set the channel's webhook URL to the public HTTPS address of this machine's port 8646 "
                 "(/line/webhook), turn on Use webhook and send the bot a message",
         "bluebubbles": "send the Mac's iMessage account a message (the webhook is registered with the server)",
         "teams": "set the Azure bot's messaging endpoint to the public HTTPS address of this machine's port 3978 "
                  "(/api/messages), add it to Teams and send it a message",
         "google_chat": "in the Chat API's configuration, give that address as the HTTP endpoint URL (Authentication "
                        "Audience: the URL; this machine's port 8642 behind it) and send the app a message"}


@gateway.command()
@click.option("--platform", "name", default="telegram", show_default=True, help="The platform to set up.")
@click.option("--wait", type=click.FloatRange(min=1), default=120, show_default=True, metavar="SECONDS",
              help="How long to wait for your first message to the bot.")
@click.pass_obj
def setup(app, name, wait):
    """At a terminal: the bot's token (checked), then your first message to it tells your id there; both kept in the
    data folder's .env, where `hermes gateway run` reads them."""
    import os
    import sys
    import time

    from hermes.cli.app import EXIT_USAGE, Fail, program
    from hermes.host.paths import config_dir
    from plugins.gateway.hookspecs import PlatformError

    from plugins.gateway.sending import token_variable

    token_var, users_var = token_variable(name), f"{name.upper()}_ALLOWED_USERS"
    make = _configured(app, (name,))[name]
    if name in IN_CONFIG:
        raise Fail(f"{name} is set up with {IN_CONFIG[name]}: see the README's paragraph", EXIT_USAGE)
    if not sys.stdin.isatty():
        raise Fail(f"gateway setup asks at a terminal: run it in one (or set {token_var} and {users_var} in the data "
                   "folder's .env)", EXIT_USAGE)
    if (pid := _running(app)) is not None:
        raise Fail(f"a gateway runs on this data folder (pid {pid}): stop it first; it would take the message")
    record = app.host.record("hermes-compat")
    if record is None or record.status != "enabled":
        raise Fail(f"nothing here reads the .env (hermes-compat is not loaded): export {token_var} and {users_var} "
                   "in your shell's profile")
    asked = ASKED.get(name, [(token_var, f"{name} bot token (typed hidden)", True)])
    for variable, question, hidden in asked:
        os.environ[variable] = click.prompt(question, hide_input=hidden).strip()
    os.environ[f"{name.upper()}_ALLOW_ALL_USERS"] = "true"  # this process only: the first message names the owner
    bot = make()
    if bot is None:
        raise Fail(f"{name} is not set up by its token alone: see the README's {name} paragraph")
    try:
        who = bot.start()
        while bot.receive(wait=0):  # what came before (anybody's): not the message waited for
            pass
        click.echo(f"The bot is {who}. Now {FIRST.get(name, 'send it any message')} from your {name} account "
                   f"(waiting {wait:g} s; Ctrl+C to stop)...")
        deadline, found = time.monotonic() + wait, None
        while found is None and time.monotonic() < deadline:
            found = next((m for m in bot.receive(wait=min(5.0, max(deadline - time.monotonic(), 1.0))) if m.user),
                         None)
        if found is not None:
            bot.receive(wait=0)  # it is confirmed: the gateway will not answer it later
    except PlatformError as exc:
        raise Fail(str(exc)) from None
    finally:
        bot.close()
    from plugins.hermes_compat.dotenv import save

    try:
        for variable, *_ in asked:
            save(config_dir(), variable, os.environ[variable])
        if found is not None:
            listed = {u.strip() for u in os.environ.get(users_var, "").split(",") if u.strip()}
            save(config_dir(), users_var, ",".join(sorted(listed | {found.user})))
    except (OSError, ValueError) as exc:
        raise Fail(f"not saved: {exc}") from None
    if found is None:
        click.echo(f"No message came: the token is kept in {config_dir() / '.env'}; add your id with {users_var} "
                   "there (a stranger's message is answered with their id)")
    else:
        click.echo(f"It was {found.name} (id {found.user}): kept in {config_dir() / '.env'} with the token.")
    click.echo(f"Start it: {program()} gateway run (or {program()} gateway install, to keep it running)")
