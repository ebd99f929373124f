"""The MCP plugin through the real Agent loop (scripted provider) and real MCP servers (tests/mcp/server.py)."""

import json
import os
import threading
import time

from kernel import hookimpl
from tests.mcp.conftest import SERVER, entry


def calls(*pairs):
    return {"tool_calls": [list(p) for p in pairs]}


def results(result):
    return [m["content"] for m in result["messages"] if m["role"] == "tool"]


def offered(request):
    return {t["name"]: t for t in request.tools}


def test_a_servers_tools_are_ordinary_tools_with_its_schema_and_results_the_model_reads(mcp_agent, hermes_home):
    agent = mcp_agent({"t": entry()}, script=[
        calls(("mcp__t__add", {"a": 2, "b": 40}), ("mcp__t__picture", {}), ("mcp__t__echo", {"text": "hi"})),
        calls(("mcp__t__read_resource", {"uri": "note://hello"}), ("mcp__t__get_prompt", {"name": "greet", "arguments": {"name": "Ann"}})),
        "done"])
    result = agent.run_conversation("go")
    first = offered(agent.scripted.requests[0])
    assert {"mcp__t__add", "mcp__t__echo", "mcp__t__list_resources", "mcp__t__read_resource", "mcp__t__list_prompts",
            "mcp__t__get_prompt"} <= set(first)
    assert first["mcp__t__add"]["parameters"]["required"] == ["a", "b"]
    assert first["mcp__t__add"]["description"] == "Add two numbers."
    add, picture, echo, resource, prompt = map(json.loads, results(result))
    assert add == {"result": "42", "structuredContent": {"result": 42}}
    assert picture["result"].startswith("a pixel\n[image: ") and "(image/png, 70 bytes)]" in picture["result"]
    saved = picture["result"].split("[image: ")[1].split(" (")[0]
    assert open(saved, "rb").read().startswith(b"\x89PNG") and saved.startswith(str(hermes_home))
    assert echo["result"] == "echo: hi"
    assert resource["contents"][0]["text"] == "hello from a resource"
    assert prompt["messages"] == [{"role": "user", "content": "Please greet Ann warmly."}]
    assert agent.tools["mcp__t__echo"].parallel_safe and not agent.tools["mcp__t__add"].parallel_safe  # read-only hint
    assert agent.tools["mcp__t__add"].toolset == "mcp-t"


def test_the_tools_policy_include_exclude_resources_prompts_and_parallel(mcp_agent):
    agent = mcp_agent({"inc": entry(tools={"include": ["echo", "add"], "exclude": ["echo"], "prompts": False}),
                       "exc": entry(tools={"exclude": "die", "resources": False}, supports_parallel_tool_calls=True)},
                      script=[calls(("mcp__inc__echo", {"text": "x"})), "ok"])
    agent.run_conversation("go")
    names = set(offered(agent.scripted.requests[0]))
    assert {"mcp__inc__echo", "mcp__inc__add", "mcp__inc__list_resources"} <= names  # include wins over exclude
    assert "mcp__inc__env_of" not in names and "mcp__inc__get_prompt" not in names
    assert "mcp__exc__die" not in names and "mcp__exc__env_of" in names and "mcp__exc__read_resource" not in names
    assert agent.tools["mcp__exc__add"].parallel_safe  # the server allows parallel calls


def test_toolsets_choose_servers_and_hooks_see_mcp_calls_as_any_other(mcp_agent):
    seen = []

    class Guard:
        @hookimpl
        def pre_tool_call(self, call):
            seen.append(("pre", call.name, call.args))

        @hookimpl
        def post_tool_call(self, call, outcome):
            seen.append(("post", call.name, outcome.status))

    agent = mcp_agent({"a": entry(), "b": entry()}, plugins=[Guard()], toolsets=["mcp-a"],
                      script=[calls(("mcp__a__echo", {"text": "x"}), ("mcp__b__echo", {"text": "y"})), "ok"])
    result = agent.run_conversation("go")
    names = set(offered(agent.scripted.requests[0]))
    assert "mcp__a__echo" in names and not any(n.startswith("mcp__b__") for n in names)
    assert json.loads(results(result)[0])["result"] == "echo: x"
    assert "unknown tool 'mcp__b__echo'" in results(result)[1]
    assert seen == [("pre", "mcp__a__echo", {"text": "x"}), ("post", "mcp__a__echo", "ok"),
                    ("post", "mcp__b__echo", "error")]


