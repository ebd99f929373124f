"""Real hermes-agent plugins from the package index, pinned, installed as their
READMEs say and driven through the hermes command line: a hook-only plugin
installed as a folder by its own installer, a context engine that subclasses
hermes-agent's ContextCompressor, a memory provider published as a class, and
a tool plugin. Their wheels are downloaded once per test session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import ROOT, pip_from_index

pytestmark = pytest.mark.network

PUBLISHED = ["agentguard-hermes-plugin==0.4.0", "hermes-jev-compact==0.2.1", "hermes-context-tuner==0.3.3",
             "hermes-llmwiki==0.1.1", "hermes-dreaming==0.3.2", "filelock==3.16.1"]


@pytest.fixture(scope="session")
def published(tmp_path_factory):
    """A site folder holding the pinned published plugins (wheels unpacked, as pip would install them)."""
    root = tmp_path_factory.mktemp("published")
    wheels, site = root / "wheels", root / "site"
    pip_from_index("download", "--no-deps", "--only-binary", ":all:", "-d", str(wheels), *PUBLISHED,
                   what="the published hermes-agent plugins")
    for wheel in wheels.glob("*.whl"):
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)
    return site


@pytest.fixture
def run_with(hermes, published):
    def run(*args, env=None, input=None):
        return hermes(*args, input=input,
                      env={"PYTHONPATH": os.pathsep.join([str(ROOT), str(published)]), **(env or {})})

    return run


def dot_hermes(tmp_path, hermes_home):
    """A HOME whose ~/.hermes is HERMES_HOME: for plugins that hard-code
    ~/.hermes (they work only with hermes-agent's default home there too)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    if not (home / ".hermes").exists():
        (home / ".hermes").symlink_to(hermes_home)
    return home


def script(tmp_path, steps, name="script.json"):
    path = tmp_path / name
    path.write_text(json.dumps(steps))
    return path


class Recorder(BaseHTTPRequestHandler):
    """AgentGuard's two endpoints: event ingest, and tool-call holds (which say block)."""

    posts: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.posts.append((self.path, json.loads(body or b"null")))
        reply = {"decision": "block", "reason": "AgentGuard: no shell today"} if self.path == "/api/holds" else {}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_agentguard_a_hook_only_folder_plugin_observes_and_blocks(run_with, published, hermes_home, tmp_path):
    # as its README says: its own installer copies it into $HERMES_HOME/plugins/agentguard/
    installed = subprocess.run([sys.executable, "-m", "agentguard_hermes.cli", "install", "--hermes-dir",
                                str(hermes_home)], capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": str(published)})
    assert installed.returncode == 0, installed.stderr
    assert run_with("plugins", "enable", "agentguard").returncode == 0
    Recorder.posts = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        steps = [{"tool_calls": [["terminal", {"command": "ls"}]]}, "all done"]
        out = run_with("run", "--api-mode", "scripted", "--base-url", script(tmp_path, steps), "-t", "terminal",
                       "--json", "look around",
                       env={"AGENTGUARD_TIMEPLUS_URL": url, "AGENTGUARD_URL": url, "AGENTGUARD_HOLDS_ENABLED": "true"})
    finally:
        server.shutdown()
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    tool = [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"][0]
    assert tool == {"error": "AgentGuard: no shell today"}  # its pre_tool_call block stopped the command
    holds = [body for path, body in Recorder.posts if path == "/api/holds"]
    assert holds[0]["tool_name"] == "terminal" and holds[0]["tool_input"] == {"command": "ls"}
    events = [row for path, body in Recorder.posts if "ingest" in path for row in body["data"]]
    names = [row[0] for row in events]
    for hook in ("on_session_start", "pre_llm_call", "pre_api_request", "post_api_request", "post_tool_call",
                 "post_llm_call", "conversation_end", "on_session_end"):
        assert hook in names, names
    data = {row[0]: json.loads(row[13]) for row in events}
    assert data["on_session_start"]["session_id"] == result["session_id"] and data["on_session_start"]["platform"] \
        == "run"
    assert data["post_api_request"]["usage"]["input_tokens"] == 10  # hermes' keyword set, as it reads it


def test_jev_a_context_compressor_subclass_compresses(run_with, hermes_home, tmp_path):
    (hermes_home / "config.yaml").write_text(
        "plugins:\n  enabled: [hermes-jev-compact]\ncontext:\n  engine: jev\nmodel_context_length: 4096\n"
        "compression:\n  protect_last_n: 2\n")
    info = json.loads(run_with("plugins", "info", "hermes-jev-compact", "--json").stdout)
    assert info["status"] == "enabled" and info["context_engines"] == ["jev"], info
    result = _read_a_big_file_then_resume(run_with, tmp_path)
    tools = [m["content"] for m in result["messages"] if m["role"] == "tool"]
    # jev found no key, so its override fell back to the inherited prune: the kernel's, behind its seam
    assert tools and tools[0].startswith("[tool result pruned to save context:"), tools
    assert result["final_response"] == "and again"


def _read_a_big_file_then_resume(run_with, tmp_path, reads: int = 2) -> dict:
    """Two turns: the first reads a big file (``reads`` times), so the second starts over half the
    window and the engine compresses."""
    big = tmp_path / "big.txt"
    big.write_text("a line of a large file\n" * (800 // reads))  # ~22 kB in all: over half the 4,096-token window
    read = {"tool_calls": [["read_file", {"path": str(big)}]]}
    first = script(tmp_path, [read] * reads + ["read it"], "first.json")
    out = run_with("run", "--api-mode", "scripted", "--base-url", first, "-t", "file", "--json", "read big.txt")
    assert out.returncode == 0, out.stderr
    session = json.loads(out.stdout)["session_id"]
    out = run_with("run", "--api-mode", "scripted", "--base-url", script(tmp_path, ["and again"], "second.json"),
                   "-t", "file", "--json", "--resume", session, "what was in it?")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["session_id"] != session  # continued after compression, in a linked session
    return result


def test_context_tuner_an_engine_wrapping_a_context_compressor_compresses(run_with, published, hermes_home,
                                                                          tmp_path):
    import shutil

    # its installer copies this shim into hermes-agent's context_engine plugin folder; the same
    # category folder under $HERMES_HOME/plugins is where hermes-compat finds it
    shutil.copytree(published / "hermes_context_tuner" / "hermes_engine",
                    hermes_home / "plugins" / "context_engine" / "context-tuner")
    (hermes_home / "config.yaml").write_text(
        "plugins:\n  enabled: [context_engine/context-tuner]\ncontext:\n  engine: context-tuner\n"
        "model_context_length: 4096\n")
    # hermes' ContextCompressor defaults (it builds one with a model only) protect the last 20 messages
    result = _read_a_big_file_then_resume(run_with, tmp_path, reads=12)
    tools = [m["content"] for m in result["messages"] if m["role"] == "tool"]
    assert tools[0].startswith("[tool result pruned to save context:"), tools
    assert (hermes_home / "context_tuner").is_dir()  # its audit journal, written beside the delegate's work


def test_llmwiki_a_memory_provider_class_writes_to_its_vault(run_with, hermes_home, tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (hermes_home / "config.yaml").write_text(
        f"plugins:\n  enabled: [llmwiki]\nmemory:\n  provider: llmwiki\n  llmwiki:\n    vault_path: {vault}\n")
    home = dot_hermes(tmp_path, hermes_home)  # it reads ~/.hermes/config.yaml whatever HERMES_HOME says
    steps = [{"tool_calls": [["append_note", {"section": "Garden", "title": "Beans",
                                              "content": "Climbing beans need a trellis."}]]}, "noted"]
    out = run_with("run", "--api-mode", "scripted", "--base-url", script(tmp_path, steps), "--json",
                   "remember: beans need a trellis", env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    tool = [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"][0]
    assert tool.get("status") == "ok", (tool, out.stderr)
    written = "".join(p.read_text() for p in vault.rglob("*.md"))
    assert "Climbing beans need a trellis." in written


def test_dreaming_a_tool_plugin_reads_the_memory_files(run_with, hermes_home, tmp_path):
    memories = hermes_home / "memories"
    memories.mkdir()
    (memories / "MEMORY.md").write_text("The user grows climbing beans.\n")
    assert run_with("plugins", "enable", "hermes-dreaming").returncode == 0
    steps = [{"tool_calls": [["dreaming_get_state", {}]]}, "state read"]
    out = run_with("run", "--api-mode", "scripted", "--base-url", script(tmp_path, steps), "-t", "dreaming",
                   "--json", "dream", env={"HOME": str(dot_hermes(tmp_path, hermes_home))})  # ~/.hermes/memories
    assert out.returncode == 0, out.stderr
    state = json.loads([m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"][0])
    assert "climbing beans" in json.dumps(state["memory_md"]), state
