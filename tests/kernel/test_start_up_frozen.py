"""What start-up made is out of the collector's way during the turn (issue 24): ``hermes run`` freezes it
(``gc.freeze``) once the agent and its provider are built, so each collection scans only the turn's objects."""

import json
import os

from tests.conftest import ROOT

from .fakedist import make_dist

PROBE = '''
import gc
from kernel import hookimpl
from kernel.types import Tool

def probe(args, ctx):
    made_now = []
    tracked = gc.get_objects()  # the permanent generation (frozen) is not in it
    return {"frozen": gc.get_freeze_count(), "probe_tracked": any(o is probe for o in tracked),
            "made_now_tracked": any(o is made_now for o in tracked)}

@hookimpl
def register_tools(register):
    register(Tool("gc_probe", "what the collector sees", {"type": "object", "properties": {}}, probe))
'''


def test_start_up_objects_are_frozen_during_the_turn(tmp_path, hermes):
    site = tmp_path / "site"
    make_dist(site, "hermes-gc-probe", "1.0", {"gc-probe": ("hermes_gc_probe", PROBE)})
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["gc_probe", {}]]}, "done"]))
    out = hermes("run", "--json", "--api-mode", "scripted", "--base-url", script, "go",
                 env={"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    seen = json.loads([m for m in result["messages"] if m["role"] == "tool"][0]["content"])
    assert seen["frozen"] > 10_000  # the modules and classes of start-up
    assert seen["probe_tracked"] is False  # the plugin's function, made at its import: frozen
    assert seen["made_now_tracked"] is True  # what the turn makes is collected as usual
