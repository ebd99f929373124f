"""core-tools handlers, called directly with a simple context (the loop's part
is covered in test_tools_e2e.py)."""

import json
import os
import stat
import threading
import time
from types import SimpleNamespace

import pytest

from hermes.host.config import Config
from kernel.tools import plan
from kernel.types import ToolCall
from kernel.types import ToolContext, ToolError
from plugins import core_tools


class FakeAgent:
    def __init__(self):
        self.state = {}
        self.interrupted = False
        self.progress = []

    def emit(self, name, **kw):
        self.progress.append((name, kw))


@pytest.fixture
def ctx():
    return ToolContext(agent=FakeAgent(), tool_name="t", tool_call_id="c1", task_id="task", session_id="s", turn_id="u")


@pytest.fixture
def tools():
    return {tool.name: tool for tool in core_tools.make_tools(Config({}))}


@pytest.fixture
def run(tools, ctx):
    def call(name, **args):
        return tools[name].handler(args, ctx)

    return call


# --------------------------------------------------------------------------
# terminal


def test_terminal_returns_output_and_exit_code(run, tmp_path):
    result = run("terminal", command="echo out; echo err >&2; pwd; exit 3", workdir=str(tmp_path))
    assert result["exit_code"] == 3
    assert result["output"].splitlines() == ["out", "err", str(tmp_path)]
    assert "timed_out" not in result and "note" not in result


def test_terminal_bad_arguments_are_tool_errors(run, tmp_path):
    with pytest.raises(ToolError, match="missing required argument 'command'"):
        run("terminal")
    with pytest.raises(ToolError, match="'command' must be a string"):
        run("terminal", command=["ls"])
    with pytest.raises(ToolError, match="'timeout' must be a number"):
        run("terminal", command="true", timeout="soon")
    with pytest.raises(ToolError, match="positive"):
        run("terminal", command="true", timeout=0)
    with pytest.raises(ToolError, match="not an existing directory"):
        run("terminal", command="true", workdir=str(tmp_path / "nope"))
    with pytest.raises(ToolError, match="empty"):
        run("terminal", command="   ")
    # NaN compares false with everything: as a timeout it was no timeout at all (a hung command never stopped)
    for nan in ("nan", float("nan"), " NaN "):
        with pytest.raises(ToolError, match="'timeout' must be a number, got"):
            run("terminal", command="true", timeout=nan)
    with pytest.raises(ToolError, match="^terminal: 'command' contains a NUL character$"):
        run("terminal", command="echo a\x00b")


@pytest.fixture
def plain_run(ctx):
    """The terminal without a sandbox: what runs where none can start."""
    tools = {tool.name: tool for tool in core_tools.make_tools(Config({"sandbox": {"mode": "off"}}))}
    return lambda name, **args: tools[name].handler(args, ctx)


def test_terminal_timeout_kills_the_whole_process_group(plain_run, tmp_path):
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    # the shell leads the group; a background child and a foreground child both must die
    result = plain_run("terminal", command=f"echo $$ > {pidfile}; sleep 30 & sleep 30", timeout=1)
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 1.8
    assert result["timed_out"] is True
    assert "timed out after 1 s" in result["note"] and "process group was killed" in result["note"]
    pgid = int(pidfile.read_text())
    # zombies may wait for init to reap them; no live process may be left
    if os.path.isdir("/proc/self"):
        assert core_tools.live_group_members(pgid) == []
    else:
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.02)
        else:
            pytest.fail(f"process group {pgid} still exists")


def test_terminal_timeout_kills_what_ignores_sigterm(plain_run, tmp_path):
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    result = plain_run("terminal", command=f"trap '' TERM; echo $$ > {pidfile}; sleep 30", timeout=0.5)
    assert result["timed_out"] is True and time.monotonic() - started < 2.5  # 0.5 s + 1 s grace, then SIGKILL
    if os.path.isdir("/proc/self"):
        assert core_tools.live_group_members(int(pidfile.read_text())) == []


