"""A model name is enough (issue 23, item 1): with no provider given, the
model's family names it, through ``hermes run`` and the real SDKs against the
wire-protocol server, which the SDKs' own OPENAI_BASE_URL / ANTHROPIC_BASE_URL
point at, as they honour them. A missing key names the variable to set."""

from __future__ import annotations

import json

import pytest

from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)
from tests.conftest import no_titles

NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "", "GEMINI_API_KEY": "", "XAI_API_KEY": "",
           "OPENAI_BASE_URL": "", "ANTHROPIC_BASE_URL": ""}


@pytest.mark.parametrize("command", ["run", "chat"])
@pytest.mark.parametrize("model, path", [("gpt-4.1", "/v1/responses"), ("o4-mini", "/v1/responses"),
                                         ("claude-sonnet-4-5", "/v1/messages")])
def test_a_model_name_alone_reaches_its_family_s_provider(hermes, wire_server, cli_env, model, path,  # noqa: F811
                                                          command, hermes_home):
    env = {**cli_env, **NO_KEYS}
    no_titles(hermes_home)
    if model.startswith("claude"):
        env.update(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=wire_server.url)
    else:
        env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=wire_server.openai_url)
    wire_server.push(reply(f"hello from {model}"))
    if command == "run":
        out = hermes("run", "--json", "-m", model, "hi", env=env)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["final_response"] == f"hello from {model}"
    else:
        out = hermes("chat", "-m", model, env=env, input="hi\n/exit\n")
        assert out.returncode == 0 and f"hello from {model}" in out.stdout, out.stderr
    assert [r.path for r in wire_server.requests] == [path]
    assert wire_server.requests[0].body["model"] == model


@pytest.mark.parametrize("model, variable", [("gpt-4.1", "OPENAI_API_KEY"), ("claude-opus-4", "ANTHROPIC_API_KEY"),
                                             ("gemini-2.0-flash", "GEMINI_API_KEY"), ("grok-3", "XAI_API_KEY")])
def test_without_its_key_the_one_line_names_the_variable(hermes, cli_env, model, variable):  # noqa: F811
    out = hermes("run", "-m", model, "hi", env={**cli_env, **NO_KEYS})
    assert out.returncode == 1 and out.stderr.strip().startswith(
        f"hermes: error: no API key: set the environment variable {variable}"), out.stderr
