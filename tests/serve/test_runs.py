"""`hermes serve`'s runs API: a run started, its lifecycle events followed (SSE), its approval question
answered over HTTP, a run stopped; the agent's model is the wire-protocol test server."""

import json
import threading
import time
import urllib.error
import urllib.request

import pytest

from plugins_providers.testserver import reply
from tests.serve.test_chat_completions import post


def events_of(served, run_id, into=None, timeout=60):
    """Every event of a run, read from its SSE stream until its last (appended to ``into`` as they come)."""
    into = [] if into is None else into
    with urllib.request.urlopen(f"{served.url}/v1/runs/{run_id}/events", timeout=timeout) as response:
        for line in response:
            line = line.decode().strip()
            if line.startswith("data: "):
                into.append(json.loads(line[6:]))
                if into[-1]["event"] in ("run.completed", "run.failed", "run.cancelled"):
                    break
    return into


def follow_until(served, run_id, name, timeout=30):
    """A thread reading the run's events into a list, once one named ``name`` has come: (events, thread)."""
    events = []
    follower = threading.Thread(target=events_of, args=(served, run_id, events))
    follower.start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not any(e["event"] == name for e in events):
        time.sleep(0.05)
    return events, follower


def get(served, path):
    try:
        with urllib.request.urlopen(served.url + path, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_a_run_answers_at_once_and_its_events_tell_the_turn(serve, wire_server, tmp_path):
    note = tmp_path / "note.txt"
    note.write_text("plum\n")
    served = serve()
    wire_server.push(reply(tool_calls=[("read_file", {"path": str(note)})]), reply("The note says plum."))
    status, _, started = post(served, "/v1/runs", {"input": "read the note"})
    assert status == 202 and started["run_id"].startswith("run_")
    events = events_of(served, started["run_id"])
    names = [e["event"] for e in events]
    assert names[0] == "run.started" and names[-1] == "run.completed"
    assert names.index("tool.started") < names.index("tool.completed") < names.index("message.delta")
    done = events[names.index("tool.completed")]
    assert done["tool"] == "read_file" and "plum" in done["result"] and done["error"] is False
    assert "".join(e["delta"] for e in events if e["event"] == "message.delta") == "The note says plum."
    assert events[-1]["output"] == "The note says plum."
    status, state = get(served, f"/v1/runs/{started['run_id']}")
    assert status == 200 and state["status"] == "completed" and state["output"] == "The note says plum."
    late = events_of(served, started["run_id"])  # a watcher that comes later sees it all from the start
    assert [e["event"] for e in late] == names


def test_a_key_the_model_types_into_a_tool_call_reaches_no_client(serve, wire_server):
    """The run's tool.started event carried the call's arguments as the model wrote them; a key in them is masked
    (the client reads which variable)."""
    key = "sk-typed-by-the-model-0123456789"
    served = serve(env={"SOME_API_KEY": key})
    wire_server.push(reply(tool_calls=[("read_file", {"path": f"/nowhere/{key}"})]), reply("gone"))
    status, _, started = post(served, "/v1/runs", {"input": "read it"})
    events = events_of(served, started["run_id"])
    assert key not in json.dumps(events)
    [tool] = [e for e in events if e["event"] == "tool.started"]
    assert "/nowhere/[hermes: the value of $SOME_API_KEY was masked]" in json.dumps(tool)


def test_the_approval_question_waits_for_the_client_and_deny_or_approve_decide(serve, wire_server, tmp_path):
    served = serve(config={"sandbox": {"mode": "off"}})
    command = "python3 -c 'print(6 * 7)'"  # inline code: the approval check asks
    wire_server.push(reply(tool_calls=[("terminal", {"command": command})]), reply("It was refused."),
                     reply(tool_calls=[("terminal", {"command": command})]), reply("It printed 42."))
    for choice, expected in (("deny", False), ("once", True)):
        _, _, started = post(served, "/v1/runs", {"input": "run it"})
        events, follower = follow_until(served, started["run_id"], "approval.request")
        asked = next(e for e in events if e["event"] == "approval.request")
        assert asked["command"] == command and asked["choices"] == ["once", "session", "always", "deny"]
        status, state = get(served, f"/v1/runs/{started['run_id']}")
        assert state["status"] == "waiting_for_approval" and state["pending_approval"]["approval_id"] == asked["approval_id"]
        status, _, answer = post(served, f"/v1/runs/{started['run_id']}/approval",
                                 {"choice": choice, "approval_id": asked["approval_id"]})
        assert status == 200 and answer["choice"] == choice
        follower.join(30)
        result = next(e for e in events if e["event"] == "tool.completed")
        assert ("42" in result["result"]) is expected, result
        assert events[-1]["event"] == "run.completed"
    status, _, body = post(served, f"/v1/runs/{started['run_id']}/approval", {"choice": "once"})
    assert status == 409 and body["error"]["code"] == "approval_not_active"
    status, _, body = post(served, f"/v1/runs/{started['run_id']}/approval", {"choice": "maybe"})
    assert status == 400 and body["error"]["code"] == "invalid_approval_choice"


def test_a_run_is_stopped_and_unknown_runs_are_404(serve, wire_server):
    served = serve()
    wire_server.push(reply(tool_calls=[("terminal", {"command": "sleep 30"})]), reply("never"))
    _, _, started = post(served, "/v1/runs", {"input": "wait"})
    events, follower = follow_until(served, started["run_id"], "tool.started")
    stopped_at = time.monotonic()
    status, _, body = post(served, f"/v1/runs/{started['run_id']}/stop", {})
    assert status == 200 and body["status"] == "stopping"
    follower.join(30)
    assert events[-1]["event"] == "run.cancelled" and time.monotonic() - stopped_at < 10
    assert get(served, f"/v1/runs/{started['run_id']}")[1]["status"] == "cancelled"
    assert len(wire_server.requests) == 1
    status, body = get(served, "/v1/runs/run_nope")
    assert status == 404 and body["error"]["code"] == "run_not_found"


def request(served, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(served.url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_stored_sessions_are_listed_read_renamed_and_deleted(serve, wire_server):
    served = serve()
    wire_server.push(reply("First answer."), reply("Second answer."))
    client = served.client()
    first = client.chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "user", "content": "first question"}])
    client.chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": "second question"}])
    session = first.headers["x-hermes-session-id"]
    status, listed = request(served, "GET", "/api/sessions?limit=10")
    assert status == 200 and listed["object"] == "list"
    assert [s["preview"] for s in listed["data"]] == ["second question", "first question"]
    assert listed["data"][1]["id"] == session and listed["data"][1]["platform"] == "api"
    status, messages = request(served, "GET", f"/api/sessions/{session}/messages")
    assert [(m["role"], m["content"]) for m in messages["data"]] == [("user", "first question"),
                                                                    ("assistant", "First answer.")]
    status, renamed = request(served, "PATCH", f"/api/sessions/{session[:-1]}", {"title": "  My   first "})
    assert status == 200 and renamed["session"]["title"] == "My first" and renamed["session"]["id"] == session
    assert request(served, "PATCH", f"/api/sessions/{session}", {"title": ""})[0] == 400
    assert request(served, "PATCH", f"/api/sessions/{session}", {"model": "x"})[1]["error"]["code"] == \
        "unsupported_session_field"
    status, deleted = request(served, "DELETE", f"/api/sessions/{session}")
    assert status == 200 and deleted["deleted"] is True
    status, gone = request(served, "GET", f"/api/sessions/{session}")
    assert status == 404 and gone["error"]["code"] == "session_not_found"


