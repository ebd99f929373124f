"""display.tool_progress (hermes-agent's) and chat's /verbose, in a pseudo-terminal: new leaves out a tool called
again in a row; verbose shows each call's arguments whole and its result; off shows no call; /verbose goes round."""

from __future__ import annotations


def call(name: str, **args) -> dict:
    return {"tool_calls": [[name, args]]}


def test_tool_progress_modes_and_verbose(terminal, hermes_home, tmp_path):
    (hermes_home / "config.yaml").write_text("display:\n  tool_progress: new\n")
    (tmp_path / "notes.txt").write_text("kiwi\n")
    steps = [call("terminal", command="echo one"), call("terminal", command="echo two"),
             call("read_file", path="notes.txt"), "looked",
             call("terminal", command="echo " + "x" * 60, timeout=30, workdir=".", background=False), "verbosely",
             call("terminal", command="echo three"), "quietly"]
    chat, _ = terminal(steps, env={"NO_COLOR": "1"})
    chat.expect("hermes> ")
    chat.line("look")
    chat.expect("looked")
    chat.line("/verbose")
    chat.expect("tool progress: all (every call)")
    chat.line("/verbose")
    chat.expect("tool progress: verbose (each call's arguments whole, and its result)")
    chat.line("again")
    chat.expect("verbosely")
    chat.line("/verbose")
    chat.expect("tool progress: off (the answer alone)")
    chat.line("once more")
    chat.expect("quietly")
    chat.line("/exit")
    assert chat.close() == 0
    seen = chat.seen.replace("\r\n", "\n")
    first = seen[:seen.index("looked")]
    assert "-> terminal(command='echo one')" in first and "echo two" not in first  # new: the repeat left out
    assert first.count("terminal done") == 1 and "-> read_file(path='notes.txt')" in first
    second = seen[seen.index("looked"):seen.index("verbosely")]
    assert f"-> terminal(command='echo {'x' * 60}', timeout='30', workdir='.', background='False')" in second  # whole
    assert f'"output": "{"x" * 60}\\n"' in second  # and the result
    third = seen[seen.index("verbosely"):seen.index("quietly")]
    assert "-> terminal" not in third and "terminal done" not in third  # the spinner names it, and is gone
