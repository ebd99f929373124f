"""core-tools and approval through the real Agent loop (scripted provider):
the hooks around every call, errors as results, the approval question."""

import json

import pytest

from kernel import hookimpl
from plugins import agent_tools, approval, core_tools


@pytest.fixture(autouse=True)
def in_workspace(tmp_path, monkeypatch):
    """The tests' files are in the working folder, as a user's project is (a sandboxed command writes only there)."""
    monkeypatch.chdir(tmp_path)


def _results(result):
    return [json.loads(m["content"]) if m["content"].startswith("{") else m["content"]
            for m in result["messages"] if m["role"] == "tool"]


class Approver:
    def __init__(self, answer):
        self.answer, self.asked = answer, []

    @hookimpl
    def approve_tool_call(self, tool_name, args, message, rule_key, agent):
        self.asked.append((tool_name, args["command"], rule_key, message))
        return self.answer


def test_file_tools_work_through_the_loop(make_agent, tmp_path):
    a, b = str(tmp_path / "src" / "a.py"), str(tmp_path / "b.txt")
    agent = make_agent(core_tools, script=[
        {"tool_calls": [("write_file", {"path": a, "content": "x = 1\ny = 2\n"}), ("write_file", {"path": b, "content": "hi\n"})]},
        {"tool_calls": [("patch", {"path": a, "old_string": "y = 2", "new_string": "y = 3"}), ("read_file", {"path": b})]},
        {"tool_calls": [("read_file", {"path": a}), ("search_files", {"pattern": "y =", "path": str(tmp_path)})]},
        "done",
    ])
    result = agent.run_conversation("edit")
    assert result["final_response"] == "done"
    w1, w2, p, rb, ra, s = _results(result)
    assert w1["created"] and w2["created"] and p["replacements"] == 1
    assert rb.startswith("     1|hi")
    assert ra.splitlines()[:2] == ["     1|x = 1", "     2|y = 3"]
    assert "src/a.py:2: y = 3" in s


def test_bad_arguments_and_tool_errors_are_results_the_model_reads(make_agent, tmp_path):
    agent = make_agent(core_tools, script=[
        {"tool_calls": [("read_file", {}), ("patch", {"path": str(tmp_path / "nope"), "old_string": "a", "new_string": "b"}),
                        ("terminal", {"command": 42})]},
        "ok",
    ])
    r1, r2, r3 = _results(agent.run_conversation("go"))
    assert r1 == {"error": "read_file: missing required argument 'path' (a string)"}
    assert r2["error"].startswith("patch: file not found")
    assert r3["error"] == "terminal: argument 'command' must be a string, got int 42"


def test_terminal_through_the_loop(make_agent, tmp_path):
    agent = make_agent(core_tools, script=[
        {"tool_calls": [("terminal", {"command": "echo hello > f.txt && cat f.txt", "workdir": str(tmp_path)})]}, "ok"])
    [out] = _results(agent.run_conversation("go"))
    assert {k: v for k, v in out.items() if k != "sandbox"} == {"exit_code": 0, "output": "hello\n"}


SCRIPT_TOUCH = lambda marker: [{"tool_calls": [("terminal", {"command": f"touch {marker}"})]}, "ok"]  # noqa: E731
TEST_RULE = {"approvals": {"extra_patterns": {"test_touch_marker": r"touch \S*marker"}}}


def test_dangerous_command_is_denied_when_nobody_approves(make_agent, tmp_path):
    marker = tmp_path / "marker"
    agent = make_agent(approval, core_tools, script=SCRIPT_TOUCH(marker), config=TEST_RULE)
    result = agent.run_conversation("go")
    [out] = _results(result)
    assert "not run" in out["error"] and "nobody was available to approve it" in out["error"]
    assert "configured pattern 'test_touch_marker'" in out["error"]
    assert not marker.exists()
    assert result["final_response"] == "ok"


def test_dangerous_command_denied_or_allowed_by_the_user(make_agent, tmp_path):
    marker = tmp_path / "marker"
    no = Approver(False)
    agent = make_agent(approval, core_tools, script=SCRIPT_TOUCH(marker), config=TEST_RULE, callbacks=[no])
    [out] = _results(agent.run_conversation("go"))
    assert "denied by the user" in out["error"] and not marker.exists()
    assert no.asked[0][:3] == ("terminal", f"touch {marker}", "test_touch_marker")

    yes = Approver(True)
    agent = make_agent(approval, core_tools, script=SCRIPT_TOUCH(marker), config=TEST_RULE, callbacks=[yes])
    [out] = _results(agent.run_conversation("go"))
    assert out["exit_code"] == 0 and marker.exists()


