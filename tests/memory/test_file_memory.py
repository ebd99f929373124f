"""Built-in file memory: the store and the ``memory`` tool's actions."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hermes.host.config import Config, ConfigError
from kernel.types import ToolError
from plugins_memory.file_memory import FileMemory, parse_entries, run_memory_tool

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path):
    return FileMemory(tmp_path / "memories", memory_limit=200, user_limit=100)


def disk(store, target="memory"):
    return parse_entries(store.path(target).read_text(encoding="utf-8"))


def test_add_replace_remove_each_write_on_disk(store):
    run_memory_tool(store, {"action": "add", "target": "memory", "content": "project uses uv"})
    assert disk(store) == ["project uses uv"]
    out = run_memory_tool(store, {"action": "add", "target": "memory", "content": "tests run with pytest -q"})
    assert out["success"] and out["entry_count"] == 2
    assert disk(store) == ["project uses uv", "tests run with pytest -q"]

    run_memory_tool(store, {"action": "replace", "target": "memory", "old_text": "uses uv", "content": "project uses poetry"})
    assert disk(store) == ["project uses poetry", "tests run with pytest -q"]

    run_memory_tool(store, {"action": "remove", "target": "memory", "old_text": "pytest"})
    assert disk(store) == ["project uses poetry"]
    # the file on disk separates entries with a line holding only §
    run_memory_tool(store, {"action": "add", "target": "memory", "content": "line one\nline two"})
    assert store.path("memory").read_text(encoding="utf-8") == "project uses poetry\n§\nline one\nline two\n"


def test_user_target_is_a_separate_file(store):
    run_memory_tool(store, {"action": "add", "target": "user", "content": "name: Ada"})
    assert disk(store, "user") == ["name: Ada"]
    assert not store.path("memory").exists()
    assert store.path("user").name == "USER.md"


def test_over_the_limit_is_an_error_the_model_can_act_on(store):
    run_memory_tool(store, {"action": "add", "target": "memory", "content": "a" * 150})
    before = store.path("memory").read_text(encoding="utf-8")
    with pytest.raises(ToolError) as err:
        run_memory_tool(store, {"action": "add", "target": "memory", "content": "b" * 60})
    msg = str(err.value)
    assert "limit of 200" in msg and "150/200" in msg  # how much is used and the limit
    assert "remove" in msg and "replace" in msg  # what to do
    assert "Nothing was saved" in msg
    assert store.path("memory").read_text(encoding="utf-8") == before  # nothing lost or changed
    # a replace that grows past the limit is refused too
    with pytest.raises(ToolError, match="over its limit"):
        run_memory_tool(store, {"action": "replace", "target": "memory", "old_text": "aaa", "content": "c" * 201})


def test_a_file_already_over_its_limit_can_still_shrink(store):
    # edited by hand, or the limit was lowered in config: the model must be able to make room
    store.path("memory").parent.mkdir(parents=True)
    store.path("memory").write_text("x" * 150 + "\n§\n" + "y" * 150 + "\n", encoding="utf-8")
    with pytest.raises(ToolError, match="over its limit of 200"):
        run_memory_tool(store, {"action": "add", "target": "memory", "content": "z"})
    with pytest.raises(ToolError, match="over its limit of 200"):  # growing stays refused
        run_memory_tool(store, {"action": "replace", "target": "memory", "old_text": "xxx", "content": "x" * 160})
    shorter = run_memory_tool(store, {"action": "replace", "target": "memory", "old_text": "xxx", "content": "x" * 100})
    assert shorter["success"] is True and disk(store) == ["x" * 100, "y" * 150]
    removed = run_memory_tool(store, {"action": "remove", "target": "memory", "old_text": "yyy"})
    assert removed["success"] is True and disk(store) == ["x" * 100]
    assert run_memory_tool(store, {"action": "add", "target": "memory", "content": "z"})["success"] is True


def test_replace_and_remove_need_a_unique_match(store):
    for text in ("likes tea", "likes coffee", "uses vim"):
        run_memory_tool(store, {"action": "add", "target": "memory", "content": text})
    with pytest.raises(ToolError, match="2 entries .* contain 'likes'"):
        run_memory_tool(store, {"action": "remove", "target": "memory", "old_text": "likes"})
    with pytest.raises(ToolError, match="no entry in MEMORY.md contains 'emacs'"):
        run_memory_tool(store, {"action": "replace", "target": "memory", "old_text": "emacs", "content": "x"})
    with pytest.raises(ToolError, match="old_text"):
        run_memory_tool(store, {"action": "remove", "target": "memory"})
    assert disk(store) == ["likes tea", "likes coffee", "uses vim"]


@pytest.mark.parametrize(
    "args, pattern",
    [
        ({"action": "add", "target": "notes", "content": "x"}, "unknown target 'notes'"),
        ({"action": "delete", "target": "memory"}, "unknown action 'delete'"),
        ({"action": "add", "target": "memory", "content": ""}, "'content' must be a non-empty string"),
        ({"action": "add", "target": "memory", "content": 42}, "'content' must be a non-empty string"),
        ({"action": "add", "target": "memory", "content": "a\n§\nb"}, "separates entries"),
    ],
)
def test_bad_arguments_are_clear_errors(store, args, pattern):
    with pytest.raises(ToolError, match=pattern):
        run_memory_tool(store, args)
    assert not store.path("memory").exists()


def test_duplicate_add_changes_nothing(store):
    run_memory_tool(store, {"action": "add", "target": "memory", "content": "x"})
    out = run_memory_tool(store, {"action": "add", "target": "memory", "content": "x"})
    assert "already present" in out["message"] and disk(store) == ["x"]


def test_writes_reread_the_file_so_other_writers_are_kept(store, tmp_path):
    other = FileMemory(tmp_path / "memories", memory_limit=200, user_limit=100)
    run_memory_tool(store, {"action": "add", "target": "memory", "content": "from one"})
    run_memory_tool(other, {"action": "add", "target": "memory", "content": "from two"})
    run_memory_tool(store, {"action": "add", "target": "memory", "content": "from one again"})
    assert disk(store) == ["from one", "from two", "from one again"]


def test_snapshot_block_and_disabled_target(tmp_path):
    store = FileMemory(tmp_path, enabled={"user": False})
    assert store.snapshot_block() == ""
    store.add("memory", "repo lives in ~/src")
    block = store.snapshot_block()
    assert "repo lives in ~/src" in block and "[19/2200 chars]" in block
    with pytest.raises(ToolError, match="user_profile_enabled"):
        store.add("user", "x")


def test_limits_come_from_config(hermes_home):
    store = FileMemory.from_config(Config({"memory": {"memory_char_limit": 50}}))
    assert store.limits == {"memory": 50, "user": 1375}
    assert store.folder == hermes_home / "memories"
    with pytest.raises(ConfigError, match="memory.user_char_limit"):
        FileMemory.from_config(Config({"memory": {"user_char_limit": 0}}))


def test_no_temp_files_left_behind(store):
    for i in range(5):
        run_memory_tool(store, {"action": "add", "target": "memory", "content": f"fact {i}"})
    assert not [p.name for p in store.folder.iterdir() if p.name.endswith(".tmp")]
    assert disk(store) == [f"fact {i}" for i in range(5)]


def test_concurrent_writers_lose_nothing(tmp_path):
    """Threads and two processes add to the same file at once."""
    folder = tmp_path / "memories"
    code = (
        "import sys; from plugins_memory.file_memory import FileMemory\n"
        "s = FileMemory(sys.argv[1], memory_limit=100000)\n"
        "for i in range(15): s.add('memory', f'{sys.argv[2]} {i}')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(folder), f"proc{n}"], env=env) for n in range(2)]
    store = FileMemory(folder, memory_limit=100000)
    threads = [threading.Thread(target=lambda n=n: [store.add("memory", f"thread{n} {i}") for i in range(15)]) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    entries = disk(store)
    assert len(entries) == 75 and len(set(entries)) == 75
