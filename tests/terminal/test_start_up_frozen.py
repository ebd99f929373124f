"""What start-up made is out of the collector's way during a turn (issue 24): ``hermes run`` and ``hermes chat``
collect nothing while they start (plugins loaded, the agent and its provider built) and then freeze what they made
(``gc.freeze``), so each collection scans only the turn's objects. A tool plugin reports what the collector sees
at its import and from inside the turn."""

import gc
import json
import os

import pytest

from hermes.host.plugins import paused_collector
from tests.conftest import ROOT
from tests.kernel.fakedist import make_dist

PROBE = '''
import gc
from kernel import hookimpl
from kernel.types import Tool

COLLECTING_AT_IMPORT = gc.isenabled()

def probe(args, ctx):
    made_now = []
    tracked = gc.get_objects()  # the permanent generation (frozen) is not in it
    return {"frozen": gc.get_freeze_count(), "probe_tracked": any(o is probe for o in tracked),
            "made_now_tracked": any(o is made_now for o in tracked), "collecting_at_import": COLLECTING_AT_IMPORT,
            "collecting_in_turn": gc.isenabled()}

@hookimpl
def register_tools(register):
    register(Tool("gc_probe", "what the collector sees", {"type": "object", "properties": {}}, probe))
'''


def probe_site(tmp_path) -> dict:
    site = tmp_path / "site"
    make_dist(site, "hermes-gc-probe", "1.0", {"gc-probe": ("hermes_gc_probe", PROBE)})
    return {"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def frozen_as_expected(seen: dict, plugins_loaded_in_start: bool = True) -> None:
    assert seen["frozen"] > 10_000, seen  # the modules and classes of start-up
    assert seen["probe_tracked"] is False  # the plugin's function, made at its import: frozen
    assert seen["made_now_tracked"] is True  # what the turn makes is collected as usual
    assert seen["collecting_at_import"] is not plugins_loaded_in_start and seen["collecting_in_turn"] is True


def test_a_start_that_fails_collects_again():
    with pytest.raises(RuntimeError), paused_collector():
        assert not gc.isenabled()
        raise RuntimeError("a provider that cannot be built")
    assert gc.isenabled()


def test_a_process_that_had_the_collector_off_keeps_it_off():
    gc.disable()  # a process embedding hermes that manages the collector itself
    try:
        with paused_collector():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with paused_collector():
        pass
    assert gc.isenabled()


def test_run_freezes_what_start_up_made(tmp_path, hermes):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["gc_probe", {}]]}, "done"]))
    out = hermes("run", "--json", "--api-mode", "scripted", "--base-url", script, "go", env=probe_site(tmp_path))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    frozen_as_expected(json.loads([m for m in result["messages"] if m["role"] == "tool"][0]["content"]))


def test_chat_freezes_what_start_up_made(tmp_path, terminal, hermes):
    chat, _ = terminal([{"tool_calls": [["gc_probe", {}]]}, "probed it"], env=probe_site(tmp_path))
    chat.expect("hermes> ")
    chat.line("go")
    chat.expect("probed it")
    chat.expect("hermes> ")
    chat.line("/exit")
    assert chat.close() == 0
    (session,) = json.loads(hermes("sessions", "list", "--json").stdout)  # the same HERMES_HOME as the chat's
    shown = json.loads(hermes("sessions", "show", "--json", session["id"]).stdout)
    tools = [m for m in shown["messages"] if m.get("role") == "tool"]
    # `chat` is a plugin's command: the plugins load to find it, before it starts (its SDK is imported in it)
    frozen_as_expected(json.loads(tools[0]["content"]), plugins_loaded_in_start=False)
