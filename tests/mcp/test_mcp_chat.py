"""/reload-mcp in `hermes chat`, in a pseudo-terminal: config.yaml read again, servers reconnected, and the next
model call offered the new server's tools."""

import json
import os
import re

import yaml

from tests.conftest import ROOT
from tests.mcp.conftest import entry
from tests.terminal.conftest import terminal  # noqa: F401  (fixture)


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
    chat.keys("\x04")
    assert chat.close() == 0
    session = re.match(r"\w+", chat.seen.rsplit("resume it with: hermes chat --resume ", 1)[1]).group()
    shown = json.loads(hermes("sessions", "show", session, "--json").stdout)
    tools = [json.loads(m["content"]) for m in shown["messages"] if m["role"] == "tool"]
    assert [t["result"] for t in tools] == ["echo: one", "echo: two"]


IMPORT_ORDER = """
import os, sys

class FirstImports:  # notes the first time each watched package is asked for, in order
    seen = []

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in ("mcp", "prompt_toolkit") and top not in self.seen:
            self.seen.append(top)
            with open(os.environ["IMPORT_ORDER_FILE"], "a") as out:  # the servers' processes write here too
                out.write(f"{os.getpid()} {top}\\n")

sys.meta_path.insert(0, FirstImports())
"""


def test_the_chats_prompt_is_drawn_before_its_servers_sdk_is_imported(terminal, hermes_home, tmp_path):  # noqa: F811
    """Building the agent starts its MCP servers in the background, where the client imports the mcp SDK (most of
    a second of CPU, holding the interpreter): the line editor is made first, so the prompt does not wait for it
    (bench/bench_chat_prompt.py: 939 ms to the prompt before, 359 ms after)."""
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"a": entry()}}))
    site, order = tmp_path / "site", tmp_path / "order.txt"
    site.mkdir()
    (site / "sitecustomize.py").write_text(IMPORT_ORDER)
    chat, _ = terminal(["done"], env={"IMPORT_ORDER_FILE": str(order), "PYTHONPATH": os.pathsep.join(
        [str(site), str(ROOT)])})
    chat.expect("hermes> ", timeout=30)
    chat.line("go")  # the first model call waits for the server, so the SDK is surely imported by its answer
    chat.expect("done", timeout=30)
    chat.expect("hermes> ")
    chat.keys("\x04")
    assert chat.close() == 0
    pid = str(chat.child.pid)
    assert [line.split()[1] for line in order.read_text().splitlines() if line.split()[0] == pid] == \
        ["prompt_toolkit", "mcp"]