def test_builtin_rule_blocks_a_real_pattern_without_running_it(make_agent, tmp_path):
    # "rm -rf *" in a scratch folder: the rule must stop it before the shell sees it
    (tmp_path / "keep.txt").write_text("x")
    agent = make_agent(approval, core_tools, script=[
        {"tool_calls": [("terminal", {"command": "rm -rf *", "workdir": str(tmp_path)})]}, "ok"])
    [out] = _results(agent.run_conversation("go"))
    assert "recursive delete" in out["error"] and (tmp_path / "keep.txt").exists()


def test_allowlist_and_mode_off_let_the_command_run(make_agent, tmp_path):
    for extra in ({"command_allowlist": ["test_touch_marker"]}, {"approvals": {"mode": "off"}}):
        marker = tmp_path / f"marker{len(extra)}"
        marker.unlink(missing_ok=True)
        config = {**TEST_RULE, **extra}
        if "approvals" in extra:
            config["approvals"] = {**TEST_RULE["approvals"], **extra["approvals"]}
        agent = make_agent(approval, core_tools, script=SCRIPT_TOUCH(marker), config=config)
        [out] = _results(agent.run_conversation("go"))
        assert out["exit_code"] == 0 and marker.exists(), extra


def test_toolsets_select_tools(make_agent):
    agent = make_agent(core_tools, agent_tools, toolsets=["safe"])
    assert sorted(agent.tools) == ["read_file", "search_files"]
    agent = make_agent(core_tools, agent_tools, toolsets=["core"])
    assert sorted(agent.tools) == ["patch", "read_file", "search_files", "terminal", "write_file"]
    agent = make_agent(core_tools, agent_tools, toolsets=["coding"])
    assert sorted(agent.tools) == ["clarify", "delegate_task", "patch", "read_file", "search_files", "terminal",
                                   "todo", "write_file"]
    agent = make_agent(core_tools, agent_tools, toolsets=["file", "todo"])
    assert sorted(agent.tools) == ["patch", "read_file", "search_files", "todo", "write_file"]


class Redactor:
    """A plugin rewriting terminal output (hermes-agent's transform_terminal_output)."""

    def __init__(self):
        self.seen = []

    @hookimpl
    def transform_terminal_output(self, command, output, returncode, task_id, env_type):
        self.seen.append((command, returncode, env_type, bool(task_id)))
        return output.replace("secret-token-123", "[redacted]")


def test_transform_terminal_output_rewrites_what_the_model_reads(make_agent):
    redactor = Redactor()
    agent = make_agent(core_tools, redactor, script=[
        {"tool_calls": [("terminal", {"command": "echo the key is secret-token-123"})]}, "ok"])
    result = agent.run_conversation("show me")
    (out,) = _results(result)
    assert out["output"].strip() == "the key is [redacted]" and out["exit_code"] == 0
    assert redactor.seen == [("echo the key is secret-token-123", 0, "local", True)]


def test_a_broken_safety_check_fails_closed(make_agent, tmp_path, monkeypatch):
    def broken(command, config=None):
        raise RuntimeError("rule table unreadable")

    monkeypatch.setattr(approval, "matches", broken)
    marker = tmp_path / "marker"
    agent = make_agent(approval, core_tools, script=SCRIPT_TOUCH(marker))
    [out] = _results(agent.run_conversation("go"))
    assert "safety check of this command failed" in out["error"] and "rule table unreadable" in out["error"]
    assert "nobody was available to approve it" in out["error"] and not marker.exists()

    yes = Approver(True)  # a person can still let it run
    agent = make_agent(approval, core_tools, script=SCRIPT_TOUCH(marker), callbacks=[yes])
    [out] = _results(agent.run_conversation("go"))
    assert yes.asked[0][2] == "approval_check_failed" and out["exit_code"] == 0 and marker.exists()


