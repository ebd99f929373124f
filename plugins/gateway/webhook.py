"""Webhooks (hermes-agent's webhook platform): a service (GitHub, GitLab, a monitor, a script) POSTs an event to
``/webhooks/ROUTE``, and the agent runs a turn on the route's prompt filled from it; the answer goes where the route
says. hermes-agent's settings: ``platforms.webhook.extra`` in config.yaml (``host``, ``port`` 8644, ``secret``,
``rate_limit`` a minute, ``routes``) or ``WEBHOOK_ENABLED``, ``WEBHOOK_PORT``, ``WEBHOOK_SECRET``; the routes of
hermes-agent's ``hermes webhook subscribe`` (``webhook_subscriptions.json``, read again when it changes) too. A route::

    github-pr:
      secret: ...                       # checked on every request (or the global one); required
      events: [pull_request]            # the event types taken (X-GitHub-Event, X-GitLab-Event, "type"); all
      prompt: "Review PR #{number}: {pull_request.title}\\n{pull_request.html_url}"  # {__raw__}: all of it
      deliver: telegram                 # or telegram:CHAT, any gateway platform, github_comment (its module)
      deliver_extra: {chat_id: "42"}    # log (the default): stderr
      deliver_only: false               # true: the filled prompt is the message, no model
      skills: [code-review]             # loaded with the prompt
      filters: [{field: pull_request.base.ref, equals: main}]   # the events taken: plugins.gateway.webhook.passes
      script: triage.py                 # in the data folder's scripts/: the event in, the event to use out

A request is taken only with its signature: GitHub's ``X-Hub-Signature-256``, GitLab's ``X-Gitlab-Token``, Svix's
``svix-signature`` (Clerk, Resend ...; the secret as they give it, ``whsec_...``), or an HMAC-SHA256 of the body in
``X-Webhook-Signature`` (of ``TIMESTAMP.BODY`` in ``X-Webhook-Signature-V2`` with ``X-Webhook-Timestamp``; Svix's
and V2 at most 5 minutes old); a delivery seen in the last hour is not run again (a service's
retry). Each event is a conversation of its own; nobody is there to approve, so what would ask is refused, and a
prompt is never a command."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Optional

from plugins.gateway import github
from plugins.gateway.hookspecs import Incoming, PlatformError, channel_of
from plugins.gateway.listening import Listened, listen

log = logging.getLogger("hermes.gateway")
PORT = 8644
NO_AUTH = "INSECURE_NO_AUTH"  # hermes-agent's: no signature asked (on this machine only)
SEEN_FOR = 3600  # seconds a delivery id is remembered


def render(template: str, payload: Any, event: str, route: str) -> str:
    """hermes-agent's prompt template: ``{a.b}`` from the payload, ``{__raw__}`` all of it, ``{event_type}``."""
    if not template:
        return f"Webhook event '{event}' on route '{route}':\n\n```json\n{json.dumps(payload, indent=2)[:4000]}\n```"

    def value(found: re.Match) -> str:
        key = found[1]
        if key == "__raw__":
            return json.dumps(payload, indent=2)[:4000]
        if key == "event_type":
            return event
        at: Any = payload
        for part in key.split("."):
            if not isinstance(at, dict) or part not in at:
                return found[0]
            at = at[part]
        return json.dumps(at, indent=2)[:2000] if isinstance(at, (dict, list)) else str(at)

    return re.sub(r"\{([A-Za-z0-9_.]+)\}", value, template)


