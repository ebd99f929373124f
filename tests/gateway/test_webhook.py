"""Webhooks, end to end: `hermes gateway run --platform webhook` takes signed POSTs on a loopback port, runs a turn on
each route's prompt (the model the wire-protocol server through the real openai SDK) and delivers the answer to a
gateway platform (ntfy's loopback server, tests/ntfyapi.py)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, starter
from tests.mailserver import free_port
from tests.ntfyapi import NtfyAPI

PR = {"action": "opened", "number": 7, "pull_request": {"title": "Fix the parser", "user": {"login": "bob"}}}


@pytest.fixture
def ntfy_api():
    with NtfyAPI() as api:
        yield api


@pytest.fixture
def webhook(hermes_home, wire_server, ntfy_api):
    """``webhook(routes)`` -> ``post(route, payload, headers={}, secret=...)`` -> (status, JSON answer), on a running
    gateway whose webhook routes are ``routes``."""
    port = free_port()
    start = starter(hermes_home, wire_server, {}, {"NTFY_SERVER_URL": ntfy_api.url, "NTFY_TOPIC": "hermes-in"})

    def run(routes: dict, config: dict = None, env: dict = None):
        running = start(config={"platforms": {"webhook": {"enabled": True, "extra": {
            "host": "127.0.0.1", "port": port, "routes": routes}}}, **(config or {})}, env=env,
                        args=("--platform", "webhook"))

        def listening() -> bool:
            assert running.process.poll() is None, running.stop()
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).status == 200
            except OSError:
                return False

        eventually(listening)

        def post(route: str, payload: dict, headers: dict = None, secret: str = "s3cret") -> tuple:
            body = json.dumps(payload).encode()
            signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
            request = urllib.request.Request(f"http://127.0.0.1:{port}/webhooks/{route}", body, method="POST",
                                             headers={"Content-Type": "application/json",
                                                      "X-Hub-Signature-256": signature, **(headers or {})})
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    return answer.status, json.loads(answer.read())
            except urllib.error.HTTPError as refused:
                return refused.code, json.loads(refused.read())

        post.running = running
        return post

    yield run
    start.stop_all()


def test_a_signed_event_is_a_turn_whose_answer_is_delivered_once_and_the_rest_is_refused(webhook, ntfy_api,
                                                                                          wire_server, hermes,
                                                                                          hermes_home):
    wire_server.push(reply("Looks good: one nit."), reply("I will not switch models."))
    post = webhook({"github-pr": {"secret": "s3cret", "events": ["pull_request"], "deliver": "ntfy",
                                  "prompt": "Review PR #{number} by {pull_request.user.login}: {pull_request.title}",
                                  "deliver_extra": {"chat_id": "reviews"}},
                    "alerts": {"secret": "s3cret", "deliver_only": True, "deliver": "ntfy:ops",
                               "prompt": "{alert.name} is {alert.state}"},
                    "comments": {"secret": "s3cret", "prompt": "{comment.body}", "deliver": "ntfy:reviews"}})
    github = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1"}
    assert post("github-pr", PR, github) == (202, {"status": "accepted", "delivery_id": "d-1"})
    assert ntfy_api.wait_sent(1) == [("reviews", "Looks good: one nit.")]
    assert [m["content"] for m in wire_server.requests[0].body["messages"] if m["role"] == "user"] == [
        "Review PR #7 by bob: Fix the parser"]
    assert post("github-pr", PR, github) == (200, {"status": "duplicate", "delivery_id": "d-1"})  # a retry
    assert post("github-pr", PR, {**github, "X-GitHub-Delivery": "d-2"}, secret="guessed") == (
        401, {"error": "invalid signature"})
    assert post("github-pr", {"ref": "main"}, {"X-GitHub-Event": "push"}) == (200, {"status": "ignored",
                                                                                     "event": "push"})
    assert post("nowhere", PR)[0] == 404
    assert post("alerts", {"alert": {"name": "disk", "state": "firing"}}) == (200, {"status": "delivered"})
    assert ntfy_api.wait_sent(2)[-1] == ("ops", "disk is firing")  # no model: the filled prompt is the message
    assert post("comments", {"comment": {"body": "/model evil-model"}})[0] == 202  # a prompt is never a command
    assert ntfy_api.wait_sent(3)[-1] == ("reviews", "I will not switch models.")
    assert wire_server.requests[-1].body["model"] == "gpt-test"
    assert [m["content"] for m in wire_server.requests[-1].body["messages"] if m["role"] == "user"] == [
        "/model evil-model"]  # its own conversation: the first event's is not in it
    time.sleep(0.5)
    assert len(wire_server.requests) == 2
    state = json.loads((hermes_home / "gateway" / "state.json").read_text())
    assert state["sessions"] == {} and state["inbox"] == []  # an event's conversation is not kept to go on
    assert len(json.loads(hermes("sessions", "list", "--json").stdout)) == 2  # its session is


def test_svix_signed_events_filters_and_scripts(webhook, ntfy_api, hermes_home):
    """Svix's signatures (Clerk, Resend, AgentMail send them): base64 HMAC-SHA256 of "ID.TIMESTAMP.BODY" with the
    key a ``whsec_`` secret holds, the id the delivery's; and hermes-agent's route filters and scripts."""
    key = b"clerk-signing-key"
    (hermes_home / "scripts").mkdir()
    (hermes_home / "scripts" / "shout.py").write_text("import json, sys\nevent = json.load(sys.stdin)\n"
                                                      "print(json.dumps({'loud': event['text'].upper()}))\n")
    post = webhook({"signups": {"secret": "whsec_" + base64.b64encode(key).decode(), "deliver_only": True,
                                "deliver": "ntfy:ops", "prompt": "{type}: {data.email}",
                                "filters": {"field": "type", "regex": "^user\\."}},  # hermes-agent's filters
                    "shouts": {"secret": "s3cret", "deliver_only": True, "deliver": "ntfy:ops", "prompt": "{loud}",
                               "script": "shout.py"}})
    assert post("shouts", {"text": "fire drill"}) == (200, {"status": "delivered"})
    assert ntfy_api.wait_sent(1) == [("ops", "FIRE DRILL")]  # the script's event filled the prompt
    event = {"type": "user.created", "data": {"email": "ann@example.org"}}

    def svix(msg: str, stamp: int, signing_key: bytes = key) -> dict:
        content = f"{msg}.{stamp}.".encode() + json.dumps(event).encode()
        mac = base64.b64encode(hmac.new(signing_key, content, hashlib.sha256).digest()).decode()
        return {"X-Hub-Signature-256": "", "svix-id": msg, "svix-timestamp": str(stamp),
                "svix-signature": f"v1,bm90IGl0 v1,{mac}"}  # one of the signatures it lists must match

    now = int(time.time())
    assert post("signups", event, svix("msg_1", now)) == (200, {"status": "delivered"})
    assert ntfy_api.wait_sent(2)[-1] == ("ops", "user.created: ann@example.org")
    assert post("signups", event, svix("msg_1", now)) == (200, {"status": "duplicate", "delivery_id": "msg_1"})
    assert post("signups", event, svix("msg_2", now, b"guessed"))[0] == 401
    assert post("signups", event, svix("msg_3", now - 600))[0] == 401  # older than 5 minutes: a replay
    event = {"type": "session.created", "data": {}}
    assert post("signups", event, svix("msg_4", now)) == (200, {"status": "ignored", "reason": "filter",
                                                                 "route": "signups"})


EVENT = {"action": "opened", "pull_request": {"base": {"ref": "main"}, "labels": ["bug", "ui"], "draft": False,
                                              "title": "Fix the parser"}, "sender": {"login": "bob"}}


@pytest.mark.parametrize("filters, taken", [
    (None, True),
    ({"field": "pull_request.base.ref", "equals": "main"}, True),
    ([{"field": "pull_request.base.ref", "equals": "main"}, {"field": "action", "equals": "closed"}], False),  # all
    ({"any": [{"field": "action", "equals": "closed"}, {"field": "sender.login", "in": ["bob", "ann"]}]}, True),
    ({"not": {"field": "pull_request.draft", "equals": True}}, True),
    ({"field": "pull_request.labels", "contains": "bug"}, True),
    ({"field": "pull_request.title", "contains": "parser"}, True),
    ({"field": "pull_request.title", "regex": "^Fix"}, True),
    ({"field": "pull_request.title", "regex": "("}, False),  # a regex that cannot be read matches nothing
    ({"field": "pull_request.merged_by", "missing": True}, True),
    ({"field": "pull_request.merged_by", "exists": True}, False),
    ({"field": "pull_request.labels.1", "equals": "ui"}, True),
    ({"field": "event", "equals": "pull_request"}, True),
    ({"field": "headers.x-github-event", "equals": "pull_request"}, True),  # any case of the header's name
    ({"field": "action", "not_equals": "opened"}, False),
    ({"field": "sender.login", "in_file": "reviewers.txt"}, True),  # a value a line, in the data folder
    ({"field": "action", "sounds_like": "opened"}, False),  # no test it knows: nothing
    ("action == opened", False),
])
def test_a_routes_filters_choose_the_events_it_takes(filters, taken, tmp_path):
    from plugins.gateway.webhook import passes

    (tmp_path / "reviewers.txt").write_text("ann\nbob\n")
    assert passes(filters, EVENT, "pull_request", {"X-GitHub-Event": "pull_request"}, tmp_path) is taken


def test_a_routes_script_reshapes_or_drops_the_event_without_the_keys(tmp_path, monkeypatch):
    from plugins.gateway.webhook import transformed

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "triage.py").write_text(
        "import json, os, sys\nevent = json.load(sys.stdin)\n"
        "if event['level'] == 'debug': print('[SILENT]')\n"
        "elif event['level'] == 'info': print('just text')\n"
        "else: print(json.dumps({'summary': event['msg'].upper(), 'key': os.environ.get('OPENAI_API_KEY')}))\n")
    (scripts / "fails.sh").write_text("exit 3\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    assert transformed("triage.py", {"level": "error", "msg": "disk full"}, tmp_path) == (
        {"summary": "DISK FULL", "key": None}, "")  # a script never sees hermes' keys
    assert transformed("triage.py", {"level": "info", "msg": "x"}, tmp_path) == (
        {"level": "info", "msg": "x", "script_output": "just text"}, "")
    assert transformed("triage.py", {"level": "debug", "msg": "x"}, tmp_path) == (
        None, "its script triage.py dropped the event")
    assert transformed("fails.sh", {}, tmp_path) == (None, "its script fails.sh dropped the event (exit 3)")
    assert transformed("../../etc/passwd", {}, tmp_path)[1].startswith("its script ../../etc/passwd is no file in ")


def test_a_route_without_a_secret_stops_the_start_with_one_line(hermes_home, wire_server):
    start = starter(hermes_home, wire_server, {}, {})
    ended = start(config={"platforms": {"webhook": {"enabled": True, "extra": {
        "port": free_port(), "routes": {"open": {"prompt": "{x}"}}}}}}).ended()
    assert ended.returncode == 1 and ended.stderr.strip().splitlines()[-1] == (
        "hermes: error: webhook: the route open has no secret (each route's `secret`, or WEBHOOK_SECRET; "
        "INSECURE_NO_AUTH only on 127.0.0.1)")


def test_nobody_is_there_to_approve_so_a_flagged_command_is_refused_at_once_and_a_routes_skills_load(
        webhook, ntfy_api, wire_server, hermes_home):
    command = "python3 -c 'print(6 * 7)'"  # inline code: the approval check asks
    wire_server.push(reply(tool_calls=[("terminal", {"command": command})]), reply("It was refused."))
    (hermes_home / "skills" / "ops").mkdir(parents=True)
    (hermes_home / "skills" / "ops" / "SKILL.md").write_text("---\nname: ops\ndescription: Ops.\n---\nCheck the "
                                                             "runbook first.\n")
    post = webhook({"ops": {"secret": "s3cret", "prompt": "{task}", "deliver": "ntfy:ops", "skills": ["ops"]}},
                   config={"sandbox": {"mode": "off"}})
    assert post("ops", {"task": "run it"})[0] == 202
    assert ntfy_api.wait_sent(1) == [("ops", "It was refused.")]  # no question was sent there
    [result] = [m["content"] for m in wire_server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "42" not in result and "denied" in result.lower(), result
    assert "Check the runbook first." in json.dumps(wire_server.requests[0].body["messages"])  # the route's skill


def test_subscribe_keeps_a_route_with_a_new_secret_that_test_signs_and_the_running_gateway_takes(webhook, ntfy_api,
                                                                                                 hermes, hermes_home):
    made = hermes("webhook", "subscribe", "deploys", "--deliver", "ntfy:ops", "--deliver-only", "--events",
                  "deployment", "--prompt", "{env} deployed", "--json")
    route = json.loads(made.stdout)
    assert made.returncode == 0 and len(route["secret"]) >= 40 and route["events"] == ["deployment"]
    assert (hermes_home / "webhook_subscriptions.json").stat().st_mode & 0o077 == 0  # its secrets: the user's only
    assert hermes("webhook", "subscribe", "Bad Name").stderr == (
        "hermes: error: 'Bad Name' is no route name: lowercase letters, digits, - and _\n")
    post = webhook({})  # the gateway reads the routes of webhook_subscriptions.json
    assert "webhook: routes deploys\n" in hermes("gateway", "status").stdout
    assert hermes("gateway", "setup", "--platform", "webhook").stderr.startswith(
        "hermes: error: webhook is set up with platforms.webhook in config.yaml")  # no questions: no bot, no users
    [listed] = json.loads(hermes("webhook", "list", "--json").stdout)
    assert listed["name"] == "deploys" and "secret" not in listed and listed["url"].endswith("/webhooks/deploys")
    tested = hermes("webhook", "test", "deploys", "--payload", '{"type": "deployment", "env": "staging"}')
    assert tested.returncode == 0 and tested.stdout.startswith('200 {"status": "delivered"}'), tested.stderr
    assert ntfy_api.wait_sent(1) == [("ops", "staging deployed")]
    assert hermes("webhook", "remove", "deploys").returncode == 0
    assert json.loads(hermes("webhook", "list", "--json").stdout) == []
    event = {"type": "deployment", "env": "prod"}
    assert post("deploys", event, secret=route["secret"])[0] == 404  # the running gateway read the file again
    assert hermes("webhook", "subscribe", "builds", "--deliver", "ntfy:ci", "--deliver-only", "--prompt",
                  "{env} built", "--secret", "b-secret").returncode == 0  # while it runs: taken at once
    assert post("builds", event, secret="b-secret") == (200, {"status": "delivered"})
    assert ntfy_api.wait_sent(2)[-1] == ("ci", "prod built")
    routes = json.loads((hermes_home / "webhook_subscriptions.json").read_text())
    (hermes_home / "webhook_subscriptions.json").write_text(json.dumps({**routes, "open": {"prompt": "{x}"}}))
    assert post("open", event, secret="")[0] == 404 and post("builds", event, secret="b-secret")[0] == 200
    assert "webhook: the route open has no secret (each route's `secret`, or WEBHOOK_SECRET; INSECURE_NO_AUTH only " \
        "on 127.0.0.1): it is not taken" in post.running.stop()  # a route edited in by hand: left out, said


def test_an_answer_delivered_as_a_github_comment_on_the_pull_request_of_the_event(webhook, wire_server, hermes_home):
    """hermes-agent's `deliver: github_comment`: the answer is a comment on the event's pull request, posted with
    GITHUB_TOKEN to the API GITHUB_API_URL names (here a loopback stand-in for GitHub's REST API)."""
    import http.server
    import threading

    posted = []

    class GitHub(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            posted.append((self.path, self.headers["Authorization"], body["body"]))
            failing = "/repos/acme/locked/" in self.path
            self.send_response(403 if failing else 201)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"message": "Resource not accessible by integration"} if failing
                                        else {"id": 1}).encode())

        def log_message(self, *args):
            pass

    api = http.server.ThreadingHTTPServer(("127.0.0.1", 0), GitHub)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    wire_server.push(reply("LGTM, one nit: the parser's error names no line."), reply("Fine too."))
    env = {"GITHUB_API_URL": f"http://127.0.0.1:{api.server_address[1]}", "GITHUB_TOKEN": "ghp_test"}
    post = webhook({"review": {"secret": "s3cret", "events": ["pull_request"], "deliver": "github_comment",
                               "prompt": "Review PR #{number}: {pull_request.title}"},
                    "named": {"secret": "s3cret", "deliver": "github_comment", "prompt": "{text}",
                              "deliver_extra": {"repo": "acme/{project}", "pr_number": "{pr}"}}}, env=env)
    github = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "g-1"}
    try:
        assert post("review", {**PR, "repository": {"full_name": "acme/parser"}}, github)[0] == 202
        eventually(lambda: posted)
        assert posted == [("/repos/acme/parser/issues/7/comments", "Bearer ghp_test",
                           "LGTM, one nit: the parser's error names no line.")]
        # an event that names no repository costs no model call: the service hears why
        assert post("review", PR, {**github, "X-GitHub-Delivery": "g-2"}) == (422, {
            "error": "no repository to comment on (deliver_extra.repo is '{repository.full_name}'; owner/name)"})
        assert post("named", {"text": "and this?", "project": "locked", "pr": 3})[0] == 202  # GitHub refuses it
        eventually(lambda: len(posted) == 2)
        assert posted[1][0] == "/repos/acme/locked/issues/3/comments" and len(wire_server.requests) == 2
        said = post.running.stop()
        assert "GitHub answered 403 for acme/locked#3: Resource not accessible by integration" in said, said
    finally:
        api.shutdown()


def test_a_github_comment_route_without_a_token_stops_the_start_with_one_line(hermes_home, wire_server):
    start = starter(hermes_home, wire_server, {}, {})
    ended = start(config={"platforms": {"webhook": {"enabled": True, "extra": {"port": free_port(), "routes": {
        "review": {"secret": "s", "deliver": "github_comment"}}}}}}).ended()
    assert ended.returncode == 1 and ended.stderr.strip().splitlines()[-1] == (
        "hermes: error: webhook: the route review delivers to github_comment: set GITHUB_TOKEN (or GH_TOKEN), a "
        "token that may comment on the repository")