def test_two_servers_on_one_data_folder_serve_the_same_sessions_and_responses(serve, wire_server):
    first, second = serve(key="k" * 32), serve(key="k" * 32)
    wire_server.push(reply("One."), reply("Two."), reply("Three."))
    answer = first.client().chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "user", "content": "count with me"}])
    session = answer.headers["x-hermes-session-id"]
    second.client().chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": "next"}],
                                            extra_headers={"X-Hermes-Session-Id": session})
    assert [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] != "system"] == \
        ["count with me", "One.", "next"]
    response = first.client().responses.create(model="hermes-agent", input="remember three")
    assert second.client().responses.retrieve(response.id).output_text == "Three."


def test_sessions_are_created_forked_and_chatted_with_plain_and_streamed(serve, wire_server):
    served = serve()
    wire_server.push(reply("Hello, Ann."), reply("You are Ann."), reply("A fork answers."))
    status, created = request(served, "POST", "/api/sessions", {"id": "api_test_one", "title": "Ann's chat"})
    assert status == 201 and created["session"]["title"] == "Ann's chat"
    assert request(served, "POST", "/api/sessions", {"id": "api_test_one"})[0] == 409
    status, answer = request(served, "POST", "/api/sessions/api_test_one/chat", {"message": "I am Ann."})
    assert status == 200 and answer["message"]["content"] == "Hello, Ann." and answer["session_id"] == "api_test_one"
    stream = urllib.request.urlopen(urllib.request.Request(
        served.url + "/api/sessions/api_test_one/chat/stream", method="POST",
        data=json.dumps({"message": "Who am I?"}).encode(), headers={"Content-Type": "application/json"}),
        timeout=30).read().decode()
    blocks = [b for b in stream.split("\n\n") if b.startswith("event: ")]
    assert "".join(json.loads(b.split("data: ", 1)[1])["text"] for b in blocks if b.startswith("event: message.delta")) \
        == "You are Ann."
    assert blocks[-1].startswith("event: done") and json.loads(blocks[-1].split("data: ", 1)[1])["session_id"] == \
        "api_test_one"
    status, fork = request(served, "POST", "/api/sessions/api_test_one/fork", {"id": "api_test_fork"})
    assert status == 201 and fork["session"]["parent_session_id"] == "api_test_one"
    request(served, "POST", "/api/sessions/api_test_fork/chat", {"message": "And now?"})
    assert [m["content"] for m in wire_server.requests[2].body["messages"] if m["role"] == "user"] == \
        ["I am Ann.", "Who am I?", "And now?"]  # the fork goes on from the whole conversation
    assert len(request(served, "GET", "/api/sessions/api_test_one/messages")[1]["data"]) == 4  # the fork's is its own
    assert request(served, "POST", "/api/sessions/nope/chat", {"message": "x"})[0] == 404
    assert request(served, "POST", "/api/sessions/api_test_one/chat", {"message": ""})[0] == 400