def test_terminal_timeout_is_capped(tmp_path, ctx):
    tool = core_tools.make_terminal(Config({"terminal": {"max_timeout": 5}}))
    result = tool.handler({"command": "echo hi", "timeout": 9999}, ctx)
    assert result["output"] == "hi\n" and "timeout capped at 5 s" in result["note"]


def test_terminal_output_is_clipped_head_and_tail(ctx):
    tool = core_tools.make_terminal(Config({"terminal": {"max_output_chars": 2000}}))
    cmd = "python3 -c \"print('HEAD' + 'x' * 5000 + 'TAIL')\""
    out = tool.handler({"command": cmd}, ctx)["output"]
    assert out.startswith("HEAD") and out.rstrip().endswith("TAIL")
    assert "characters omitted" in out
    assert len(out) < 2200
    # huge output: only head and tail are read
    out = tool.handler({"command": "yes abcdefgh | head -c 3000000; echo; echo END"}, ctx)["output"]
    assert "bytes omitted" in out and out.rstrip().endswith("END") and len(out) < 2300


def test_terminal_background_job_does_not_block(run, tmp_path):
    started = time.monotonic()
    result = run("terminal", command="sleep 20 & echo $!")
    assert time.monotonic() - started < 2
    os.kill(int(result["output"].strip()), 9)


def test_terminal_stdin_is_closed(run):
    started = time.monotonic()
    result = run("terminal", command="cat; echo done", timeout=5)
    assert result["output"] == "done\n" and time.monotonic() - started < 2


def test_terminal_stops_when_the_agent_is_interrupted(run, ctx):
    threading.Timer(0.3, lambda: setattr(ctx.agent, "interrupted", True)).start()
    started = time.monotonic()
    result = run("terminal", command="sleep 30", timeout=20)
    assert time.monotonic() - started < 2.5
    assert result["interrupted"] is True and "interrupted" in result["note"]


# --------------------------------------------------------------------------
# read_file


