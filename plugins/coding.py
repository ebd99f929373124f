"""Built-in plugin coding: in a code project, the system prompt says how to work in one and what the project is.

When chat, ``hermes run`` or an editor (ACP) starts in a code project (a folder with a manifest such as
``pyproject.toml``, ``package.json`` or ``Makefile`` up to six levels above it, or a git repository holding source
files), the system prompt gets a ``coding`` layer: a short brief on working in a codebase (read before changing, edit
through the tools, run the project's checks before saying it is done, leave history and credentials alone) and a
snapshot of the workspace taken at the session's start: its root, the branch and how far it is from its upstream,
what is changed, the last commits, the manifests and package managers, and the commands that check it (``pytest``,
``npm run test``, ``make test`` ...). A model otherwise spends its first tool calls learning these.

Settings (hermes-agent's): ``agent.coding_context``: ``auto`` (in a code project, on those surfaces), ``on``
(everywhere), ``off``, or ``focus``: ``auto``, and requests offer only the ``coding`` toolset's tools and MCP
servers' unless toolsets were chosen; ``agent.coding_instructions``: standing instructions of the user's, added to
the layer (a string or a list). ``prompt.disabled_layers: [coding]`` leaves the layer out too.

git runs with a repository's own ``core.fsmonitor`` turned off (a cloned repository could name a program there,
which ``git status`` would run) and without taking the index lock (the user's own git commands do not fail beside
it); what git has not said within two seconds is left out of the snapshot."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Optional

from kernel import hookimpl
from plugins.prompt.project import is_file

POSTURE = "coding.posture"  # agent.state: True once the layer was given (focus narrows the requests then)
SNAPSHOT = "coding.snapshot"  # agent.state: (root, the workspace's snapshot) the layer gave
SURFACES = ("cli", "run", "acp", "")  # chat, hermes run, an editor, an embedder; not the API server, cron, a gateway
MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "package.json", "tsconfig.json",
             "deno.json", "Cargo.toml", "go.mod", "pom.xml", "build.gradle", "build.gradle.kts", "Gemfile",
             "composer.json", "mix.exs", "pubspec.yaml", "CMakeLists.txt", "Makefile", "Dockerfile")
MARKERS = (*MANIFESTS, "AGENTS.md", "CLAUDE.md", ".cursorrules", ".hermes.md", "HERMES.md")
LOCKFILES = (("uv.lock", "uv"), ("poetry.lock", "poetry"), ("Pipfile.lock", "pipenv"), ("pnpm-lock.yaml", "pnpm"),
             ("bun.lockb", "bun"), ("bun.lock", "bun"), ("yarn.lock", "yarn"), ("package-lock.json", "npm"))
TARGETS = ("test", "tests", "check", "lint", "typecheck", "build", "fmt", "format")  # scripts and make targets
SOURCE = frozenset(".py .pyi .ipynb .js .jsx .ts .tsx .mjs .cjs .go .rs .java .kt .scala .rb .php .c .h .cc .cpp "
                   ".hpp .cs .swift .m .dart .ex .exs .lua .sh .sql .vue .svelte .r .jl .hs .clj .erl .pl .zig".split())
SKIPPED = frozenset({"node_modules", "venv", "__pycache__", "dist", "build", "target", "vendor"})
GIT_TIMEOUT = 2.0
SMALL = 256 * 1024  # a manifest read for its scripts; a bigger one is not a manifest anyone wrote by hand

BRIEF = """# Working in a codebase

