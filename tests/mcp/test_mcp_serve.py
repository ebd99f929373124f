"""`hermes mcp serve` as a real MCP client sees it (the `mcp` SDK's stdio client starting the command): its `ask` tool
runs a task through the real openai SDK against the wire server, goes on in a session, puts the approval question to
the client's user (elicitation), and refuses when the client cannot ask."""

from __future__ import annotations

import json
import os

import anyio
import yaml

from plugins_providers.testserver import reply
from tests.conftest import ROOT, hermes_command


def _params(hermes_home, cwd):
    from mcp.client.stdio import StdioServerParameters

    command = hermes_command()
    env = {**os.environ, "HERMES_HOME": str(hermes_home),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    return StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "serve"], env=env, cwd=str(cwd))


async def _asks(hermes_home, cwd, prompts, elicit=None) -> tuple:
    """The tools the server lists and the results of ``ask`` with each ``(prompt, go_on)`` of ``prompts``."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    results, session_id = [], ""
    with anyio.fail_after(90):
        async with stdio_client(_params(hermes_home, cwd)) as (read, write):
            kwargs = {"elicitation_callback": elicit} if elicit else {}
            async with ClientSession(read, write, **kwargs) as session:
                await session.initialize()
                tools = [tool.name for tool in (await session.list_tools()).tools]
                for prompt, go_on in prompts:  # go_on: the last answer's session, or a session id given
                    args = {"prompt": prompt, **({"session_id": go_on if isinstance(go_on, str) else session_id}
                                                 if go_on else {})}
                    result = await session.call_tool("ask", args)
                    results.append(result)
                    if not result.is_error:
                        session_id = result.structured_content["session_id"]
    return tools, results


def test_an_mcp_client_hands_hermes_tasks_and_its_user_answers_the_approval(hermes_home, wire_server, tmp_path):
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "model": "gpt-test", "api_mode": "chat_completions", "base_url": wire_server.openai_url,
        "approvals": {"extra_patterns": {"say_hello": "echo hello"}}}))  # a rule, so the check asks
    hello = reply(tool_calls=[("terminal", {"command": "echo hello"})])
    wire_server.push(hello, reply("It said hello."), hello, reply("It was not run."))
    asked = []

    async def elicit(context, params):
        from mcp_types import ElicitResult

        asked.append(params.message)
        return ElicitResult(action="accept", content={"run_it": len(asked) == 1, "rest_of_task": False})

    tools, (first, second, empty) = anyio.run(
        _asks, hermes_home, tmp_path, [("say hello", False), ("and again?", True), ("   ", False)], elicit)
    assert tools == ["ask"]
    assert first.structured_content["answer"] == "It said hello." and first.structured_content["exit_reason"] == \
        "completed"
    assert "hello" in [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] == "tool"][0]
    assert asked[0].startswith("hermes asks before it runs terminal:") and "echo hello" in asked[0]
    # the same session goes on: the model sees the first task; the user said no this time
    assert second.structured_content["session_id"] == first.structured_content["session_id"]
    sent = wire_server.requests[2].body["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["say hello", "and again?"]
    denied = [m["content"] for m in wire_server.requests[3].body["messages"] if m["role"] == "tool"][-1]
    assert "denied by the user" in denied
    assert empty.is_error and "the prompt is empty" in empty.content[0].text
    _, (unknown,) = anyio.run(_asks, hermes_home, tmp_path, [("hi", "nope")])
    assert unknown.is_error and "no session 'nope'" in unknown.content[0].text

    # a client that cannot ask: the flagged command is refused, as with nobody to ask
    wire_server.push(hello, reply("Refused."))
    _, (refused,) = anyio.run(_asks, hermes_home, tmp_path, [("say hello", False)])
    assert refused.structured_content["answer"] == "Refused."
    said = [m["content"] for m in wire_server.requests[5].body["messages"] if m["role"] == "tool"][-1]
    assert "nobody was available to approve it" in json.loads(said)["error"]
