"""Two ``hermes serve`` processes with data folders of their own (two hosts, as far as they can tell) share
their sessions through the PostgreSQL store: a conversation started on one goes on on the other."""

from __future__ import annotations

import json
import urllib.request

from plugins_providers.testserver import reply


def _get(served, path):
    req = urllib.request.Request(served.url + path, headers={"Authorization": f"Bearer {served.key}"})
    with urllib.request.urlopen(req, timeout=30) as response:
        return json.loads(response.read())


def test_a_session_started_on_one_server_goes_on_on_another(serve, wire_server, hermes_home, tmp_path,
                                                            postgres_url):
    config = {"sessions": {"store": "postgres", "database_url": postgres_url}}
    key = "k" * 32
    first = serve(key=key, config=config)
    other_home = tmp_path / "other-host"
    other_home.mkdir()
    (other_home / "config.yaml").write_text((hermes_home / "config.yaml").read_text())
    second = serve(key=key, config=config, env={"HERMES_HOME": str(other_home)})

    wire_server.push(reply("Paris."), reply("Still Paris."))
    started = first.client().chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "user", "content": "Capital of France?"}])
    session = started.headers["x-hermes-session-id"]
    went_on = second.client().chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "user", "content": "And now?"}],
        extra_headers={"X-Hermes-Session-Id": session})
    assert went_on.headers["x-hermes-session-id"] == session
    assert [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] != "system"] == \
        ["Capital of France?", "Paris.", "And now?"]  # the first server's turn, read by the second

    for served in (first, second):
        listed = _get(served, "/api/sessions?limit=10")["data"]
        assert [s["id"] for s in listed] == [session]
        messages = _get(served, f"/api/sessions/{session}/messages")["data"]
        assert [m["content"] for m in messages] == ["Capital of France?", "Paris.", "And now?", "Still Paris."]
    assert not (hermes_home / "state.db").exists() and not (other_home / "state.db").exists()
