"""terminal(background=true) and the process tool: a command that keeps running while the conversation goes on,
read, waited for and stopped by the model, and never outliving the agent or hermes."""

import json
import os
import time

import pytest

from plugins import core_tools
from tests.conftest import sandboxed


def tool_results(result) -> list:
    return [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]


def gone(pid: int, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a child of this process that ended stays a zombie until it is reaped
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


SERVER = "echo ready; sleep 60"


def test_a_background_command_runs_on_and_is_polled_waited_for_and_killed(make_agent, tmp_path):
    steps = [{"tool_calls": [["terminal", {"command": SERVER, "background": True}],
                             ["terminal", {"command": "echo oops; exit 3", "background": True}]]},
             {"tool_calls": [["process", {"action": "wait", "process_id": "bg2", "timeout": 20}]]},
             {"tool_calls": [["process", {"action": "wait", "process_id": "bg1", "timeout": 0.5}],
                             ["process", {"action": "kill", "process_id": "bg1"}],
                             ["process", {"action": "list"}],
                             ["process", {"action": "poll", "process_id": "bg9"}],
                             ["process", {"action": "stop", "process_id": "bg1"}]]},
             "done"]
    agent = make_agent(core_tools, script=steps, config={"sandbox": {"mode": "off"}})
    started, failing, waited, still, killed, listed, unknown, bad = tool_results(agent.run_conversation("go"))
    assert started["process_id"] == "bg1" and started["status"] == "running" and started["pid"] > 0
    assert (failing["output"] + waited["output"]) == "oops\n" and waited["status"] == "exited"
    assert waited["exit_code"] == 3
    assert still["status"] == "running"
    assert killed["status"] == "killed" and gone(started["pid"])
    assert started["output"] + still["output"] + killed["output"] == "ready\n"  # each part once, as it came
    assert [p["status"] for p in listed["processes"]] == ["killed", "exited"]
    assert unknown == {"error": "process: no background command 'bg9' (there are: bg1, bg2)"}
    assert bad == {"error": "process: unknown action 'stop'; use list, poll, log, wait, submit, write, close or kill"}


def test_background_commands_end_with_the_agent_and_leave_no_file(make_agent):
    steps = [{"tool_calls": [["terminal", {"command": SERVER, "background": True}]]}, "done"]
    agent = make_agent(core_tools, script=steps, config={"sandbox": {"mode": "off"}})
    [started] = tool_results(agent.run_conversation("start a server"))
    job = agent.state["core_tools.processes"]["bg1"]
    assert not gone(started["pid"], within=0.5)  # it outlives the turn
    agent.close()
    assert gone(started["pid"]) and not os.path.exists(job.log)


def test_hermes_run_stops_its_background_commands_as_it_exits(hermes, tmp_path):
    script = tmp_path / "script.json"
    victim = tmp_path / "victim"
    script.write_text(json.dumps([{"tool_calls": [["terminal", {"command": f"sleep 3; touch {victim}; sleep 60",
                                                                "background": True}]]}, "done"]))
    out = hermes("run", "--yolo", "--json", "--api-mode", "scripted", "--base-url", script, "start it", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    [started] = tool_results(json.loads(out.stdout))
    assert started["status"] == "running" and gone(started["pid"])  # sandboxed or not
    time.sleep(3.5)  # past the moment the command would have touched the victim
    assert not victim.exists()  # what the command started ended too


@pytest.mark.parametrize("box", ["off", pytest.param("workspace-write", marks=pytest.mark.skipif(
    not sandboxed(), reason="no sandbox can start here"))])
def test_the_model_types_into_a_background_command_and_reads_its_whole_log(make_agent, tmp_path, monkeypatch, box):
    monkeypatch.chdir(tmp_path)
    prompt = "seq 1 1000; while read -r line; do echo \"got $line\"; done; echo bye"
    steps = [{"tool_calls": [["terminal", {"command": prompt, "background": True}],
                             ["terminal", {"command": "sleep 60", "background": True}]]},
             {"tool_calls": [["process", {"action": "submit", "process_id": "bg1", "data": "hello"}],
                             ["process", {"action": "write", "process_id": "bg1", "data": "a"}],
                             ["process", {"action": "submit", "process_id": "bg1", "data": "b"}],
                             ["process", {"action": "write", "process_id": "bg2", "data": "x" * 300_000}],
                             ["process", {"action": "close", "process_id": "bg1"}],
                             ["process", {"action": "wait", "process_id": "bg1", "timeout": 20}],
                             ["process", {"action": "submit", "process_id": "bg1", "data": "late"}],
                             ["process", {"action": "log", "process_id": "bg1"}],
                             ["process", {"action": "log", "process_id": "bg1", "offset": 10, "limit": 3}],
                             ["process", {"action": "log", "process_id": "bg1", "offset": 0}]]},
             "done"]
    agent = make_agent(core_tools, script=steps, config={"sandbox": {"mode": box}})
    _, _, hello, a, b, full, closed, waited, late, tail, middle, bad = tool_results(agent.run_conversation("go"))
    assert hello["input"] == "6 bytes written" and a["input"] == "1 bytes written" and b["input"] == "2 bytes written"
    assert full["input"].endswith("of 300000 bytes written: it is not reading its input now")  # and nothing waited
    assert closed["input"] == "closed: it reads end of file"
    assert waited["status"] == "exited" and waited["exit_code"] == 0
    assert late == {"error": "process: bg1's input is closed"}
    assert tail["total_lines"] == 1003 and tail["output"].splitlines() == [
        *map(str, range(804, 1001)), "got hello", "got ab", "bye"]  # its last 200 lines
    assert middle["output"] == "10\n11\n12\n"
    assert bad == {"error": "process: 'offset' (the first line, from 1) and 'limit' must be positive"}
