"""The mem0 memory backend (hermes-agent's `mem0` provider) through `hermes run` as a subprocess, against a loopback
Mem0: on the platform's routes (the key as `Token`) and on a server of one's own (`MEM0_HOST`: `/memories`, `/search`,
the key as `X-API-Key`); the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from plugins_providers.testserver import reply
from tests.asgiserver import Served


class Mem0API(Served):
    """Mem0 as far as hermes uses it: memories kept per user; ``infer`` adds keep the user's words as the fact (the
    real service has a model extract them); search finds the memories sharing a word with the query."""

    def __init__(self, key: str = "m0-key"):
        self.key, self.memories, self.calls, self.next = key, {}, [], 0
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    def keep(self, text: str, user: str = "hermes-user") -> str:
        self.next += 1
        self.memories[f"m{self.next}"] = {"id": f"m{self.next}", "memory": text, "user_id": user}
        return f"m{self.next}"

    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def api(request: Request):
            path = "/" + request.path_params["path"]
            body = await request.json() if request.method in ("POST", "PUT") else {}
            own = not path.startswith("/v")
            self.calls.append((request.method, path, body))
            if (request.headers.get("x-api-key") if own else request.headers.get("authorization")) != (
                    self.key if own else f"Token {self.key}"):
                return JSONResponse({"detail": "Invalid API key"}, 401)
            if path in ("/v3/memories/add/", "/memories"):
                for message in body["messages"]:
                    if message["role"] == "user":
                        self.keep(message["content"], body["user_id"])
                return JSONResponse({"event_id": f"ev-{self.next}", "status": "PENDING"})
            if path in ("/v3/memories/search/", "/search"):
                words = set(re.findall(r"\w+", body["query"].lower()))
                found = [{**m, "score": 0.9} for m in self.memories.values() if m["user_id"] ==
                         body["filters"]["user_id"] and words & set(re.findall(r"\w+", m["memory"].lower()))]
                return JSONResponse({"results": found[:body.get("top_k", 10)]})
            memory = path.strip("/").split("/")[-1]
            if memory not in self.memories:
                return JSONResponse({"detail": "Memory not found"}, 404)
            if request.method == "PUT":
                self.memories[memory]["memory"] = body["text"]
            else:
                del self.memories[memory]
            return JSONResponse({"message": "ok"})

        return Starlette(routes=[Route("/{path:path}", api, methods=["GET", "POST", "PUT", "DELETE"])])


@pytest.fixture
def mem0():
    with Mem0API() as server:
        yield server


def run(hermes, hermes_home, wire_server, mem0, prompt: str, env: dict, **settings):
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "mem0"},
                                                            "mem0": {"api_url": mem0.url}, **settings}))
    return hermes("run", "--json", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m",
                  "gpt-test", prompt, env=env)


def tool_results(request) -> list:
    return [json.loads(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]


def test_turns_are_learned_recalled_and_the_tools_keep_change_and_forget(hermes, hermes_home, wire_server, mem0):
    tea = mem0.keep("Alice drinks green tea")
    mem0.keep("Bob drinks green tea", user="bob")  # another user's: never recalled here
    wire_server.push(reply(tool_calls=[("mem0_add", {"content": "Alice moved to Lyon"})]),
                     reply(tool_calls=[("mem0_search", {"query": "which city, Lyon?"})]),
                     reply(tool_calls=[("mem0_update", {"memory_id": tea, "text": "Alice drinks black tea now"}),
                                       ("mem0_delete", {"memory_id": "m404"})]),
                     reply("Black tea, in Lyon."))
    out = run(hermes, hermes_home, wire_server, mem0, "tea or coffee for me?", {"MEM0_API_KEY": mem0.key})
    assert out.returncode == 0, out.stderr
    first = json.dumps(wire_server.requests[0].body)
    assert "# Mem0 memory" in first and "- Alice drinks green tea" in first and "Bob" not in first  # recalled
    assert tool_results(wire_server.requests[1]) == [{"result": "queued for storage (Mem0 stores it in a moment)"}]
    found = tool_results(wire_server.requests[2])[-1]  # (the history holds the earlier results too)
    assert [r["memory"] for r in found["results"]] == ["Alice moved to Lyon"] and found["count"] == 1
    updated, missing = [m["content"] for m in wire_server.requests[3].body["messages"] if m["role"] == "tool"][-2:]
    assert json.loads(updated) == {"result": "updated", "memory_id": tea}
    assert "mem0: Memory not found (404)" in missing
    assert mem0.memories[tea]["memory"] == "Alice drinks black tea now"
    learned = [body for method, path, body in mem0.calls if path == "/v3/memories/add/" and body["infer"]]
    assert [m["content"] for m in learned[-1]["messages"]] == ["tea or coffee for me?", "Black tea, in Lyon."]
    assert learned[-1]["agent_id"] == "hermes" and learned[-1]["user_id"] == "hermes-user"


def test_a_server_of_ones_own_and_mem0_json(hermes, hermes_home, wire_server, mem0):
    mem0.keep("Ana deploys on Fridays", user="ana")
    (hermes_home / "mem0.json").write_text(json.dumps({"host": mem0.url, "user_id": "ana"}))  # hermes-agent's file
    wire_server.push(reply("Not on a Friday, then."))
    out = run(hermes, hermes_home, wire_server, mem0, "when do I deploy, Fridays?", {"MEM0_API_KEY": mem0.key})
    assert out.returncode == 0, out.stderr
    assert "- Ana deploys on Fridays" in json.dumps(wire_server.requests[0].body)
    assert {path for _, path, _ in mem0.calls} == {"/search", "/memories"}  # the server's own routes


def test_a_refused_key_never_breaks_a_turn_and_no_key_is_said(hermes, hermes_home, wire_server, mem0):
    wire_server.push(reply(tool_calls=[("mem0_search", {"query": "tea"})]), reply("I cannot look it up now."))
    out = run(hermes, hermes_home, wire_server, mem0, "tea?", {"MEM0_API_KEY": "wrong"})
    assert out.returncode == 0 and json.loads(out.stdout)["final_response"] == "I cannot look it up now."
    assert "mem0: Invalid API key (401)" in wire_server.requests[1].body["messages"][-1]["content"]
    assert "memory: mem0.prefetch failed: mem0: Invalid API key (401)" in out.stderr  # a line each, no traceback
    assert "memory: mem0.sync_turn failed: mem0: Invalid API key (401)" in out.stderr and "Traceback" not in out.stderr
    wire_server.push(reply("Fine."))
    unset = run(hermes, hermes_home, wire_server, mem0, "hi", {"MEM0_API_KEY": ""})
    assert unset.returncode == 0 and "memory backend 'mem0' is not available here; using file memory only" in \
        unset.stderr


def test_doctor_says_whether_mem0_answers(hermes, hermes_home, mem0):
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "mem0"},
                                                            "mem0": {"api_url": mem0.url}}))

    def line(key: str, *flags: str) -> dict:
        checks = json.loads(hermes("doctor", "--json", *flags, env={"MEM0_API_KEY": key}).stdout)
        return next(c for c in checks if c["name"] == "memory mem0")

    assert line(mem0.key) == {"name": "memory mem0", "status": "ok", "detail": "ready: it answered a recall"}
    refused = line("wrong")
    assert refused["status"] == "fail" and "mem0: Invalid API key (401)" in refused["detail"]
    assert line("", "--offline") == {"name": "memory mem0", "status": "warn", "detail": (
        "not available here: it needs MEM0_API_KEY (in the data folder's .env), or MEM0_HOST for a Mem0 server of "
        "your own; memory is MEMORY.md and USER.md")}