def test_read_file_numbers_lines_and_pages(run, tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text = run("read_file", path=str(f))
    assert text.splitlines()[0] == "     1|line 1"
    assert text.splitlines()[-1] == f"[{f}: lines 1-10 of 10]"
    text = run("read_file", path=str(f), offset=4, limit=2)
    assert text.splitlines() == ["     4|line 4", "     5|line 5", f"[{f}: lines 4-5 of 10; continue with offset=6]"]
    # lenient about numbers sent as strings
    assert run("read_file", path=str(f), offset="10").splitlines()[0] == "    10|line 10"


def test_read_file_relative_path_and_empty_file(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.txt").write_text("")
    assert run("read_file", path="empty.txt") == "empty.txt: (empty file)"


def test_utf16_text_is_read_and_searched_and_patch_says_it_keeps_off(run, tmp_path):
    """A file saved as UTF-16 (a Windows export, a .reg file) was "a binary file; it cannot be shown as text" to
    read_file, "1 binary skipped" to search_files, and "a binary file" to patch."""
    (tmp_path / "export.csv").write_bytes("name;city\r\nJosé;Köln\r\n".encode("utf-16"))
    assert run("read_file", path=str(tmp_path / "export.csv")) == (
        f"     1|name;city\n     2|José;Köln\n[{tmp_path / 'export.csv'}: lines 1-2 of 2]")
    assert run("read_file", path=str(tmp_path / "export.csv"), offset=2).startswith("     2|José;Köln\n")
    found = run("search_files", pattern="Köln", path=str(tmp_path))
    assert "export.csv:2: José;Köln" in found and "binary" not in found, found
    with pytest.raises(ToolError, match="is UTF-16 text; patch edits UTF-8 files"):
        run("patch", path=str(tmp_path / "export.csv"), old_string="Köln", new_string="Bonn")


def test_read_file_errors(run, tmp_path):
    (tmp_path / "config.yaml").write_text("a: 1\n")
    with pytest.raises(ToolError, match=r"file not found: .*confg.yaml. Did you mean: config.yaml\?"):
        run("read_file", path=str(tmp_path / "confg.yaml"))
    with pytest.raises(ToolError, match="is a directory"):
        run("read_file", path=str(tmp_path))
    (tmp_path / "img.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(ToolError, match="binary file"):
        run("read_file", path=str(tmp_path / "img.bin"))
    with pytest.raises(ToolError, match="offset 5 is past the end .* 1 lines"):
        run("read_file", path=str(tmp_path / "config.yaml"), offset=5)
    with pytest.raises(ToolError, match="1-based"):
        run("read_file", path=str(tmp_path / "config.yaml"), offset=0)
    with pytest.raises(ToolError, match="missing required argument 'path'"):
        run("read_file")
    with pytest.raises(ToolError, match="'limit' must be an integer"):
        run("read_file", path=str(tmp_path / "config.yaml"), limit=[1])


def test_read_file_too_large_asks_for_a_part(tmp_path, ctx):
    tool = core_tools.make_read_file(Config({"file": {"max_read_bytes": 1000}}))
    f = tmp_path / "big.log"
    f.write_text("".join(f"entry {i}\n" for i in range(1000)))
    with pytest.raises(ToolError, match="too large .* 'offset' and 'limit'"):
        tool.handler({"path": str(f)}, ctx)
    text = tool.handler({"path": str(f), "offset": 500, "limit": 2}, ctx)
    assert text.splitlines() == ["   500|entry 499", "   501|entry 500", f"[{f}: lines 500-501; more follow: continue with offset=502]"]


def test_read_file_caps_characters_and_long_lines(tmp_path, ctx):
    tool = core_tools.make_read_file(Config({"file": {"max_read_chars": 5000}}))
    f = tmp_path / "wide.txt"
    f.write_text(("y" * 3000 + "\n") * 10)
    text = tool.handler({"path": str(f)}, ctx)
    assert "[line cut: 3000 characters]" in text
    assert "continue with offset=" in text and "stopped at 5000 characters" in text
    assert len(text) < 5200


# --------------------------------------------------------------------------
# write_file


def test_write_file_creates_folders_and_writes_atomically(run, tmp_path):
    target = tmp_path / "deep" / "er" / "notes.md"
    result = run("write_file", path=str(target), content="héllo\nworld")
    assert result == {"path": str(target), "bytes_written": 12, "lines": 2, "created": True}
    assert target.read_text(encoding="utf-8") == "héllo\nworld"
    target.chmod(0o640)
    result = run("write_file", path=str(target), content="")
    assert result["created"] is False and target.read_text() == ""
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the mode survives the replace
    assert sorted(p.name for p in target.parent.iterdir()) == ["notes.md"]  # no temp files left


def test_write_file_and_patch_write_through_a_symlink_and_leave_it_a_link(run, tmp_path):
    # a dotfile kept in a repository and linked into place: the edit belongs in the repository's file
    (tmp_path / "dotfiles").mkdir()
    real = tmp_path / "dotfiles" / "bashrc"
    real.write_text("alias a=b\n")
    real.chmod(0o600)
    link = tmp_path / ".bashrc"
    link.symlink_to("dotfiles/bashrc")
    run("patch", path=str(link), old_string="alias a=b", new_string="alias a=c")
    assert link.is_symlink() and real.read_text() == "alias a=c\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    result = run("write_file", path=str(link), content="alias a=d\n")
    assert result["created"] is False and link.is_symlink() and real.read_text() == "alias a=d\n"
    dangling = tmp_path / "later"
    dangling.symlink_to("dotfiles/later.txt")
    assert run("write_file", path=str(dangling), content="x")["created"] is True
    assert dangling.is_symlink() and (tmp_path / "dotfiles" / "later.txt").read_text() == "x"
    assert sorted(p.name for p in real.parent.iterdir()) == ["bashrc", "later.txt"]  # no temp files left


def test_write_file_errors(run, tmp_path):
    with pytest.raises(ToolError, match="is a directory"):
        run("write_file", path=str(tmp_path), content="x")
    with pytest.raises(ToolError, match="missing required argument 'content'"):
        run("write_file", path=str(tmp_path / "x"))
    (tmp_path / "afile").write_text("")
    with pytest.raises(ToolError, match="a file is in the way"):
        run("write_file", path=str(tmp_path / "afile" / "x.txt"), content="x")
    with pytest.raises(ToolError, match="'content' must be a string"):
        run("write_file", path=str(tmp_path / "x"), content={"a": 1})


# --------------------------------------------------------------------------
# patch

SOURCE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def test_patch_replaces_once_and_shows_a_diff(run, tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SOURCE)
    result = run("patch", path=str(f), old_string="return a - b", new_string="return a - b  # minus")
    assert result["replacements"] == 1
    assert "-    return a - b\n+    return a - b  # minus" in result["diff"]
    assert f.read_text() == SOURCE.replace("a - b", "a - b  # minus")


def test_patch_missing_text_names_the_closest_line(run, tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SOURCE)
    with pytest.raises(ToolError) as err:
        run("patch", path=str(f), old_string="return a * b", new_string="x")
    message = str(err.value)
    assert "old_string not found" in message and "closest line is 2: '    return a + b'" in message
    with pytest.raises(ToolError, match="different whitespace or indentation"):
        run("patch", path=str(f), old_string="def add(a, b):\n  return a + b", new_string="x")
    assert f.read_text() == SOURCE  # nothing changed


def test_patch_ambiguous_text_counts_and_suggests(run, tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SOURCE)
    with pytest.raises(ToolError) as err:
        run("patch", path=str(f), old_string="(a, b):", new_string="(a, b, c):")
    message = str(err.value)
    assert "occurs 2 times" in message and "lines 1, 5" in message
    assert "more surrounding lines" in message and "replace_all=true" in message
    assert f.read_text() == SOURCE
    result = run("patch", path=str(f), old_string="(a, b):", new_string="(a, b, c):", replace_all=True)
    assert result["replacements"] == 2 and f.read_text().count("(a, b, c):") == 2


def test_patch_keeps_crlf_files_crlf(run, tmp_path):
    f = tmp_path / "w.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    run("patch", path=str(f), old_string="one\ntwo", new_string="1\n2")
    assert f.read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_patch_bad_input(run, tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SOURCE)
    with pytest.raises(ToolError, match="identical"):
        run("patch", path=str(f), old_string="a", new_string="a")
    with pytest.raises(ToolError, match="'old_string' is empty; .*write_file"):
        run("patch", path=str(f), old_string="", new_string="x")
    with pytest.raises(ToolError, match="missing required argument 'new_string'"):
        run("patch", path=str(f), old_string="a")
    with pytest.raises(ToolError, match="file not found"):
        run("patch", path=str(tmp_path / "nope.py"), old_string="a", new_string="b")
    with pytest.raises(ToolError, match="'replace_all' must be true or false"):
        run("patch", path=str(f), old_string="add", new_string="plus", replace_all="yes")
    (tmp_path / "b.bin").write_bytes(b"a\x00b")
    with pytest.raises(ToolError, match="binary"):
        run("patch", path=str(tmp_path / "b.bin"), old_string="a", new_string="b")
    (tmp_path / "latin.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(ToolError, match="not valid UTF-8"):
        run("patch", path=str(tmp_path / "latin.txt"), old_string="caf", new_string="x")


# --------------------------------------------------------------------------
# search_files


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "core.py").write_text("import os\n\ndef Main():\n    return os.getcwd()\n")
    (tmp_path / "src" / "util.py").write_text("def helper():\n    return 'main'\n")
    (tmp_path / "README.md").write_text("Run main.\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("main = yes\n")
    (tmp_path / "blob.bin").write_bytes(b"main\x00\x01")
    return tmp_path


def test_search_files_content_skips_git_and_binary(run, tree):
    text = run("search_files", pattern="main", path=str(tree))
    lines = text.splitlines()
    assert lines[0] == f"2 matches in 2 files for /main/ under {tree}:"
    assert lines[1:] == ["README.md:1: Run main.", "src/util.py:2:     return 'main'"]


def test_search_files_glob_case_and_files_target(run, tree):
    text = run("search_files", pattern="main", path=str(tree), glob="*.py", ignore_case=True)
    assert "src/pkg/core.py:3: def Main():" in text and "README" not in text
    text = run("search_files", pattern="main", path=str(tree), glob="src/**/*.py", ignore_case=True)
    assert "src/pkg/core.py:3" in text and "src/util.py:2" in text
    text = run("search_files", pattern=r"\.py$", path=str(tree), target="files")
    assert sorted(text.splitlines()[1:]) == ["src/pkg/core.py", "src/util.py"]
    text = run("search_files", pattern="os", path=str(tree / "src" / "pkg" / "core.py"))
    assert "core.py:1: import os" in text


def test_search_files_max_results_and_no_match(run, tree):
    text = run("search_files", pattern=".", path=str(tree), max_results=2)
    assert len([ln for ln in text.splitlines() if ":" in ln and not ln.startswith(("[", "2 matches"))]) == 2
    assert "stopped at 2 results; more exist" in text
    text = run("search_files", pattern="zzz_nothing", path=str(tree))
    assert text.startswith("No matches for /zzz_nothing/") and "1 binary skipped" in text


def test_search_files_errors(run, tree):
    with pytest.raises(ToolError, match="invalid regular expression"):
        run("search_files", pattern="(unclosed", path=str(tree))
    with pytest.raises(ToolError, match="path not found"):
        run("search_files", pattern="x", path=str(tree / "nowhere"))
    with pytest.raises(ToolError, match="missing required argument 'pattern'"):
        run("search_files", path=str(tree))
    with pytest.raises(ToolError, match="'target' must be"):
        run("search_files", pattern="x", path=str(tree), target="dirs")


# --------------------------------------------------------------------------
# what the kernel reads: toolsets, parallel flags, path scoping


def test_tool_flags_and_path_scoping(tools, tmp_path):
    assert {n: (t.toolset, t.parallel_safe, t.path_arg) for n, t in tools.items()} == {
        "terminal": ("terminal", False, None),
        "process": ("terminal", False, None),
        "read_file": ("file", True, "path"),
        "write_file": ("file", True, "path"),
        "patch": ("file", True, "path"),
        "search_files": ("file", True, None),
        "execute_code": ("code_execution", False, None),
    }
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")

    def calls(*specs):
        return [ToolCall(name=name, args=args, id=f"c{i}", tool=tools[name], index=i) for i, (name, args) in enumerate(specs)]

    # different paths: one parallel run; the same path twice: split; terminal is a barrier
    segments = plan(calls(("write_file", {"path": a, "content": ""}), ("patch", {"path": b}), ("read_file", {"path": a}),
                          ("terminal", {"command": "ls"}), ("search_files", {"pattern": "x"})))
    assert [(kind, [c.name for c in seg]) for kind, seg in segments] == [
        ("parallel", ["write_file", "patch"]),
        ("sequential", ["read_file"]),
        ("sequential", ["terminal"]),
        ("sequential", ["search_files"]),
    ]


def test_register_hooks(tmp_path):
    got, sets = [], {}
    core_tools.register_tools(register=got.append, config=Config({}))
    core_tools.register_toolsets(register=lambda name, tools, description="": sets.setdefault(name, tools))
    assert [t.name for t in got] == ["terminal", "process", "read_file", "write_file", "patch", "search_files",
                                     "execute_code"]
    assert sets == {"core": ["terminal", "file"], "safe": ["read_file", "search_files"]}
    assert all(json.dumps(t.schema()) for t in got)


def test_search_files_stops_after_max_files(tree, ctx):
    tool = core_tools.make_search_files(Config({"file": {"max_search_files": 2}}))
    text = tool.handler({"pattern": "zzz_nothing", "path": str(tree)}, ctx)
    assert text.startswith("No matches") and "looked at 2 files" in text and "stopped after 2 files" in text
    text = tool.handler({"pattern": ".", "path": str(tree), "target": "files"}, ctx)
    assert "stopped after 2 files" in text


# --------------------------------------------------------------------------
# properties: what write_file writes, read_file shows line for line; patch is
# exactly one str.replace

import tempfile  # noqa: E402

from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"), max_size=300)


@settings(max_examples=60, deadline=None)
@given(content=TEXT)
def test_write_then_read_round_trips(content):
    tools = {t.name: t for t in core_tools.make_tools(Config({}))}
    ctx = SimpleNamespace(agent=FakeAgent())
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "f.txt")
        tools["write_file"].handler({"path": path, "content": content}, ctx)
        shown = tools["read_file"].handler({"path": path}, ctx)
    if content == "":
        assert shown.endswith("(empty file)")
        return
    rows = shown.split("\n")[:-1]  # the last line is the footer
    text = "\n".join(row.split("|", 1)[1] for row in rows)
    assert text == (content[:-1] if content.endswith("\n") else content)


@settings(max_examples=60, deadline=None)
@given(text=TEXT, start=st.integers(0, 300), length=st.integers(1, 40), new=TEXT)
def test_patch_is_one_exact_replacement(text, start, length, new):
    start = min(start, max(len(text) - 1, 0))
    end = min(start + length, len(text))
    while text and text.count(text[start:end]) > 1:  # widen until unique (the whole text always is)
        end, start = (end + 1, start) if end < len(text) else (end, start - 1)
    old = text[start:end]
    assume(old and old != new)
    tools = {t.name: t for t in core_tools.make_tools(Config({}))}
    ctx = SimpleNamespace(agent=FakeAgent())
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "f.txt")
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        result = tools["patch"].handler({"path": path, "old_string": old, "new_string": new}, ctx)
        with open(path, encoding="utf-8", newline="") as fh:
            assert fh.read() == text.replace(old, new, 1)
    assert result["replacements"] == 1


def test_a_write_that_breaks_a_files_syntax_says_so_and_what_was_broken_before_is_said_as_such(run, tmp_path):
    app = tmp_path / "app.py"
    result = run("write_file", path=str(app), content="def total(:\n    return 1\n")
    assert result["syntax"].startswith("the file no longer parses as Python: invalid syntax (line 1, column 11;")
    assert app.read_text() == "def total(:\n    return 1\n"  # written all the same: the model mends it
    result = run("patch", path=str(app), old_string="return 1", new_string="return 2")
    assert result["syntax"].startswith("the file did not parse as Python before this change either")
    result = run("patch", path=str(app), old_string="total(:", new_string="total():")
    assert "syntax" not in result and result["replacements"] == 1
    config = tmp_path / "config.json"
    run("write_file", path=str(config), content='{"port": 8080}\n')
    result = run("patch", path=str(config), old_string="8080}", new_string="8080,}")
    assert result["syntax"] == "the file no longer parses as JSON: Expecting property name enclosed in double " \
                               "quotes: line 1 column 15 (char 14)"
    cases = {"a.yaml": ("key: [1, 2\n", "the file no longer parses as YAML: while parsing a flow sequence"),
             "b.toml": ("name = \n", "the file no longer parses as TOML: Invalid value (at line 1, column 8)"),
             "stack.yaml": ("Bucket: !Ref Name\n", None),  # a tag YAML does not know is still YAML
             "chart.yaml": ("replicas: {{ .Values.replicas }\n", None),  # a template: YAML once rendered
             "tsconfig.json": ('{\n  // strict\n  "strict": true,\n}\n', None),  # JSON with comments
             "notes.txt": ("def (:\n", None)}
    for name, (content, said) in cases.items():
        got = run("write_file", path=str(tmp_path / name), content=content).get("syntax")
        assert (got is None) if said is None else got.startswith(said), (name, got)