def signed(headers: Any, body: bytes, secret: str) -> bool:
    """Whether the request carries ``secret``'s signature of ``body`` (GitHub's, GitLab's, Svix's, or the generic
    V2/V1)."""
    def same(given: str, wanted: str) -> bool:
        return hmac.compare_digest(given.encode(), wanted.encode())

    def mac(data: bytes) -> str:
        return hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()

    if headers.get("X-Hub-Signature-256"):
        return same(headers["X-Hub-Signature-256"], "sha256=" + mac(body))
    if headers.get("X-Gitlab-Token"):
        return same(headers["X-Gitlab-Token"], secret)
    if headers.get("svix-signature"):  # Svix's (Clerk, Resend, AgentMail ...): of "ID.TIMESTAMP.BODY", base64
        import base64
        import binascii

        stamp, key = str(headers.get("svix-timestamp") or ""), secret.removeprefix("whsec_")
        try:
            key = base64.b64decode(key, validate=True) if secret.startswith("whsec_") else secret.encode()
        except binascii.Error:
            return False
        content = f"{headers.get('svix-id') or ''}.{stamp}.".encode() + body
        wanted = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
        given = [each.partition(",")[2] for each in headers["svix-signature"].split() if each.startswith("v1,")]
        return stamp.isdigit() and abs(time.time() - int(stamp)) <= 300 and any(same(g, wanted) for g in given)
    if headers.get("X-Webhook-Signature-V2"):  # never falls back to V1: that would undo its replay protection
        stamp = str(headers.get("X-Webhook-Timestamp") or "")
        return stamp.isdigit() and abs(time.time() - int(stamp)) <= 300 and same(
            headers["X-Webhook-Signature-V2"], mac(stamp.encode() + b"." + body))
    return bool(headers.get("X-Webhook-Signature")) and same(headers["X-Webhook-Signature"], mac(body))


_NONE = object()  # a field the event does not have


def passes(filters: Any, payload: dict, event: str, headers: Any, home: Any = None) -> bool:
    """Whether an event passes a route's ``filters`` (hermes-agent's): a spec, or a list of them that must all hold.
    A spec is ``{all: [...]}``, ``{any: [...]}``, ``{not: spec}``, or a ``field`` (dotted, in the payload; first
    ``event``, ``headers`` or ``payload`` to name those) with one of ``exists``, ``missing``, ``equals``,
    ``not_equals``, ``contains``, ``in``, ``in_file`` (a JSON list or a value a line, in the data folder ``home``),
    ``regex``. A spec that is none of these holds for nothing (said in the log)."""
    if not filters:
        return True
    specs = filters if isinstance(filters, list) else [filters]
    return all(_holds(spec, payload, event, headers, home) for spec in specs)


def _holds(spec: Any, payload: dict, event: str, headers: Any, home: Any) -> bool:
    if not isinstance(spec, dict):
        log.warning("webhook: a filter that is no mapping matches nothing: %r", spec)
        return False
    for key, combine in (("all", all), ("any", any)):
        if key in spec:
            return isinstance(spec[key], list) and combine(_holds(s, payload, event, headers, home) for s in spec[key])
    if "not" in spec:
        return not _holds(spec["not"], payload, event, headers, home)
    value = _field(str(spec.get("field") or ""), payload, event, headers)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True) if value is not _NONE else ""
    if "exists" in spec or "missing" in spec:
        return (value is not _NONE) is bool(spec.get("exists", not spec.get("missing")))
    if "equals" in spec:
        return value is not _NONE and value == spec["equals"]
    if "not_equals" in spec:
        return value is _NONE or value != spec["not_equals"]
    if "contains" in spec:
        return value is not _NONE and (spec["contains"] in value if isinstance(value, (list, dict))
                                       else str(spec["contains"]) in text)
    if "in" in spec or "in_file" in spec:
        return value is not _NONE and value in (spec["in"] if "in" in spec else _listed(spec["in_file"], home))
    if "regex" in spec:
        try:
            return value is not _NONE and re.search(str(spec["regex"]), text) is not None
        except re.error as exc:
            log.warning("webhook: a filter's regex %r cannot be read (%s): it matches nothing", spec["regex"], exc)
            return False
    log.warning("webhook: a filter without a test it knows matches nothing: %r", spec)
    return False