def test_a_server_no_toolset_of_the_agent_names_is_neither_started_nor_waited_for(mcp_agent):
    """`-t mcp-b` (or no toolsets at all): server a, which never answers its handshake, is not started for this agent, so its
    first model call does not wait for it; an agent whose toolsets are left unset, or name `all`, starts it."""
    import plugins.mcp

    servers = {"a": entry("hang-start", connect_timeout=20), "b": entry()}
    started = time.monotonic()
    agent = mcp_agent(servers, toolsets=["mcp-b"], script=["ok"])
    assert agent.run_conversation("go").final_response == "ok" and time.monotonic() - started < 15
    assert set(plugins.mcp._manager.connections) == {"b"}
    assert {name for name in agent.tools if name.startswith("mcp__")} == {name for name in agent.tools
                                                                          if name.startswith("mcp__b__")} != set()
    assert not mcp_agent(servers, toolsets=[]).tools and set(plugins.mcp._manager.connections) == {"b"}
    every = mcp_agent({"b": entry()}, toolsets=["all"], script=["ok"])
    every.run_conversation("go")
    assert any(name.startswith("mcp__b__") for name in every.tools)  # `all` is every tool, a server's too
    mcp_agent(servers)  # toolsets unset: every server
    assert set(plugins.mcp._manager.connections) == {"a", "b"}


def test_a_delegated_child_calls_its_parents_servers_and_no_other(mcp_agent):
    """The parent has server a's tools (not b's): its child is offered a's, calls one, and never sees b's."""
    from plugins import agent_tools

    def is_child(request):
        return "You are a subagent" in next(m["content"] for m in request.messages if m["role"] == "user")

    def answer(request):
        child = is_child(request)
        done = any(m["role"] == "tool" for m in request.messages)
        if child:
            return "child: " + json.loads(request.messages[-1]["content"])["result"] if done else \
                calls(("mcp__a__echo", {"text": "from the child"}))
        return "parent done" if done else calls(("delegate_task", {"goal": "echo something"}))

    agent = mcp_agent({"a": entry(), "b": entry()}, plugins=[agent_tools], toolsets=["mcp-a", "delegation"],
                      script=[answer] * 4)
    result = agent.run_conversation("go")
    child_requests = [r for r in agent.scripted.requests if is_child(r)]
    offered_to_child = set(offered(child_requests[0]))
    assert "mcp__a__echo" in offered_to_child and not any(n.startswith("mcp__b__") for n in offered_to_child)
    assert json.loads(results(result)[0])["results"][0]["summary"] == "child: echo: from the child"


def test_a_child_given_toolsets_keeps_the_parents_servers_unless_config_says_not(mcp_agent):
    """hermes-agent's delegation.inherit_mcp_toolsets (on by default): `toolsets: ["todo"]` adds to what a child
    gets, it does not take away the MCP servers the parent has."""
    from plugins import agent_tools

    for inherit, kept in ((None, True), (False, False)):
        def answer(request):
            first = next(m["content"] for m in request.messages if m["role"] == "user")
            if "You are a subagent" in first:
                return "child done"
            done = any(m["role"] == "tool" for m in request.messages)
            return "parent done" if done else calls(("delegate_task", {"goal": "g", "toolsets": ["todo"]}))

        config = {} if inherit is None else {"delegation": {"inherit_mcp_toolsets": inherit}}
        agent = mcp_agent({"a": entry()}, plugins=[agent_tools], config=config, script=[answer] * 4)
        agent.run_conversation("go")
        child = next(r for r in agent.scripted.requests if "You are a subagent" in r.messages[-1]["content"])
        assert ("mcp__a__echo" in offered(child)) is kept and "todo" in offered(child)


