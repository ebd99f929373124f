"""Secrets never reach tools, models or the store: ``hermes run`` against the
wire server, a terminal tool that tries to read keys, a real SQLite store."""

from __future__ import annotations

import json

from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

KEY = "sk-the-provider-key-0123456789"  # named by --api-key-env
OPENAI = "sk-openai-well-known-0123456789"
TOKEN = "tok-some-service-0123456789"
PASSED = "tok-passed-through-0123456789"


def test_a_tool_cannot_read_provider_keys(hermes, wire_server, cli_env, hermes_home, tmp_path):  # noqa: F811
    (hermes_home / "config.yaml").write_text(json.dumps({"tools": {"env_passthrough": ["PASSME_TOKEN"]}}))
    keyfile = tmp_path / "keyfile"
    keyfile.write_text(f"the key is {KEY}\n")
    command = ("echo A=$MY_KEY B=$OPENAI_API_KEY C=$SOME_TOKEN; test -n \"$PASSME_TOKEN\" && echo passed-through; "
               f"echo D=$PASSME_TOKEN; cat {keyfile}")
    wire_server.push(reply("", tool_calls=[("terminal", {"command": command})]))
    wire_server.push(reply("done"))
    env = dict(cli_env, MY_KEY=KEY, OPENAI_API_KEY=OPENAI, SOME_TOKEN=TOKEN, PASSME_TOKEN=PASSED)
    out = hermes("run", "--json", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "t",
                 "--api-key-env", "MY_KEY", "-t", "terminal", "go", env=env, cwd=tmp_path)  # the keyfile's folder
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    tool_output = json.loads(next(m["content"] for m in result["messages"] if m["role"] == "tool"))["output"]
    assert "A= B= C=" in tool_output  # not in the tool's environment
    assert "passed-through" in tool_output  # named in tools.env_passthrough: the tool has it ...
    assert "D=[hermes: the value of $PASSME_TOKEN was masked]" in tool_output  # ... but its value is still masked
    assert "the key is [hermes: the value of $MY_KEY was masked]" in tool_output
    # neither the model, nor the store, nor the printed result ever holds a key
    sent = json.dumps([r.body for r in wire_server.requests])
    stored = (hermes_home / "state.db").read_bytes() + b"".join(p.read_bytes() for p in hermes_home.glob("state.db-*"))
    for secret in (KEY, OPENAI, TOKEN, PASSED):
        assert secret not in sent and secret not in out.stdout
        assert secret.encode() not in stored
    assert wire_server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the provider itself still has it


AUX = "aux-key-of-the-summariser-0123456789"  # a name no rule calls secret: only the config says it is a key
ANSWER = "fb-key-the-model-repeats-0123456789"