def _field(name: str, payload: dict, event: str, headers: Any) -> Any:
    parts = [part for part in name.split(".") if part]
    if not parts:
        return _NONE
    heads = {str(k).lower(): v for k, v in dict(headers or {}).items()}
    roots = {"payload": payload, "event": event, "event_type": event, "headers": heads}
    value = roots[parts[0]] if parts[0] in roots else payload
    for part in parts[1:] if parts[0] in roots else parts:
        if isinstance(value, dict):
            value = value.get(part.lower() if value is heads else part, _NONE)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _NONE
        if value is _NONE:
            return _NONE
    return value


def _listed(path: Any, home: Any) -> list:
    """The values of a filter's ``in_file``: a JSON list (a mapping's keys), or a value a line."""
    from pathlib import Path

    raw = str(path or "").strip()
    raw = raw.replace("~/.hermes", str(home), 1) if home is not None and raw.startswith("~/.hermes") else raw
    where = Path(raw).expanduser()
    where = where if where.is_absolute() or home is None else Path(home) / where
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as exc:
        log.warning("webhook: a filter's in_file %s cannot be read (%s): it matches nothing", where, exc.strerror)
        return []
    try:
        found = json.loads(text)
    except ValueError:
        return [line.strip() for line in text.splitlines() if line.strip()]
    return list(found) if isinstance(found, (list, dict)) else [found]


SCRIPT_SECONDS = 30


def transformed(script: str, payload: dict, home: Any, environ: Optional[dict] = None) -> "tuple[Optional[dict], str]":
    """A route's ``script`` (hermes-agent's, in the data folder's ``scripts/``; ``.sh`` runs with bash, the rest with
    Python): the event's JSON on its stdin, its stdout a JSON object that replaces the event, or text kept as
    ``script_output``; ``(None, why)`` for an event it drops (nothing printed, ``[SILENT]``, an exit not 0, a time
    out). ``environ``: its environment, a tool's (no keys); by default hermes' own without them."""
    from plugins.scripts import run

    if environ is None:
        from kernel.secrets import Secrets
        from plugins.tool_args import tool_environment

        environ = tool_environment(Secrets())
    done, why = run(script, home, environ, SCRIPT_SECONDS, stdin=json.dumps(payload))
    if done is None:
        return None, why
    path = Path(done.args[-1])
    out = done.stdout.strip()
    if done.returncode != 0 or not out or out == "[SILENT]":
        return None, f"its script {path.name} dropped the event" + (f" (exit {done.returncode})" if done.returncode
                                                                     else "")
    try:
        found = json.loads(out)
    except ValueError:
        return {**payload, "script_output": out}, ""
    if not isinstance(found, dict) or found.get("[SILENT]") is True or found.get("__hermes_ignore__") is True:
        return None, f"its script {path.name} dropped the event"
    return found, ""