def test_a_server_that_dies_mid_call_is_an_error_naming_it_and_the_next_call_reconnects(mcp_agent, caplog):
    agent = mcp_agent({"t": entry()}, script=[calls(("mcp__t__die", {})), calls(("mcp__t__echo", {"text": "back"})), "ok"])
    result = agent.run_conversation("go")
    died, back = results(result)
    assert "MCP server 't' went away during the call" in json.loads(died)["error"]
    assert json.loads(back)["result"] == "echo: back"
    assert sum("MCP server 't'" in r.getMessage() for r in caplog.records) == 1  # said once


def test_a_server_that_dies_while_idle_is_reported_at_once_and_the_next_call_reconnects(mcp_agent, caplog):
    import signal

    agent = mcp_agent({"t": entry()}, script=[calls(("mcp__t__pid", {})), "ok", calls(("mcp__t__echo", {"text": "b"})),
                                              "done"])
    pid = int(json.loads(results(agent.run_conversation("go"))[0])["result"])
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any("'t'" in r.getMessage() for r in caplog.records):
        time.sleep(0.05)
    said = [r.getMessage() for r in caplog.records if r.name == "hermes.mcp"]
    assert said == ["MCP server 't' (config.yaml): the server closed the connection (see logs/mcp-stderr.log)"]
    assert json.loads(results(agent.run_conversation("again"))[-1])["result"] == "echo: b"


def test_a_call_past_its_timeout_is_cancelled_and_said_so(mcp_agent):
    agent = mcp_agent({"t": entry(timeout=1)}, script=[calls(("mcp__t__slow", {"seconds": 20})),
                                                        calls(("mcp__t__echo", {"text": "still here"})), "ok"])
    started = time.monotonic()
    slow, echo = results(agent.run_conversation("go"))
    assert time.monotonic() - started < 8
    assert json.loads(slow)["error"] == "MCP server 't': no answer within 1s (its timeout); the call was cancelled"
    assert json.loads(echo)["result"] == "echo: still here"


def test_an_interrupt_cancels_the_call_in_flight(mcp_agent):
    agent = mcp_agent({"t": entry()}, script=[calls(("mcp__t__slow", {"seconds": 30})), "never"])
    agent.refresh_tools()  # connected before the turn starts
    threading.Timer(1.5, agent.interrupt).start()
    started = time.monotonic()
    result = agent.run_conversation("go")
    assert time.monotonic() - started < 6
    assert result["exit_reason"] == "interrupted_by_user" or result["interrupted"]


def test_servers_that_fail_to_start_are_reported_once_and_the_others_serve(mcp_agent, caplog, hermes_home, tmp_path):
    import sys

    launcher = tmp_path / "run.sh"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {SERVER} normal\n")
    launcher.chmod(0o755)
    agent = mcp_agent({"ok": entry(), "crash": entry("crash-start"), "hang": entry("hang-start", connect_timeout=2),
                       "nocmd": {"args": ["x"]}, "nosuch": {"command": "no-such-mcp-server-here"},
                       "relative": {"command": "./run.sh", "cwd": str(tmp_path)},
                       "notexec": {"command": str(SERVER.with_name("conftest.py"))}},
                      script=[calls(("mcp__ok__echo", {"text": "fine"})), "ok"])
    started = time.monotonic()
    result = agent.run_conversation("go")
    assert time.monotonic() - started < 8  # all at once: about the slowest (2 s), not the sum
    assert json.loads(results(result)[0])["result"] == "echo: fine"
    said = [r.getMessage() for r in caplog.records if r.name == "hermes.mcp"]
    assert len([m for m in said if "'crash'" in m]) == 1 and len([m for m in said if "'hang'" in m]) == 1
    assert any("'hang'" in m and "connect_timeout (2s)" in m for m in said)
    assert any("'nocmd'" in m and "needs a command" in m for m in said)
    assert any("'nosuch'" in m and "its command 'no-such-mcp-server-here' was not found on PATH" in m for m in said)
    assert any("'notexec'" in m and "is not an executable file" in m for m in said)
    assert not any("'relative'" in m for m in said)  # ./run.sh in its cwd is found, and serves
    log = (hermes_home / "logs" / "mcp-stderr.log").read_text()
    assert "crash-start: giving up before the handshake" in log  # its stderr went to the log


