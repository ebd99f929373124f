"""API keys never reach hook payloads, results, stored messages or logs."""

import logging
import os

import pytest

from kernel import hookimpl
from plugins import fallback
from plugins_providers import anthropic_messages, openai_chat, openai_responses, resolve
from plugins_providers.testserver import error, reply
from tests.providers.helpers import MODES, base_url

KEY = "sk-live-VERYSECRET-0123456789"


class Everything:
    """Records the keyword arguments of every payload-carrying hook."""

    def __init__(self):
        self.payloads = []

    def _keep(self, **kw):
        self.payloads.append(repr(kw))

    @hookimpl
    def pre_api_request(self, call):
        self._keep(call=call, request=call.request, extra=call.request.extra)

    @hookimpl
    def post_api_request(self, call, response):
        self._keep(call=call, response=response, message=response.to_message())

    @hookimpl
    def api_request_error(self, call, error):
        self._keep(call=call, error=error, message=error.message)

    @hookimpl
    def append_messages(self, session_id, messages):
        self._keep(messages=messages)

    @hookimpl
    def on_status(self, status, detail):
        self._keep(status=status, detail=detail)


@pytest.mark.parametrize("mode", MODES)
def test_key_never_in_payloads_results_or_logs(make_agent, wire_server, mode, monkeypatch, caplog):
    monkeypatch.setenv("MY_PROVIDER_KEY", KEY)
    seen = Everything()
    caplog.set_level(logging.DEBUG)
    agent = make_agent(openai_chat, openai_responses, anthropic_messages, resolve, fallback, callbacks=[seen],
                       config={"agent": {"retry_base_delay": 0.01}}, api_mode=mode, base_url=base_url(wire_server, mode),
                       api_key_env="MY_PROVIDER_KEY")
    def rotate(request):  # the key is rotated while the call fails; refreshing reads the new one
        os.environ["MY_PROVIDER_KEY"] = KEY + "-rotated"
        return error(401, message=f"Incorrect API key provided: {KEY}")

    wire_server.push(rotate, error(500), reply("fine"))
    result = agent.run_conversation("hi")
    assert result["final_response"] == "fine"
    assert wire_server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was used...
    assert len(seen.payloads) > 5
    assert "HTTP Request: POST" in caplog.text or "Request options" in caplog.text  # SDK debug logs were captured
    for text in seen.payloads + [repr(result), caplog.text]:  # ...and never shown
        assert "VERYSECRET" not in text


def _stored_bytes(home):
    """Every byte the session store wrote (database, WAL, journal)."""
    from plugins.sessions import close_stores

    close_stores()  # checkpoint and release the files
    files = [p for p in home.rglob("*") if p.is_file() and p.name.startswith("state.db")]
    assert files, "the session store wrote nothing"
    return b"".join(p.read_bytes() for p in files)


@pytest.mark.parametrize("mode", MODES)
def test_key_never_in_the_session_store(make_agent, make_wire_server, hermes_home, mode, monkeypatch, caplog):
    """A turn that succeeds after an auth error and one where every provider
    fails (each error body echoing the key) leave no key in the SQLite store,
    the hook payloads, the result or the logs."""
    import plugins.sessions as sessions

    monkeypatch.setenv("MY_PROVIDER_KEY", KEY)
    monkeypatch.setenv("FALLBACK_PROVIDER_KEY", KEY.replace("VERYSECRET", "FBSECRET"))
    caplog.set_level(logging.DEBUG)
    primary, fb = make_wire_server(), make_wire_server()
    seen = Everything()
    config = {"agent": {"retry_base_delay": 0.01, "api_max_retries": 1},
              "fallback_providers": [{"model": "fb", "api_mode": "anthropic_messages", "base_url": fb.url,
                                      "api_key_env": "FALLBACK_PROVIDER_KEY"}]}
    agent = make_agent(openai_chat, openai_responses, anthropic_messages, resolve, fallback, sessions, callbacks=[seen],
                       config=config, api_mode=mode, base_url=base_url(primary, mode), api_key_env="MY_PROVIDER_KEY")
    def rotate(request):  # a new key is read on refresh (it holds the secret marker too)
        os.environ["MY_PROVIDER_KEY"] = KEY + "-rotated"
        return error(401, message=f"Incorrect API key provided: {KEY}")

    primary.push(rotate, reply("fine"))
    assert agent.run_conversation("first")["final_response"] == "fine"
    echo = f"bad key {KEY} / {KEY.replace('VERYSECRET', 'FBSECRET')}"
    primary.push(error(401, message=echo), error(401, message=echo))
    fb.push(error(500, message=echo), error(500, message=echo))
    result = agent.run_conversation("second")
    assert result["exit_reason"] == "error" and "every provider failed" in result["error"]
    assert primary.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert fb.requests[0].headers["authorization"].endswith("FBSECRET-0123456789")
    stored = _stored_bytes(hermes_home)
    assert b"first" in stored and b"fine" in stored  # the store really holds the session
    for secret in ("VERYSECRET", "FBSECRET"):
        assert secret.encode() not in stored
        for text in seen.payloads + [repr(result), caplog.text]:
            assert secret not in text