You are working in the user's code project.
- Look before you change: read the files involved and find a name's definition and uses rather than guessing its \
shape. Reads that do not depend on each other can go in one step.
- Use only what the project has: check its manifest and how neighbouring files import before relying on a library; \
never make up a file, a function or an option.
- Change files through the tools (patch, write_file) rather than showing code in your answer, and show code only \
when asked. Follow the project's style and its context files; change only what the task needs.
- When a patch does not apply, read the file again before the next try; after two failures on one place, rewrite \
the enclosing function whole.
- Check your work before you call it done: run the project's tests, linter or build (the Verify commands, when \
listed) and read what they say. The terminal keeps its folder and exports from call to call.
- Do not commit, push or rewrite history unless asked, and leave .env files and credentials alone.
- Answer briefly: the change or the finding first, and path:line references instead of whole files."""


@hookimpl
def register_config(declare):
    declare("agent.coding_context", (str, bool), "auto", "the coding layer of the system prompt (a brief and the "
            "workspace's snapshot): auto (chat, run and editors in a code project), on, off, or focus (auto, and "
            "requests offer only the coding toolset's and MCP servers' tools unless toolsets are chosen)",
            choices=("auto", "focus", "on", "off", True, False))
    declare("agent.coding_instructions", (str, list), "", "the user's standing instructions, added to the coding "
            "layer (\"run the linter before each commit\"); a list is one per line")


@hookimpl
def register_toolsets(register):
    register("coding", ["terminal", "process", "read_file", "write_file", "patch", "search_files", "execute_code",
                        "web_search", "web_extract", "vision_analyze", "skills_list", "skill_view", "skill_manage",
                        "todo", "memory", "session_search", "clarify", "delegate_task", "browser"],
             description="What work in a codebase needs: files, terminal, code, web, skills, todo, memory, clarify, "
                         "delegation, browser")


def _mode(config: Any) -> str:
    raw = config.get("agent.coding_context") if config is not None else "auto"
    return {True: "on", False: "off"}.get(raw, str(raw or "auto").strip().lower())


@hookimpl(optionalhook=True)  # brought by the prompt plugin
def prompt_layer(agent):
    from plugins.prompt.layers import working_folder

    config = getattr(agent, "config", None)
    mode = _mode(config)
    if mode == "off":
        return None
    cwd = working_folder(config)
    root = project_root(cwd)
    if mode != "on" and (root is None or (getattr(agent, "platform", "") or "") not in SURFACES):
        return None
    agent.state[POSTURE] = True
    parts = [BRIEF]
    if root is not None:  # a subagent takes its parent's (a batch of them ran git once each, to say the same)
        parent = getattr(agent, "parent", None)
        kept = parent.state.get(SNAPSHOT) if parent is not None else None
        agent.state[SNAPSHOT] = kept if kept and kept[0] == root else (root, snapshot(root))
        parts.append(agent.state[SNAPSHOT][1])
    instructions = config.get("agent.coding_instructions") if config is not None else ""
    if isinstance(instructions, list):
        instructions = "\n".join(str(line) for line in instructions if str(line).strip())
    if str(instructions or "").strip():
        parts.append("The user's standing instructions (agent.coding_instructions):\n" + str(instructions).strip())
    return {"name": "coding", "text": "\n\n".join(parts), "source": str(root or cwd), "after": "context"}


@hookimpl
def pre_api_request(call, agent):
    """``focus``: a request of the conversation offers only the coding toolset's tools and MCP servers' (and tool
    search's), unless the user chose toolsets."""
    if call.aux_task or not agent.state.get(POSTURE) or agent.toolsets is not None \
            or _mode(agent.config) != "focus" or not call.request.tools:
        return
    kept = agent.host.registry.expand_toolsets(["coding"]) | {"tool_search", "tool_call"}
    call.request.tools = [s for s in call.request.tools
                          if s["name"] in kept or getattr(agent.tools.get(s["name"]), "plugin", "") == "mcp"]


def project_root(cwd: Path) -> Optional[Path]:
    """The code project ``cwd`` is in: the nearest folder (six levels up at most) with a manifest or an agent's
    context file, else the git repository holding it when that holds source files. The home folder and the temporary
    folder are never one (a Makefile or a repository of dotfiles there says nothing of the work)."""
    import tempfile

    from plugins.prompt.project import git_root

    cwd = cwd.resolve()
    never = {Path.home().resolve(), Path(tempfile.gettempdir()).resolve()}
    for folder in [cwd, *cwd.parents][:7]:
        if folder not in never and any(is_file(folder / name) for name in MARKERS):
            return folder
    repository = git_root(cwd)
    if repository is not None and repository not in never and _holds_source(repository):
        return repository
    return None


def _holds_source(root: Path, most: int = 500) -> bool:
    """Whether ``root`` or a folder just below it holds a source file; a repository of notes is not a code project.
    At most ``most`` entries are looked at."""
    seen, folders = 0, [(root, True)]
    while folders:
        folder, top = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > most:
                return False
            try:
                if entry.is_file() and os.path.splitext(entry.name)[1].lower() in SOURCE:
                    return True
                if top and entry.is_dir() and not entry.name.startswith(".") and entry.name not in SKIPPED:
                    folders.append((Path(entry.path), False))
            except OSError:
                continue
    return False


def _git(root: Path, *commands: tuple) -> list:
    """git's output of each command in ``root``, or "" (no git, not a repository, too slow). The commands run side
    by side, all within :data:`GIT_TIMEOUT`: a huge repository delays a start by that at most."""
    from plugins.bounded import run_within

    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    done = run_within([["git", "-c", "core.fsmonitor=false", "-C", str(root), *args] for args in commands],
                      GIT_TIMEOUT, env)
    return [ran[1].strip() if ran and ran[0] == 0 else "" for ran in done]


def snapshot(root: Path) -> str:
    """The workspace as the session starts: git's view (branch, changes, last commits) and the project's facts."""
    from plugins.prompt.project import git_root, scan

    lines = ["# Workspace", "", "At the session's start (run git status before relying on it):", f"- Root: {root}"]
    repository = git_root(root)
    if repository is not None:
        status, log = _git(root, ("status", "--porcelain=2", "--branch"), ("log", "-3", "--format=%h %s"))
        head, upstream, ahead, counts = "", "", "", {"staged": 0, "modified": 0, "untracked": 0, "conflicted": 0}
        for line in status.splitlines():
            if line.startswith("# branch.head "):
                head = line.split(" ", 2)[2]
            elif line.startswith("# branch.upstream "):
                upstream = line.split(" ", 2)[2]
            elif line.startswith("# branch.ab "):
                plus, minus = line.split()[2:4]
                ahead = "" if plus == "+0" and minus == "-0" else f" (ahead {plus[1:]}, behind {minus[1:]})"
            elif line.startswith(("1 ", "2 ")):
                xy = line.split(" ", 2)[1]
                counts["staged"] += xy[0] != "."
                counts["modified"] += xy[1] != "."
            elif line.startswith("u "):
                counts["conflicted"] += 1
            elif line.startswith("? "):
                counts["untracked"] += 1
        if head:
            lines.append(f"- Branch: {'(detached HEAD)' if head == '(detached)' else head}"
                         + (f" -> {upstream}{ahead}" if upstream else ""))
        if status:
            changed = ", ".join(f"{n} {what}" for what, n in counts.items() if n)
            lines.append(f"- Status: {changed or 'clean'}")
        if "/worktrees/" in _small(repository / ".git"):  # a linked worktree's .git is a file naming its folder
            lines.append("- A linked worktree: branches and stashes are shared with the main one")
        if commits := log.splitlines():
            lines.append("- Last commits:")  # a subject that reads like an order to the agent is not repeated
            lines += [f"    {c[:100]}" if not scan(c) else f"    {c.split(' ')[0]} (subject withheld: it reads like "
                      "an instruction to the agent)" for c in commits]
    lines += facts(root)
    return "\n".join(lines)


def _small(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.stat().st_size <= SMALL else ""
    except OSError:
        return ""


def facts(root: Path) -> list:
    """The project's manifests with its package managers, and the commands that check it."""
    found = [name for name in MANIFESTS if is_file(root / name)]
    managers = list(dict.fromkeys(manager for lock, manager in LOCKFILES if is_file(root / lock)))
    checks = ["scripts/run_tests.sh"] if is_file(root / "scripts" / "run_tests.sh") else []
    if "package.json" in found:
        try:
            scripts = json.loads(_small(root / "package.json") or "{}").get("scripts") or {}
        except (ValueError, AttributeError):
            scripts = {}
        runner = next((m for m in managers if m in ("pnpm", "bun", "yarn", "npm")), "npm")
        checks += [f"{runner} run {name}" for name in TARGETS if isinstance(scripts, dict) and name in scripts]
    pyproject = _small(root / "pyproject.toml")
    if is_file(root / "pytest.ini") or "[tool.pytest" in pyproject or "[tool:pytest]" in _small(root / "setup.cfg") \
            or "[pytest]" in _small(root / "tox.ini"):
        checks.append("uv run pytest" if "uv" in managers else "pytest")
    if "Cargo.toml" in found:
        checks.append("cargo test")
    if "go.mod" in found:
        checks.append("go test ./...")
    if makefile := _small(root / "Makefile"):
        checks += [f"make {name}" for name in TARGETS if re.search(rf"^{name}\s*:", makefile, re.MULTILINE)]
    lines = [f"- Project: {', '.join(found)}" + (f" ({', '.join(managers)})" if managers else "")] if found else []
    return lines + ([f"- Verify: {'; '.join(dict.fromkeys(checks))}"] if checks else [])
