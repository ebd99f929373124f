"""tool-search: an MCP server's tools reached through tool_search and tool_call instead of their schemas in every
request, through the real loop (scripted provider) and a real MCP server process (tests/mcp/server.py)."""

import json

import plugins.tool_search as tool_search
from kernel import hookimpl
from plugins import approval
from plugins.prompt.layers import tools as tools_layer
from tests.mcp.conftest import entry


def calls(*pairs):
    return {"tool_calls": [list(p) for p in pairs]}


def results(result):
    return [m["content"] for m in result["messages"] if m["role"] == "tool"]


def names(request):
    return {t["name"] for t in request.tools}


def test_many_tools_are_found_and_run_through_two_and_the_hooks_see_the_tool_itself(mcp_agent):
    """Past the threshold (a window of 1,024 tokens here), the request offers tool_search and tool_call instead of
    the server's tools, the same list on every call; a search gives the schema, tool_call runs the tool, and the
    tool hooks and the display see the server's tool, not the bridge."""
    seen = []

    class Watcher:
        @hookimpl
        def pre_tool_call(self, call, agent):
            seen.append(("pre", call.name, dict(call.args)))

        @hookimpl
        def on_tool_start(self, tool_name, args, tool_call_id, agent):
            seen.append(("start", tool_name, tool_call_id))

    agent = mcp_agent({"t": entry()}, plugins=(tool_search, Watcher()), config={"model_context_length": 1024}, script=[
        calls((tool_search.SEARCH, {"query": "add two numbers"})),
        calls((tool_search.CALL, {"name": "mcp__t__add", "arguments": {"a": 2, "b": 40}})),
        calls((tool_search.CALL, {"name": "mcp__t__nothing"}), (tool_search.CALL, {"name": "tool_search"})),
        "done"])
    result = agent.run_conversation("go")
    first = names(agent.scripted.requests[0])
    assert {tool_search.SEARCH, tool_search.CALL} <= first and not any(n.startswith("mcp__") for n in first)
    assert all(names(r) == first for r in agent.scripted.requests)  # the same tools every call: the cache holds
    found, ran, unknown, bridge = results(result)
    found = json.loads(found)
    assert found["tools"][0]["name"] == "mcp__t__add" and found["tools"][0]["parameters"]["required"] == ["a", "b"]
    assert len(found["tools"]) <= 5
    assert json.loads(ran) == {"result": "42", "structuredContent": {"result": 42}}
    assert "no tool named 'mcp__t__nothing'" in unknown and "no tool named 'tool_search'" in bridge
    assert ("pre", "mcp__t__add", {"a": 2, "b": 40}) in seen
    [inner] = [s for s in seen if s[0] == "start" and s[1] == "mcp__t__add"]
    assert inner[2].endswith(".1")  # the bridge's call id, one level down


def test_below_the_threshold_or_off_the_tools_are_offered_as_they_are(mcp_agent):
    """auto with a window where the server's schemas are small: its tools in the request, the bridges out; off the
    same in any window; on hides them in any window."""
    for config, hidden in (({}, False), ({"model_context_length": 1024, "tools": {"tool_search": {"enabled": False}}},
                                         False), ({"tools": {"tool_search": {"enabled": "on"}}}, True)):
        agent = mcp_agent({"t": entry()}, plugins=(tool_search,), config=config, script=["done"])
        agent.run_conversation("go")
        offered = names(agent.scripted.requests[0])
        assert ("mcp__t__add" not in offered) is hidden, config
        assert (tool_search.SEARCH in offered) is hidden and ("terminal" in offered or "terminal" not in agent.tools)
        listed = tools_layer(agent).text  # the system prompt names what the requests offer, no more
        assert ("- mcp__t__add:" not in listed) is hidden and ("- tool_search:" in listed) is hidden
        assert ("more tools of MCP servers and plugins, not listed: find them with tool_search" in listed) is hidden
        agent.close()


def test_a_tool_called_through_the_bridge_is_asked_about_as_itself(mcp_agent, monkeypatch):
    """The approval check judges the tool tool_call runs: a key typed into an MCP tool's arguments is asked about as
    a call of that tool, and a no keeps it from the server."""
    key = "sk-bridge-args-0123456789abcdef"
    monkeypatch.setenv("HERMES_TEST_API_KEY", key)
    asked = []

    class Person:
        @hookimpl
        def approve_tool_call(self, tool_name, args, message, rule_key):
            asked.append((tool_name, rule_key))
            return "deny"

    agent = mcp_agent({"t": entry()}, plugins=(tool_search, approval, Person()),
                      config={"tools": {"tool_search": {"enabled": "on"}}}, script=[
        calls((tool_search.CALL, {"name": "mcp__t__echo", "arguments": {"text": f"token {key}"}})), "done"])
    [said] = results(agent.run_conversation("go"))
    assert asked == [("mcp__t__echo", "secret_value")]
    assert "denied by the user" in said and "echo:" not in said and key not in said


def test_without_mcp_servers_or_plugins_of_others_nothing_is_added(make_agent):
    """The common case: no tool could be hidden, so neither bridge is among the agent's tools or in its prompt."""
    from plugins import core_tools, prompt

    agent = make_agent(core_tools, prompt, tool_search, script=["done"])
    agent.run_conversation("go")
    assert tool_search.SEARCH not in agent.tools and tool_search.CALL not in agent.tools
    assert "tool_search" not in agent.scripted.requests[0].messages[0]["content"]
