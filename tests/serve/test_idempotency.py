"""Idempotency-Key on hermes serve (hermes-agent's API server takes it): a client that gives up waiting and sends the
request again gets the first request's answer, and the agent (its tools too) ran once; a key reused for another body
is refused."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

from plugins_providers.testserver import reply
from tests.serve.test_chat_completions import post


def test_a_retried_request_gets_the_first_answer_and_its_tools_ran_once(serve, wire_server, tmp_path):
    log = tmp_path / "ran.log"
    served = serve(config={"approvals": {"mode": "off"}, "sandbox": {"mode": "off"}})
    wire_server.push(reply(tool_calls=[("terminal", {"command": f"echo ran >> {log}"})], delay=3),
                     reply("Done once."), reply("Responded once."))
    body = {"messages": [{"role": "user", "content": "log it"}]}
    headers = {"Idempotency-Key": "order-17", "Content-Type": "application/json"}
    request = urllib.request.Request(served.url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                     method="POST", headers=headers)
    try:  # the client gives up before the model's first answer: the turn runs on for its retry
        urllib.request.urlopen(request, timeout=1)
        raise AssertionError("the first request should have timed out")
    except (socket.timeout, TimeoutError, urllib.error.URLError):
        pass
    status, got, first = post(served, "/v1/chat/completions", body, headers)
    assert status == 200 and first["choices"][0]["message"]["content"] == "Done once.", first
    assert log.read_text() == "ran\n" and len(wire_server.requests) == 2  # one turn: a tool call, then the answer
    status, again, replayed = post(served, "/v1/chat/completions", body, headers)
    again, got = ({k.lower(): v for k, v in h.items()} for h in (again, got))
    assert status == 200 and replayed == first and again.get("idempotent-replayed") == "true"
    assert again["x-hermes-session-id"] == got["x-hermes-session-id"] and len(wire_server.requests) == 2

    status, _, refused = post(served, "/v1/chat/completions", {"messages": [{"role": "user", "content": "other"}]},
                              headers)
    assert status == 422 and refused["error"]["code"] == "idempotency_key_reused"

    asked = {"input": "answer", "store": True}
    status, _, response = post(served, "/v1/responses", asked, {"Idempotency-Key": "resp-1"})
    assert status == 200 and response["output"][-1]["content"][0]["text"] == "Responded once."
    status, _, same = post(served, "/v1/responses", asked, {"Idempotency-Key": "resp-1"})
    assert status == 200 and same["id"] == response["id"] and len(wire_server.requests) == 3
    assert log.read_text() == "ran\n"
