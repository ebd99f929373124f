"""/reload-mcp in `hermes chat`, in a pseudo-terminal, and config.yaml followed by itself between turns
(mcp.auto_reload_on_config_change): servers reconnected, and the next model call offered the new server's tools."""

import json
import re

import yaml

from tests.mcp.conftest import entry
from tests.terminal.conftest import first_imports, terminal  # noqa: F401  (fixtures)


def tool_results(chat, hermes) -> list:
    """The chat ended with Ctrl+D; the tool results its stored session holds."""
    chat.keys("\x04")
    assert chat.close() == 0
    session = re.match(r"\w+", chat.seen.rsplit("resume it with: hermes chat --resume ", 1)[1]).group()
    shown = json.loads(hermes("sessions", "show", session, "--json").stdout)
    return [m["content"] for m in shown["messages"] if m["role"] == "tool"]


def test_reload_mcp_reads_the_config_again_and_the_next_call_has_the_new_servers_tools(terminal, hermes,  # noqa: F811
                                                                                      hermes_home):
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"a": entry()}}))
    chat, home = terminal([{"tool_calls": [["mcp__a__echo", {"text": "one"}]]}, "first done",
                           {"tool_calls": [["mcp__b__echo", {"text": "two"}]]}, "second done"])
    chat.expect("hermes> ", timeout=30)
    chat.line("go")
    chat.expect("first done", timeout=30)
    chat.expect("hermes> ")
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"a": entry(), "b": entry()}}))
    chat.line("/reload-mcp")
    chat.expect("b: ready", timeout=30)
    chat.expect("hermes> ")
    chat.line("again")
    chat.expect("second done", timeout=30)
    chat.expect("hermes> ")
    tools = [json.loads(content) for content in tool_results(chat, hermes)]
    assert [t["result"] for t in tools] == ["echo: one", "echo: two"]


def test_a_server_added_to_config_yaml_mid_chat_is_there_at_the_next_call(terminal, hermes, hermes_home):  # noqa: F811
    """hermes-agent's mcp.auto_reload_on_config_change (on by default): `hermes mcp add` in another terminal while a
    chat runs, and its next model call has the server's tools; a server taken out again is stopped."""
    (hermes_home / "config.yaml").write_text("agent:\n  max_turns: 10\n")  # no server: nothing started
    chat, home = terminal(["first done", {"tool_calls": [["mcp__a__echo", {"text": "two"}]]}, "second done",
                           {"tool_calls": [["mcp__a__echo", {"text": "three"}]]}, "third done"])
    chat.expect("hermes> ", timeout=30)
    chat.line("go")
    chat.expect("first done", timeout=30)
    chat.expect("hermes> ")
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"a": entry()}}))
    chat.line("again")
    chat.expect("second done", timeout=30)
    chat.expect("hermes> ")
    (hermes_home / "config.yaml").write_text("mcp:\n  auto_reload_on_config_change: true\n")  # a taken out again
    chat.line("once more")
    chat.expect("third done", timeout=30)
    chat.expect("hermes> ")
    tools = tool_results(chat, hermes)
    assert json.loads(tools[0])["result"] == "echo: two" and "unknown tool 'mcp__a__echo'" in tools[1]


def test_the_chats_prompt_is_drawn_before_its_servers_sdk_is_imported(terminal, first_imports,  # noqa: F811
                                                                     hermes_home):
    """Building the agent starts its MCP servers in the background, where the client imports the mcp SDK (most of
    a second of CPU, holding the interpreter): the line editor is made first, so the prompt does not wait for it
    (bench/bench_chat_prompt.py: 939 ms to the prompt before, 359 ms after)."""
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"a": entry()}}))
    env, seen = first_imports("prompt_toolkit", "mcp")
    chat, _ = terminal(["done"], env=env)
    chat.expect("hermes> ", timeout=30)
    chat.line("go")  # the first model call waits for the server, so the SDK is surely imported by its answer
    chat.expect("done", timeout=30)
    chat.expect("hermes> ")
    chat.keys("\x04")
    assert chat.close() == 0
    assert [package for package, _ in seen(chat.child.pid)] == ["prompt_toolkit", "mcp"]