def test_a_changed_tool_list_reaches_the_next_model_call(mcp_agent):
    agent = mcp_agent({"t": entry("changing")}, script=[calls(("mcp__t__grow", {})), calls(("mcp__t__grown", {})), "ok"])
    result = agent.run_conversation("go")
    assert "mcp__t__grown" not in offered(agent.scripted.requests[0])
    assert "mcp__t__grown" in offered(agent.scripted.requests[1])
    assert json.loads(results(result)[1])["result"] == "grown ran"


def test_a_stdio_server_gets_no_secrets_but_what_its_entry_grants(mcp_agent, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value-1234")
    monkeypatch.setenv("GRANTED_TOKEN", "granted-value-5678")
    agent = mcp_agent({"t": entry(env={"MY_TOKEN": "${GRANTED_TOKEN}", "PLAIN": "x"})}, script=[
        calls(("mcp__t__env_of", {"name": "OPENAI_API_KEY"}), ("mcp__t__env_of", {"name": "MY_TOKEN"}),
              ("mcp__t__env_of", {"name": "GRANTED_TOKEN"}), ("mcp__t__env_of", {"name": "PATH"})), "ok"])
    key, granted, unnamed, path = [json.loads(r)["result"] for r in results(agent.run_conversation("go"))]
    assert key == "[]" and unnamed == "[]" and path == f"[{os.environ['PATH']}]"
    assert granted == "[[hermes: the value of $GRANTED_TOKEN was masked]]"  # it arrived; the model never sees it


def test_sampling_is_off_unless_enabled_and_then_answered_by_the_agents_model(mcp_agent):
    off = mcp_agent({"t": entry("sampling")}, script=[calls(("mcp__t__ask_model", {"question": "2+2?"})), "ok"])
    assert "Sampling not supported" in results(off.run_conversation("go"))[0]
    on = mcp_agent({"t": entry("sampling", sampling={"enabled": True, "max_tokens_cap": 20})}, max_turns=5,
                   script=[calls(("mcp__t__ask_model", {"question": "2+2?"})), "four", "done"])
    result = on.run_conversation("go")
    assert json.loads(results(result)[0])["result"] == "the model said: four (test-model)"
    assert on.scripted.requests[1].max_tokens == 20 and not on.scripted.requests[1].tools
    assert on.budget.used == 3  # the sampling request counted against the budget
    limited = mcp_agent({"t": entry("sampling", sampling={"enabled": True, "allowed_models": ["other"]})},
                        script=[calls(("mcp__t__ask_model", {"question": "2+2?"})), "done"])
    assert "not in this server's sampling.allowed_models" in results(limited.run_conversation("go"))[0]
    helped = mcp_agent({"t": entry("sampling", sampling={"enabled": True})}, max_turns=5,
                       config={"auxiliary": {"mcp": {"model": "helper-model"}}},  # hermes-agent's auxiliary.mcp
                       script=[calls(("mcp__t__ask_model", {"question": "2+2?"})), "four", "done"])
    assert json.loads(results(helped.run_conversation("go"))[0])["result"] == "the model said: four (helper-model)"


def test_remote_servers_streamable_http_and_sse(mcp_agent, http_server, sse_server):
    agent = mcp_agent({"web": {"url": http_server, "headers": {"X-Test": "1"}}, "old": {"url": sse_server,
                                                                                       "transport": "sse"}},
                      script=[calls(("mcp__web__add", {"a": 1, "b": 2}), ("mcp__old__add", {"a": 3, "b": 4})), "ok"])
    assert [json.loads(r)["result"] for r in results(agent.run_conversation("go"))] == ["3", "7"]


def test_a_server_that_asks_for_the_clients_certificate_gets_it(mcp_agent, mtls_server, caplog):
    """hermes-agent's ssl_verify (the server's authority), client_cert and client_key (mutual TLS), as one file or two
    or its [cert, key]; without them the server is reported and its tools are not offered."""
    url, pki = mtls_server
    entries = {"two": {"url": url, "ssl_verify": str(pki["ca"]), "client_cert": str(pki["client_cert"]),
                       "client_key": str(pki["client_key"])},
               "one": {"url": url, "ssl_verify": str(pki["ca"]), "client_cert": str(pki["client_pem"])},
               "pair": {"url": url, "ssl_verify": str(pki["ca"]), "client_cert": [str(pki["client_cert"]),
                                                                               str(pki["client_key"])]},
               "none": {"url": url, "ssl_verify": str(pki["ca"]), "connect_timeout": 10},
               "unknown-ca": {"url": url, "client_cert": str(pki["client_pem"]), "connect_timeout": 10}}
    agent = mcp_agent(entries, script=[calls(*((f"mcp__{name}__add", {"a": 1, "b": 2}) for name in entries)), "ok"])
    result = agent.run_conversation("go")
    two, one, pair, none, unknown_ca = results(result)
    assert json.loads(two)["result"] == json.loads(one)["result"] == json.loads(pair)["result"] == "3"
    assert "unknown tool 'mcp__none__add'" in none and "unknown tool 'mcp__unknown-ca__add'" in unknown_ca
    said = {r.getMessage().split("'")[1]: r.getMessage() for r in caplog.records if "MCP server '" in r.getMessage()}
    assert said["none"].endswith("(config.yaml): the server closed the connection; if it asks for a client "
                                 "certificate (mutual TLS), give it with client_cert and client_key"), said
    assert "CERTIFICATE_VERIFY_FAILED" in said["unknown-ca"] and said["unknown-ca"].endswith(
        "; if its certificate is of an authority of your own, name that with ssl_verify (its file) (or check "
        "nothing: ssl_verify: false)"), said


def test_a_client_certificate_that_cannot_be_used_is_one_line_before_any_connection():
    from plugins.mcp.config import parse, problems

    assert problems(parse("x", {"url": "https://example.org/mcp", "client_cert": "/nowhere/cert.pem"})) == [
        "client_cert: /nowhere/cert.pem does not exist"]
    assert problems(parse("x", {"url": "https://example.org/mcp", "ssl_verify": "/nowhere/ca.pem"})) == [
        "ssl_verify: /nowhere/ca.pem does not exist"]
    assert problems(parse("x", {"url": "https://example.org/mcp", "ssl_verify": False})) == []


def test_sampling_keeps_to_its_rate_and_timeout(mcp_agent):
    rated = mcp_agent({"t": entry("sampling", sampling={"enabled": True, "max_rpm": 1})},
                      script=[calls(("mcp__t__ask_twice", {})), "first", "done"])
    said = json.loads(results(rated.run_conversation("go"))[0])["result"]
    assert said.startswith("first | refused: ") and "more than 1 sampling requests a minute" in said

    class SlowModel:  # the sampling call's model answers after the timeout
        @hookimpl
        def pre_api_request(self, call):
            if call.aux_task.startswith("mcp_sampling"):
                time.sleep(2)

    slow = mcp_agent({"t": entry("sampling", sampling={"enabled": True, "timeout": 0.5})}, plugins=[SlowModel()],
                     script=[calls(("mcp__t__ask_model", {"question": "?"})), "late", "done"])
    assert "did not answer within 0.5s (sampling.timeout)" in results(slow.run_conversation("go"))[0]


class ShipsAServer:
    @hookimpl
    def register_mcp_servers(self, register):
        register("shipped", entry(), "a plugin's own MCP server")


def test_a_plugin_ships_a_server_and_config_can_turn_it_off(mcp_agent):
    agent = mcp_agent({}, plugins=[ShipsAServer()], script=[calls(("mcp__shipped__echo", {"text": "hi"})), "ok"])
    assert json.loads(results(agent.run_conversation("go"))[0])["result"] == "echo: hi"
    off = mcp_agent({"shipped": {"enabled": False}}, plugins=[ShipsAServer()], script=["ok"])
    off.run_conversation("go")
    assert not any(n.startswith("mcp__") for n in offered(off.scripted.requests[0]))


def test_no_servers_no_sdk_and_no_thread(make_agent):
    import sys

    import plugins.mcp

    before, imported = {t.name for t in threading.enumerate()}, "mcp" in sys.modules
    agent = make_agent(plugins.mcp, script=["ok"])
    agent.run_conversation("go")
    assert plugins.mcp._manager is None and "hermes-mcp" not in {t.name for t in threading.enumerate()} - before
    assert imported or "mcp" not in sys.modules  # the SDK is not imported for nothing


def test_a_call_carrying_a_key_to_a_server_asks_the_person_first(mcp_agent, monkeypatch):
    """An MCP server is another program (a remote one another machine): a key the model types into a call's arguments
    would leave with it. The approval plugin asks, as for a command carrying one; no answer is no."""
    from plugins import approval

    key = "sk-mcp-args-0123456789abcdef"
    monkeypatch.setenv("HERMES_TEST_API_KEY", key)
    asked, answers = [], ["deny", "once"]

    class Person:
        @hookimpl
        def approve_tool_call(self, tool_name, args, message, rule_key):
            asked.append((tool_name, message, rule_key))
            return answers.pop(0)

    agent = mcp_agent({"t": entry()}, plugins=[approval, Person()], script=[
        calls(("mcp__t__echo", {"text": f"token {key}"})), calls(("mcp__t__echo", {"text": f"token {key}"})),
        calls(("mcp__t__echo", {"text": "no key here"})), "done"])
    result = agent.run_conversation("go")
    denied, allowed, plain = results(result)
    assert "denied by the user" in denied and "echo:" not in denied and key not in denied
    assert json.loads(allowed)["result"] == "echo: token [hermes: the value of $HERMES_TEST_API_KEY was masked]"
    assert json.loads(plain)["result"] == "echo: no key here"  # nothing to ask
    assert [(name, rule) for name, _, rule in asked] == [("mcp__t__echo", "secret_value")] * 2
    assert asked[0][1] == ("This call of mcp__t__echo carries the value of $HERMES_TEST_API_KEY (a key): it could "
                           "send it off this machine. Arguments: {\"text\": \"token [hermes: the value of "
                           "$HERMES_TEST_API_KEY was masked]\"}")


def test_mcp_discovery_timeout_bounds_the_first_calls_wait_and_a_late_server_joins_after(mcp_agent):
    """hermes-agent's mcp_discovery_timeout: a server slow to start does not hold the first model call past it; its
    tools come with the calls after it connects. Unset, the call waits for it (as before)."""
    agent = mcp_agent({"s": entry("slow-start", 4)}, script=["first", "second"], config={"mcp_discovery_timeout": 0.5})
    started = time.monotonic()
    assert agent.run_conversation("go").final_response == "first"
    assert time.monotonic() - started < 3 and not any(n.startswith("mcp__s__") for n in offered(
        agent.scripted.requests[0]))
    import plugins.mcp

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and plugins.mcp._manager.connections["s"].state != "ready":
        time.sleep(0.1)
    assert agent.run_conversation("again").final_response == "second"
    assert "mcp__s__echo" in offered(agent.scripted.requests[1])