@pytest.mark.parametrize("path,body,param", [
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": 42}]}, "messages[0].content"),
    ("/v1/chat/completions", {"messages": ["hi"]}, "messages[0]"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "stream": "yes"}, "stream"),
    ("/v1/responses", {"input": [{"role": "user", "content": 7}]}, "input"),
    ("/v1/responses", {"input": "hi", "stream": 1}, "stream"),
    ("/v1/runs", {}, "input"),
    ("/v1/runs", {"input": [{"role": "assistant", "content": "x"}]}, "input"),
    ("/api/sessions/x/chat", {"message": ["not", "text"]}, "message"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "temperature": 3}, "temperature"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "top_p": "1"}, "top_p"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}, "max_tokens"),
    ("/v1/responses", {"input": "hi", "max_output_tokens": 2.5}, "max_output_tokens"),
    ("/v1/runs", {"input": "hi", "temperature": True}, "temperature"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "loud"},
     "reasoning_effort"),
    ("/v1/responses", {"input": "hi", "reasoning": {"effort": 3}}, "reasoning.effort"),
])
def test_malformed_requests_are_400_naming_the_field(serve, wire_server, path, body, param):
    served = serve()
    if path.startswith("/api/sessions/x"):
        request(served, "POST", "/api/sessions", {"id": "x"})
    status, answer = request(served, "POST", path, body)
    assert status == 400 and answer["error"]["param"] == param and answer["error"]["type"] == "invalid_request_error"
    assert not wire_server.requests  # nothing reached the model