def test_every_key_the_config_names_is_hidden_and_a_key_in_the_answer_is_masked(hermes, wire_server,  # noqa: F811
                                                                                  cli_env, hermes_home):
    (hermes_home / "config.yaml").write_text(json.dumps({
        "auxiliary": {"compression": {"model": "small", "api_key_env": "AUXK"}},
        "fallback_providers": [{"model": "other", "base_url": wire_server.openai_url, "api_key_env": "FALLBACK"}],
    }))
    wire_server.push(reply("", tool_calls=[("terminal", {"command": "echo A=$AUXK B=$FALLBACK; env | grep -c KEY"})]))
    wire_server.push(reply(f"the fallback key is {ANSWER}, the other {AUX}"))
    env = dict(cli_env, MY_KEY=KEY, AUXK=AUX, FALLBACK=ANSWER)
    out = hermes("run", "--json", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "t",
                 "--api-key-env", "MY_KEY", "-t", "terminal", "go", env=env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    tool_output = json.loads(next(m["content"] for m in result["messages"] if m["role"] == "tool"))["output"]
    assert "A= B=" in tool_output  # auxiliary.*.api_key_env and a fallback's: not in the tool's environment
    assert result["final_response"] == ("the fallback key is [hermes: the value of $FALLBACK was masked], "
                                        "the other [hermes: the value of $AUXK was masked]")
    stored = (hermes_home / "state.db").read_bytes() + b"".join(p.read_bytes() for p in hermes_home.glob("state.db-*"))
    for secret in (AUX, ANSWER):
        assert secret not in out.stdout and secret.encode() not in stored


WRITTEN = ("aux-written-in-config-0123456789", "fallback-written-in-config-0123456789",
           "delegation-written-in-config-0123456789")


def test_keys_written_in_config_are_kept_from_tools_and_masked(hermes, wire_server, cli_env, hermes_home):  # noqa: F811
    """hermes-agent's api_key written in an auxiliary block, a fallback entry and delegation: used through variables
    of their own, which reached the tools' environment (they were set after the agent read which hold keys)."""
    aux, fallback, delegation = WRITTEN
    (hermes_home / "config.yaml").write_text(json.dumps({
        "auxiliary": {"compression": {"model": "small", "api_key": aux}}, "delegation": {"api_key": delegation},
        "fallback_providers": [{"model": "other", "base_url": wire_server.openai_url, "api_key": fallback}]}))
    wire_server.push(reply("", tool_calls=[("terminal", {"command": "env"})]))
    wire_server.push(reply("done"))
    out = hermes("run", "--json", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "t",
                 "--api-key-env", "MY_KEY", "-t", "terminal", "go", env=dict(cli_env, MY_KEY=KEY))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    tool_output = json.loads(next(m["content"] for m in result["messages"] if m["role"] == "tool"))["output"]
    for variable in ("HERMES_AUXILIARY_COMPRESSION_API_KEY", "HERMES_DELEGATION_API_KEY",
                     "HERMES_FALLBACK_PROVIDERS_0__API_KEY"):  # none of their variables
        assert variable not in tool_output
    for secret in WRITTEN:
        assert secret not in tool_output and secret not in json.dumps([r.body for r in wire_server.requests])


def test_without_the_sandbox_no_key_is_readable_in_hermes_exec_time_environment(hermes, wire_server, cli_env,  # noqa: F811
                                                                                 hermes_home, tmp_path):
    import base64
    import secrets

    # a key of this test's own: the command reads every process's environment, other tests' hermes runs too
    key = f"sk-the-provider-key-{secrets.token_hex(8)}"
    (hermes_home / "config.yaml").write_text(json.dumps({"sandbox": {"mode": "off"}}))
    # what /proc shows of every process this user can read, the key's line reversed, hex and base64
    command = ("for f in /proc/$PPID/environ /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f 2>/dev/null; done "
               "| grep -a '^MY_KEY=' | sort -u | tee /dev/stderr | while read line; do echo \"$line\" | rev; "
               "echo \"$line\" | base64; echo \"$line\" | od -An -tx1 | tr -d ' \\n'; echo; done; echo checked")
    wire_server.push(reply("", tool_calls=[("terminal", {"command": command})]))
    wire_server.push(reply("done"))
    env = dict(cli_env, MY_KEY=key)
    out = hermes("run", "--json", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "t",
                 "--api-key-env", "MY_KEY", "-t", "terminal", "go", env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    tool_output = json.loads(next(m["content"] for m in result["messages"] if m["role"] == "tool"))["output"]
    assert "checked" in tool_output and "MY_KEY=*****" in tool_output, tool_output  # hermes' block was found
    line = f"MY_KEY={key}"
    for encoded in (key, key[::-1], base64.b64encode(f"{line}\n".encode()).decode(), line.encode().hex()):
        assert encoded not in tool_output, tool_output
    assert wire_server.requests[0].headers["authorization"] == f"Bearer {key}"  # the provider still has it


def test_a_key_the_model_types_into_a_tool_call_is_not_stored_printed_or_shown(
        hermes, wire_server, cli_env, hermes_home, tmp_path):  # noqa: F811
    """The kernel masks answers and results; the call's arguments went to state.db as the model wrote them (the chat's
    tool line: test_chat_terminal). The model still reads its call as it made it in this turn."""
    wire_server.push(reply("", tool_calls=[("read_file", {"path": f"/nowhere/{KEY}.env"})]), reply("done"))
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "t",
                 "--api-key-env", "MY_KEY", "-t", "file", "go", env=dict(cli_env, MY_KEY=KEY), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    stored = (hermes_home / "state.db").read_bytes() + b"".join(p.read_bytes() for p in hermes_home.glob("state.db-*"))
    assert KEY.encode() not in stored and KEY not in out.stdout + out.stderr
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    [call] = [m for m in json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"]
              if m.get("tool_calls")]
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {
        "path": "/nowhere/[hermes: the value of $MY_KEY was masked].env"}  # still JSON
    wire_server.push(reply("", tool_calls=[("read_file", {"path": f"/nowhere/{KEY}.env"})]), reply("done"))
    printed = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "t",
                     "--api-key-env", "MY_KEY", "-t", "file", "--json", "go", env=dict(cli_env, MY_KEY=KEY),
                     cwd=tmp_path)
    assert printed.returncode == 0 and KEY not in printed.stdout, printed.stderr
    [call] = [m for m in json.loads(printed.stdout)["messages"] if m.get("tool_calls")]
    assert "[hermes: the value of $MY_KEY was masked]" in call["tool_calls"][0]["function"]["arguments"]


def test_a_key_the_model_streams_is_masked_on_the_terminal(hermes, wire_server, cli_env, hermes_home):  # noqa: F811
    pieces = ["Your key is ", KEY[:5], KEY[5:17], KEY[17:], " as you asked."]  # split across streamed deltas
    wire_server.push(reply(pieces))
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "t",
                 "--api-key-env", "MY_KEY", "tell me", env=dict(cli_env, MY_KEY=KEY))
    assert out.returncode == 0, out.stderr
    assert KEY not in out.stdout and KEY[:17] not in out.stdout, out.stdout
    assert "Your key is [hermes: the value of $MY_KEY was masked] as you asked." in out.stdout, out.stdout
    assert out.stdout.count("as you asked.") == 1  # streamed once, not printed again at the end


def test_a_variable_a_plugin_declares_as_a_key_is_hidden_from_tools_and_masked(monkeypatch, tmp_path):
    from hermes.host.config import Config
    from hermes.host.plugins import PluginHost
    from kernel import hookimpl
    from kernel.agent import Agent
    from kernel.types import ToolContext
    from plugins import core_tools
    from plugins_providers import scripted

    secret = "svc-credential-0123456789"  # a name no rule calls secret: only the declaration says so
    monkeypatch.setenv("SVC_CREDENTIAL", secret)
    monkeypatch.chdir(tmp_path)

    class Service:
        __name__ = "service"

        @hookimpl
        def register_config(self, declare):
            declare("service.api_key_env", str, "SVC_CREDENTIAL", "the variable holding the service's key")

    host = PluginHost.from_objects([Service(), core_tools, scripted], Config({"sandbox": {"mode": "off"}}))
    agent = Agent(host)
    assert "SVC_CREDENTIAL" in agent.secrets.names
    ctx = ToolContext(agent=agent, tool_name="terminal", tool_call_id="c", task_id="t", session_id="s", turn_id="u")
    result = agent.tools["terminal"].handler({"command": "echo A=$SVC_CREDENTIAL; echo " + secret}, ctx)
    assert "A=\n" in result["output"]  # the tool's environment does not hold it
    assert agent.secrets.mask(result["output"]).count("[hermes: the value of $SVC_CREDENTIAL was masked]") == 1
