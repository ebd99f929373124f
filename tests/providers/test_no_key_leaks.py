"""API keys never reach hook payloads, results, stored messages or logs."""

import logging

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
    def pre_api_request(self, request, request_messages, base_url, provider):
        self._keep(request=request, request_messages=request_messages, base_url=base_url, provider=provider)

    @hookimpl
    def post_api_request(self, response, usage, assistant_message, provider):
        self._keep(response=response, usage=usage, assistant_message=assistant_message, provider=provider)

    @hookimpl
    def api_request_error(self, error, reason, provider):
        self._keep(error=error, reason=reason, provider=provider)

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
    wire_server.push(error(401, message=f"Incorrect API key provided: {KEY}"), error(500), reply("fine"))
    result = agent.run_conversation("hi")
    assert result["final_response"] == "fine"
    assert wire_server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was used...
    assert len(seen.payloads) > 5
    assert "HTTP Request: POST" in caplog.text or "Request options" in caplog.text  # SDK debug logs were captured
    for text in seen.payloads + [repr(result), caplog.text]:  # ...and never shown
        assert "VERYSECRET" not in text