def test_a_cd_carries_over_to_the_next_command_and_the_file_tools(make_agent, tmp_path):
    """As in a shell (and in hermes-agent): the folder a command ends in is where the next one starts, and what a
    relative path of the file tools means. ``workdir`` is for one command; a killed command moves nothing."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    agent = make_agent(core_tools, approval, config={"approvals": {"mode": "off"}}, script=[
        {"tool_calls": [("terminal", {"command": "cd src && echo one > notes.txt"})]},
        {"tool_calls": [("terminal", {"command": "pwd"}), ("execute_code", {"code": "print(open('notes.txt').read())"})]},
        {"tool_calls": [("read_file", {"path": "notes.txt"}), ("write_file", {"path": "pkg/two.txt", "content": "2\n"})]},
        {"tool_calls": [("terminal", {"command": "pwd; cd /", "workdir": str(tmp_path)})]},
        {"tool_calls": [("terminal", {"command": "cd pkg; sleep 5", "timeout": 1})]},
        {"tool_calls": [("terminal", {"command": "cd pkg; exit 3"})]},
        {"tool_calls": [("terminal", {"command": "pwd; ls; export LEFT=over"})]},
        "done",
        {"tool_calls": [("terminal", {"command": 'pwd; echo "[${LEFT-}]"'})]},
        "again",
    ])
    moved, here, script, read, wrote, once, killed, failed, last = _results(agent.run_conversation("go"))
    src = str((tmp_path / "src").resolve())
    assert moved["workdir"] == src and (tmp_path / "src" / "notes.txt").read_text() == "one\n"
    assert here["output"] == src + "\n" and "workdir" not in here  # it did not move again
    assert script["output"] == "one\n\n"  # a script's relative paths too
    assert read.startswith("     1|one") and wrote["created"] and (tmp_path / "src" / "pkg" / "two.txt").is_file()
    assert once["output"] == str(tmp_path.resolve()) + "\n" and "workdir" not in once
    assert killed.get("timed_out") and "workdir" not in killed
    assert failed["exit_code"] == 3 and failed["workdir"] == src + "/pkg"  # an exit still moves it, as cd did
    assert last["output"] == f"{src}/pkg\ntwo.txt\n"
    agent.new_session()  # /new: another conversation, whose shell starts afresh where the prompt says
    assert _results(agent.run_conversation("again"))[0]["output"] == f"{tmp_path.resolve()}\n[]\n"


def test_terminal_cwd_sets_where_the_tools_start(make_agent, tmp_path):
    """hermes-agent's ``terminal.cwd``: the tools (and the sandbox's writable folder) start there, not where hermes
    was started; a folder that is not there is an error the model reads, and no command runs."""
    project = tmp_path / "project"
    project.mkdir()
    agent = make_agent(core_tools, approval, config={"approvals": {"mode": "off"}, "terminal": {"cwd": str(project)}},
                       script=[
        {"tool_calls": [("terminal", {"command": "pwd; echo made > made.txt"}), ("read_file", {"path": "made.txt"})]},
        "done",
    ])
    ran, read = _results(agent.run_conversation("go"))
    assert ran["output"] == str(project.resolve()) + "\n" and ran["exit_code"] == 0  # writable in the sandbox too
    assert read.startswith("     1|made")
    gone = make_agent(core_tools, config={"terminal": {"cwd": str(tmp_path / "nowhere")}}, script=[
        {"tool_calls": [("terminal", {"command": "touch here.txt"}), ("read_file", {"path": "x"})]}, "done"])
    errors = _results(gone.run_conversation("go"))
    assert errors == [{"error": f"terminal.cwd is {str(tmp_path / 'nowhere')!r}, which is not a folder here: set it "
                                "to one in config.yaml"}] * 2
    assert not (tmp_path / "here.txt").exists()


def test_exported_variables_carry_over_and_the_approval_check_sees_them(make_agent, tmp_path):
    """As in a shell (and hermes-agent): what a command exports (a virtual environment activated) or unsets holds for
    the next commands and scripts. The approval check reads commands with those variables: a `CDPATH` exported
    one call earlier takes the next `cd vdir` outside the folder, so its `rm` is asked about (nobody answers: no)."""
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "activate").write_text('export VIRTUAL_ENV="$PWD/.venv"\nexport PATH="$VIRTUAL_ENV/bin:$PATH"\n')
    (venv / "mytool").write_text("#!/bin/sh\necho from the venv\n")
    (venv / "mytool").chmod(0o755)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    (outside / "vdir").mkdir(parents=True)
    (outside / "vdir" / "a").write_text("keep me\n")
    agent = make_agent(core_tools, approval, config={"sandbox": {"mode": "off"}, "command_allowlist": ["execute_code"]},
                       script=[
        {"tool_calls": [("terminal", {"command": "source .venv/bin/activate; export GREETING=hello"})]},
        {"tool_calls": [("terminal", {"command": 'mytool; echo "$GREETING $VIRTUAL_ENV"'})]},
        {"tool_calls": [("execute_code", {"code": "import os; print(os.environ['GREETING'])"})]},
        {"tool_calls": [("terminal", {"command": "unset GREETING; export CDPATH=" + str(outside)})]},
        {"tool_calls": [("terminal", {"command": 'echo "[${GREETING-unset}]"'})]},
        {"tool_calls": [("terminal", {"command": "cd vdir && rm -f a"})]},
        "done",
    ])
    _, ran, script, _, unset, refused = _results(agent.run_conversation("go"))
    assert ran["output"] == f"from the venv\nhello {tmp_path.resolve()}/.venv\n"
    assert script["output"].startswith("hello")
    assert unset["output"] == "[unset]\n"
    assert "error" in refused and (outside / "vdir" / "a").read_text() == "keep me\n", refused


def test_a_sessions_first_command_takes_what_the_users_shell_files_export(make_agent, tmp_path, monkeypatch):
    """hermes-agent's terminal.auto_source_bashrc: hermes as a service has no login shell's PATH (nvm, pyenv); the
    first command takes what ~/.profile and ~/.bashrc export, keys aside. A Debian ~/.bashrc returns at once when
    not interactive; a file that exits leaves things as they were; terminal.shell_init_files names others."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "fromhome").write_text("#!/bin/sh\necho on the PATH\n")
    (home / "bin" / "fromhome").chmod(0o755)
    (home / ".profile").write_text('echo noisy\nexport PATH="$HOME/bin:$PATH"\nexport MY_API_KEY=sk-from-profile\n')
    (home / ".bashrc").write_text('case $- in *i*) ;; *) return;; esac\nexport FROM_BASHRC=yes\n')
    (home / "custom.sh").write_text("export FROM_CUSTOM=yes\n")
    (home / "exits.sh").write_text("export HALF=done\nexit 3\n")
    monkeypatch.setenv("HOME", str(home))
    command = 'fromhome; echo "[${MY_API_KEY-}] [${FROM_BASHRC-}] [${FROM_CUSTOM-}] [${HALF-}]"'

    def first(terminal=None):
        config = {"approvals": {"mode": "off"}, **({"terminal": terminal} if terminal else {})}
        agent = make_agent(core_tools, approval, config=config, script=[
            {"tool_calls": [("terminal", {"command": command})]}, "done"])
        return _results(agent.run_conversation("go"))[0]["output"]

    assert first() == "on the PATH\n[] [] [] []\n"  # the profile's noise stays out of the output too
    assert first({"auto_source_bashrc": False}).endswith("fromhome: command not found\n[] [] [] []\n")
    assert first({"shell_init_files": ["~/custom.sh"]}).endswith("not found\n[] [] [yes] []\n")
    assert first({"shell_init_files": ["~/exits.sh"]}).endswith("not found\n[] [] [] []\n")


def test_a_resumed_session_goes_on_in_the_folder_its_commands_had_moved_to(hermes, tmp_path):
    """The shell lives in memory; its folder is in the history (the results' workdir), which the model reads on:
    `hermes run --resume` starts the commands where that history left them, not where the model would not expect."""
    (tmp_path / "sub").mkdir()
    first, then = tmp_path / "first.json", tmp_path / "then.json"
    first.write_text(json.dumps([{"tool_calls": [["terminal", {"command": "cd sub"}]]}, "moved"]))
    then.write_text(json.dumps([{"tool_calls": [["terminal", {"command": "pwd"}]]}, "here"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", first, "--json", "go", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    session = json.loads(out.stdout)["session_id"]
    out = hermes("run", "--api-mode", "scripted", "--base-url", then, "--json", "--resume", session, "on", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert _results(json.loads(out.stdout))[-1]["output"] == f"{(tmp_path / 'sub').resolve()}\n"
