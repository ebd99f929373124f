"""``hermes webhook subscribe|list|remove|test``: hermes-agent's webhook routes kept in the data folder's
``webhook_subscriptions.json`` (its file: a data folder shared with it shows the same), which the gateway reads
beside config.yaml's ``platforms.webhook.extra.routes`` when it starts."""

from __future__ import annotations

import json
import re

import click

FILE = "webhook_subscriptions.json"


def _routes(app) -> dict:
    from plugins.gateway.webhook import subscriptions

    return subscriptions(app.config.data_dir)


def _save(app, routes: dict) -> None:
    import os

    from hermes.host.files import atomic_write

    path = app.config.data_dir / FILE
    atomic_write(path, json.dumps(routes, indent=2, ensure_ascii=False) + "\n")
    os.chmod(path, 0o600)  # the routes' secrets


def _url(app, name: str) -> str:
    host = str(app.config.get("platforms.webhook.extra.host"))
    return f"http://{'localhost' if host in ('0.0.0.0', '::', '') else host}:" \
           f"{app.config.get('platforms.webhook.extra.port')}/webhooks/{name}"


@click.group()
def webhook():
    """Webhook routes: events POSTed to the gateway, each a turn on its prompt (hermes-agent's)."""


@webhook.command(name="subscribe")
@click.argument("name")
@click.option("--prompt", default="", help="The turn's prompt, {a.b} filled from the event ({__raw__}: all of it).")
@click.option("--events", default="", help="The event types taken, comma-separated (default: all).")
@click.option("--deliver", default="log", show_default=True, help="Where the answer goes: PLATFORM[:CHAT], or log.")
@click.option("--deliver-only", is_flag=True, help="No model: the filled prompt is the message delivered.")
@click.option("--skills", default="", help="Skills loaded with the prompt, comma-separated.")
@click.option("--secret", default="", help="The HMAC secret (default: a new random one, printed).")
@click.option("--json", "as_json", is_flag=True, help="Print the route as JSON.")
@click.pass_obj
def subscribe(app, name, prompt, events, deliver, deliver_only, skills, secret, as_json):
    """Add (or replace) the route NAME: its URL and secret are printed, for the service's webhook settings."""
    import secrets
    import time

    from hermes.cli.app import EXIT_USAGE, Fail, echo_json

    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
        raise Fail(f"{name!r} is no route name: lowercase letters, digits, - and _", EXIT_USAGE)
    if deliver_only and deliver == "log":
        raise Fail("--deliver-only needs --deliver PLATFORM[:CHAT]: the message goes there", EXIT_USAGE)
    routes = _routes(app)
    route = {"events": [e.strip() for e in events.split(",") if e.strip()], "secret": secret or
             secrets.token_urlsafe(32), "prompt": prompt, "deliver": deliver,
             "skills": [s.strip() for s in skills.split(",") if s.strip()],
             "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             **({"deliver_only": True} if deliver_only else {})}
    routes[name] = route
    try:
        _save(app, routes)
    except OSError as exc:
        raise Fail(f"not saved: {exc}") from None
    if as_json:
        echo_json({"name": name, "url": _url(app, name), **route})
        return
    click.echo(f"route {name}: {_url(app, name)}\nsecret: {route['secret']}\nevents: "
               f"{', '.join(route['events']) or 'all'}; deliver: {deliver}{' (no model)' if deliver_only else ''}")
    if not app.config.get("platforms.webhook.enabled"):
        click.echo("the gateway takes webhooks once platforms.webhook.enabled is true (or WEBHOOK_ENABLED=true); "
                   "then `hermes gateway run` (a running one takes new routes at their first request)")


@webhook.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (secrets left out).")
@click.pass_obj
def list_routes(app, as_json):
    """The routes of webhook_subscriptions.json and config.yaml."""
    from hermes.cli.app import echo_json

    found = {**_routes(app), **(app.config.get("platforms.webhook.extra.routes") or {})}
    shown = [{"name": name, "url": _url(app, name), **{k: v for k, v in route.items() if k != "secret"}}
             for name, route in sorted(found.items()) if isinstance(route, dict)]
    if as_json:
        echo_json(shown)
        return
    for route in shown:
        click.echo(f"{route['name']}: {route['url']} -> {route.get('deliver') or 'log'}"
                   f" ({', '.join(route.get('events') or []) or 'all events'})")
    if not shown:
        click.echo("no webhook routes (`hermes webhook subscribe NAME`)")


@webhook.command()
@click.argument("name")
@click.pass_obj
def remove(app, name):
    """Remove the route NAME from webhook_subscriptions.json."""
    from hermes.cli.app import Fail

    routes = _routes(app)
    if name not in routes:
        raise Fail(f"no route {name} in {app.config.data_dir / FILE}")
    del routes[name]
    _save(app, routes)
    click.echo(f"removed {name}")


@webhook.command()
@click.argument("name")
@click.option("--payload", default='{"test": true}', show_default=True, help="The event's JSON.")
@click.pass_obj
def test(app, name, payload):
    """POST a signed test event to the route NAME of the running gateway; its answer."""
    import hashlib
    import hmac
    import urllib.error
    import urllib.request

    from hermes.cli.app import EXIT_USAGE, Fail

    route = {**_routes(app), **(app.config.get("platforms.webhook.extra.routes") or {})}.get(name)
    if not isinstance(route, dict):
        raise Fail(f"no route {name} (`hermes webhook list`)")
    try:
        body = json.dumps(json.loads(payload)).encode()
    except ValueError as exc:
        raise Fail(f"--payload is no JSON ({exc})", EXIT_USAGE) from None
    secret = str(route.get("secret") or app.config.get("platforms.webhook.extra.secret"))
    request = urllib.request.Request(_url(app, name), body, method="POST", headers={
        "Content-Type": "application/json", "X-Webhook-Signature": hmac.new(secret.encode(), body,
                                                                            hashlib.sha256).hexdigest()})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            click.echo(f"{answer.status} {answer.read().decode()}")
    except urllib.error.HTTPError as refused:
        raise Fail(f"{refused.code} {refused.read().decode()}") from None
    except OSError as exc:
        raise Fail(f"no gateway takes webhooks at {_url(app, name)} ({getattr(exc, 'reason', exc)}): "
                   "`hermes gateway run` with platforms.webhook.enabled") from None
