"""``hermes send`` (hermes-agent's): a message from a shell script, a cron job or CI to a chat of a platform the
gateway is set up for, with its credentials, no model and no running gateway: ``hermes send --to telegram "deploy
finished"``, ``df -h | hermes send --to slack:C0123``. A ``MEDIA:/path`` line sends that file (as the model's
answers do). Exit 0 once sent, 1 when the platform refused, 2 for a usage error."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("send")
@click.argument("message", required=False)
@click.option("-t", "--to", "target", metavar="TARGET", help="PLATFORM:CHAT, or PLATFORM alone for its home chat "
              "(TELEGRAM_HOME_CHANNEL, /sethome).")
@click.option("--file", "file", metavar="PATH", help="The message is this text file ('-': stdin).")
@click.option("--subject", help="A first line before the message.")
@click.option("--list", "listing", is_flag=True, help="The platforms set up here and their home chats.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing once sent.")
@click.pass_obj
def send(app, message, target, file, subject, listing, as_json, quiet):
    """Send a message to a chat of a platform set up here (scripts, cron jobs, CI): no model, no gateway needed."""
    from hermes.cli.app import EXIT_USAGE, Fail, echo_json
    from plugins.gateway.sending import media_of, platforms, send_to

    makers = platforms(app.host)
    if listing:
        return _list(app, makers, as_json)
    if not target:
        raise Fail("no --to TARGET (telegram, telegram:CHAT, slack:C0123, ...; `hermes send --list`)", EXIT_USAGE)
    if target.partition(":")[0] not in makers:
        raise Fail(f"no platform '{target.partition(':')[0]}' here (it has: {', '.join(sorted(makers))})", EXIT_USAGE)
    text = _body(message, file)
    text = f"{subject}\n\n{text.lstrip()}" if subject else text
    words, files = media_of(text)
    for path, _ in files:
        if not Path(path).is_file():
            raise Fail(f"MEDIA:{path}: no such file", EXIT_USAGE)
    failed = (send_to(makers, target, words, app.config) if words else "") or next(
        (why for why in (send_to(makers, target, "", app.config, path=path) for path, _ in files) if why), "")
    if as_json:
        echo_json({"target": target, "sent": not failed, "error": failed or None, "files": [p for p, _ in files]})
    if failed:
        raise Fail(f"not sent to {target}: {failed}")
    if not quiet and not as_json:
        click.echo(f"sent to {target}" + (f" ({len(files)} file(s))" if files else ""))


def _body(message, file) -> str:
    from hermes.cli.app import EXIT_USAGE, Fail

    if message is not None and file:
        raise Fail("a MESSAGE or --file, not both", EXIT_USAGE)
    if message is None and file and file != "-":
        try:
            message = Path(file).expanduser().read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise Fail(f"{file} is no text file: send it as a file with a MEDIA:{file} line", EXIT_USAGE) from None
        except OSError as exc:
            raise Fail(f"cannot read {file}: {exc.strerror or exc}", EXIT_USAGE) from None
    elif message is None and (file == "-" or not sys.stdin.isatty()):  # a terminal's stdin is never read unasked
        message = sys.stdin.read()
    if not (message or "").strip():
        raise Fail("nothing to send: a MESSAGE, --file PATH, or text on stdin", EXIT_USAGE)
    return message


def _list(app, makers: dict, as_json: bool) -> None:
    import os

    from hermes.cli.app import echo_json
    from plugins.gateway.sending import home_chat, token_variable

    rows = [{"platform": name, "set_up": bool(os.environ.get(token_variable(name))),
             "home": home_chat(app.config, name) or None}
            for name in sorted(makers) if name != "webhook"]  # (the webhook takes events; it sends nowhere)
    if as_json:
        echo_json(rows)
        return
    for row in rows:
        click.echo(f"{row['platform']:<15} " + ("set up" if row["set_up"] else "-     ") +
                   (f"  home chat {row['home']}" if row["home"] else ""))