def subscriptions(data_dir) -> dict:
    """The routes of hermes-agent's ``hermes webhook subscribe`` (``webhook_subscriptions.json``; ``{}`` for none)."""
    try:
        found = json.loads((data_dir / "webhook_subscriptions.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("webhook: webhook_subscriptions.json cannot be read (%s): its routes are not taken", exc)
        return {}
    return found if isinstance(found, dict) else {}


class Webhook(Listened):
    name = "webhook"
    most = 1_000_000  # an answer goes whole to where it is delivered, in that platform's parts
    automated = True  # the senders are checked here (signatures); no commands, no approvals

    def __init__(self, routes: dict, host: str = "", port: int = PORT, secret: str = "", rate_limit: int = 30,
                 deliver: Optional[Callable[[str, str, str], str]] = None, data_dir=None,
                 environ: Optional[Callable[[], dict]] = None):
        super().__init__()
        self.configured, self.host, self.port, self.secret = routes, host or "0.0.0.0", port, secret
        self.data_dir, self.read_at = data_dir, None  # where `hermes webhook subscribe` writes; its file's stamp
        self.routes = self._every()  # checked at the start
        self.rate_limit, self.deliver = rate_limit, deliver  # deliver(target, text, path): why it failed, or ""
        self.environ = environ  # a route script's environment: a tool's (without the config's keys)
        self.when: dict = {}  # delivery id -> when it came (a service's retry within the hour is not run again)
        self.comments: dict = {}  # chat -> (repo, number) its answer is a GitHub comment on
        self.hits: dict = {}  # route -> the times of its requests in the last minute
        self.lock = threading.Lock()

    # -- receiving
    def _unfit(self, name: str, route: Any) -> str:
        """Why a route cannot be taken ("" when it can)."""
        local = self.host in ("127.0.0.1", "localhost", "::1")
        secret = route.get("secret") or self.secret if isinstance(route, dict) else ""
        if not isinstance(route, dict) or not secret or secret == NO_AUTH and not local:
            return (f"webhook: the route {name} has no secret (each route's `secret`, or WEBHOOK_SECRET; {NO_AUTH} "
                    "only on 127.0.0.1)")
        if str(route.get("deliver") or "log").partition(":")[0] == "gitlab_comment":
            return (f"webhook: the route {name} delivers to {route['deliver']}, which is not here: deliver to a "
                    "gateway platform, github_comment or log")
        if route.get("deliver") == github.DELIVER and not github.token():
            return (f"webhook: the route {name} delivers to github_comment: set GITHUB_TOKEN (or GH_TOKEN), a token "
                    "that may comment on the repository")
        return ""

    def _every(self) -> dict:
        """config.yaml's routes, and webhook_subscriptions.json's of other names."""
        return {**(subscriptions(self.data_dir) if self.data_dir is not None else {}), **self.configured}

    def _reread(self, starting: bool = False) -> None:
        """The routes of config.yaml and webhook_subscriptions.json, the file read again when it changed (as
        hermes-agent does: a route subscribed or removed while the gateway runs counts at the next request). At the
        start a route that cannot be taken stops it; later it is left out and said."""
        from hermes.host.paths import stamp

        now = stamp(str(self.data_dir / "webhook_subscriptions.json")) if self.data_dir is not None else None
        if now == self.read_at and not starting:
            return
        self.read_at, routes = now, self._every()
        for name, route in list(routes.items()):
            if why := self._unfit(name, route):
                if starting:
                    raise PlatformError(why, lasting=True)
                log.warning("%s: it is not taken", why)
                del routes[name]
        self.routes = routes

    def start(self) -> str:
        self._reread(starting=True)
        self.server = listen("webhook", self.host, self.port, self._request)
        return f"http://{self.host}:{self.server.server_address[1]}/webhooks/ROUTE ({len(self.routes)} route(s))"

    def take(self, route_name: str, headers: Any, body: bytes) -> tuple:
        """``(status, JSON answer)`` of a POST to ``/webhooks/ROUTE``; a turn queued when it is taken."""
        with self.lock:
            self._reread()
        route = self.routes.get(route_name)
        if not isinstance(route, dict):
            return 404, {"error": f"no route {route_name}"}
        secret = route.get("secret") or self.secret
        if secret != NO_AUTH and not signed(headers, body, secret):
            log.warning("webhook: a request to %s had no valid signature", route_name)
            return 401, {"error": "invalid signature"}
        now = time.time()
        with self.lock:
            hits = self.hits.setdefault(route_name, deque())
            while hits and now - hits[0] > 60:
                hits.popleft()
            if len(hits) >= self.rate_limit:
                return 429, {"error": "rate limit exceeded"}
            hits.append(now)
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            return 400, {"error": "the body is no JSON"}
        payload = payload if isinstance(payload, dict) else {"payload": payload}
        event = str(headers.get("X-GitHub-Event") or headers.get("X-GitLab-Event") or payload.get("event_type") or
                    payload.get("type") or "unknown")
        if route.get("events") and event not in route["events"]:
            return 200, {"status": "ignored", "event": event}
        if not passes(route.get("filters"), payload, event, headers, self.data_dir):
            return 200, {"status": "ignored", "reason": "filter", "route": route_name}
        if route.get("script") and self.data_dir is not None:  # before the delivery id is noted: dropped, a retry
            payload, why = transformed(route["script"], payload, self.data_dir,  # runs again
                                       self.environ() if self.environ else None)
            if payload is None:
                log.info("webhook: %s: %s", route_name, why)
                return 200, {"status": "ignored", "reason": "script", "route": route_name}
        comment = None
        if route.get("deliver") == github.DELIVER:  # where the answer goes, known before a model is paid for
            comment, why = github.where(route.get("deliver_extra"), payload, event, route_name)
            if comment is None:
                log.warning("webhook: %s: %s", route_name, why)
                return 422, {"error": why}
        delivery = str(headers.get("X-GitHub-Delivery") or headers.get("svix-id") or headers.get("X-Request-ID") or
                       f"{now:.6f}")[:100]
        with self.lock:
            for old in [d for d, at in self.when.items() if now - at > SEEN_FOR]:
                del self.when[old]
            if delivery in self.when:
                return 200, {"status": "duplicate", "delivery_id": delivery}
            self.when[delivery] = now
            if comment is not None:
                self.comments[f"{route_name}/{delivery}"] = comment
        prompt = render(str(route.get("prompt") or ""), payload, event, route_name)
        if route.get("deliver_only"):  # no model: the filled prompt is the message
            try:
                self.send(f"{route_name}/{delivery}", prompt)
            except PlatformError as exc:
                return 502, {"error": str(exc)}
            return 200, {"status": "delivered"}
        self.inbox.put(Incoming(chat=f"{route_name}/{delivery}", user="webhook", name=route_name, text=prompt,
                                message=delivery, skills=[str(s) for s in route.get("skills") or []]))
        return 202, {"status": "accepted", "delivery_id": delivery}

    def _request(self, method: str, path: str, headers: Any, body: bytes) -> tuple:
        path = path.split("?")[0]
        if method == "GET":
            return (200, {"status": "ok"}) if path == "/health" else (404, {"error": "not found"})
        route = path.removeprefix("/webhooks/")
        if route == path or "/" in route:
            return 404, {"error": "not found"}
        return self.take(route, headers, body)

    # -- answers
    def _target(self, chat: str) -> str:
        route = self.routes.get(channel_of(chat)[0]) or {}
        deliver, extra = str(route.get("deliver") or "log"), route.get("deliver_extra") or {}
        chat_id = str(extra.get("chat_id") or "") if isinstance(extra, dict) else ""
        return f"{deliver}:{chat_id}" if chat_id and ":" not in deliver else deliver

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        """The answer, to where the route delivers."""
        target = self._target(chat)
        if target == github.DELIVER:
            if final and chat in self.comments:  # the answer, not the progress before it
                if failed := github.comment(*self.comments.pop(chat), text):
                    raise PlatformError(f"webhook: {chat}: {failed}")
            return ""
        if target == "log" or self.deliver is None:
            import click

            click.echo(f"webhook {chat}: {text}", err=True)
            return ""
        failed = self.deliver(target, text, "")
        if failed:
            raise PlatformError(f"webhook: {chat} to {target}: {failed}")
        return ""

    def send_file(self, chat: str, path: str, kind: str) -> None:
        target = self._target(chat)
        if target == github.DELIVER:
            log.warning("webhook: %s: a file is not put in a GitHub comment: %s", chat, path)
        elif target != "log" and self.deliver is not None:
            failed = self.deliver(target, "", path)
            if failed:
                raise PlatformError(f"webhook: {chat} to {target}: {failed}")

