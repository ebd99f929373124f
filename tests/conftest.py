"""Shared fixtures: an isolated HERMES_HOME for every test, and ``make_agent``."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hermes.host.config import Config  # noqa: E402
from hermes.host.plugins import PluginHost  # noqa: E402
from kernel.agent import Agent  # noqa: E402
from kernel.types import ProviderConfig  # noqa: E402
from plugins_providers.scripted import scripted_plugin  # noqa: E402

# Most tests run `hermes` as a subprocess, which imports the project anew. With PYTHONDONTWRITEBYTECODE set (as some
# shells and CI machines do) each of them compiled every module of a fresh checkout again: a quarter of a second a
# process, a third of the suite's CPU. Their bytecode goes to a cache outside the tree instead.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    os.environ.setdefault("PYTHONPYCACHEPREFIX",
                          os.path.join(tempfile.gettempdir(), f"hermes-tests-pycache-{os.getuid()}"))

PROVIDER_FIELDS = ("model", "provider", "base_url", "api_mode", "api_key_env")


@pytest.fixture(autouse=True)
def hermes_home(tmp_path, monkeypatch):
    """Every test gets its own HERMES_HOME; no developer config leaks in."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in ("HERMES_PLUGINS", "HERMES_SAFE_MODE", "HERMES_TRACE_HOOKS", "HERMES_PROFILE", "OPENAI_API_KEY",
                "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENROUTER_API_KEY",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "HERMES_LANGFUSE_SECRET_KEY"):
        monkeypatch.delenv(var, raising=False)
    return home


TITLES_OFF = "auxiliary:\n  title_generation:\n    enabled: false\n"


def no_titles(home: Path) -> None:
    """A chat's first answer asks the model for a title (auxiliary.title_generation): off, for a test that counts the
    requests a wire server gets or scripts each answer (appended: a config.yaml with an ``auxiliary`` block of its
    own writes ``title_generation`` into that instead)."""
    with (home / "config.yaml").open("a") as config:
        config.write(TITLES_OFF)


@pytest.fixture
def make_agent():
    """``make_agent(*plugins, script=[...], config={...}, callbacks=(), **agent_kwargs)``

    Builds a PluginHost from the scripted provider plus the given plugin
    objects and returns an Agent on ``api_mode="scripted"``. The scripted
    provider is ``agent.scripted`` (its ``requests`` list records every call).
    """
    agents = []

    def factory(*plugins, script=(), config=None, callbacks=(), **kwargs):
        cfg = config if isinstance(config, Config) else Config(dict(config or {}))
        scripted = scripted_plugin(script)
        host = PluginHost.from_objects([scripted, *plugins], cfg)
        kwargs.setdefault("api_mode", "scripted")
        kwargs.setdefault("model", "test-model")
        provider = ProviderConfig.configured(cfg, **{k: kwargs.pop(k) for k in PROVIDER_FIELDS if k in kwargs})
        stream, session_id = kwargs.pop("stream", None), kwargs.pop("session_id", None)
        if "max_turns" in kwargs:
            kwargs["budget"] = kwargs.pop("max_turns")
        agent = Agent(host, provider, callbacks=callbacks, **kwargs)
        if stream is not None:
            agent.stream = stream
        if session_id is not None:
            agent.new_session(resume=session_id)
        agent.scripted = scripted.provider
        agents.append(agent)
        return agent

    yield factory
    for agent in agents:
        agent.close()


class Recorder:
    """A callback plugin that records every hook call it implements."""

    def __init__(self):
        self.calls = []

    def names(self):
        return [name for name, _ in self.calls]

    def of(self, name):
        return [kw for n, kw in self.calls if n == name]


def _recording(hook_name):
    from kernel import hookimpl

    def method(self, **kwargs):
        self.calls.append((hook_name, kwargs))

    method.__name__ = hook_name
    return hookimpl(specname=hook_name)(method)


# the kernel's specs and those the built-in plugins add through register_hookspecs
SPEC_MODULES = ("kernel.hookspecs", "hermes.host.hookspecs", "hermes.cli.hookspecs", "plugins.commands.hookspecs",
                "plugins.core_tools_hookspecs", "plugins.agent_tools_hookspecs",
                "plugins_memory.hookspecs", "plugins.approval_hookspecs", "plugins.terminal.hookspecs",
                "plugins.prompt.hookspecs", "plugins.skills.hookspecs")


def spec_of(name):
    import importlib

    for module in SPEC_MODULES:
        spec = getattr(importlib.import_module(module), name, None)
        if spec is not None and hasattr(spec, "hermes_spec"):
            return spec
    raise AttributeError(f"no hook spec named {name!r}")


def make_recorder_class(hook_names):
    """A Recorder subclass implementing ``hook_names`` with every keyword."""
    import inspect

    namespace = {}
    for name in hook_names:
        spec = spec_of(name)
        params = [p for p in inspect.signature(spec).parameters]
        src = f"def {name}(self, {', '.join(params)}):\n    self.calls.append(({name!r}, dict({', '.join(f'{p}={p}' for p in params)})))\n"
        scope: dict = {}
        exec(src, scope)  # noqa: S102 - builds a method with the spec's exact signature
        from kernel import hookimpl

        namespace[name] = hookimpl(scope[name])
    return type("RecorderPlugin", (Recorder,), namespace)


@pytest.fixture
def recorder():
    """``recorder(*hook_names)`` -> a callback object recording those hooks."""

    def build(*names):
        return make_recorder_class(names)()

    return build


class EchoTools:
    """Test tools: echo (parallel-safe), sleep (parallel-safe, records timing),
    write (path-scoped), ask (interactive), boom (raises), aecho (async)."""

    __name__ = "echo-tools"

    def __init__(self):
        import threading

        self.events = []
        self.lock = threading.Lock()

    def _record(self, what):
        import time

        with self.lock:
            self.events.append((what, time.monotonic()))

    def register_tools(self, register):
        import asyncio
        import time

        from kernel.types import Tool

        obj = {"type": "object", "properties": {}}

        def echo(args, ctx):
            return {"echo": args.get("text")}

        def sleep(args, ctx):
            self._record(("start", args["id"]))
            time.sleep(float(args.get("seconds", 0.1)))
            self._record(("end", args["id"]))
            return {"slept": args["id"]}

        def write(args, ctx):
            self._record(("write", args["path"]))
            time.sleep(0.05)
            return "written"

        def boom(args, ctx):
            raise RuntimeError("kaboom")

        async def aecho(args, ctx):
            await asyncio.sleep(0.01)
            return {"async": args.get("text")}

        register(Tool("echo", "Echo text", obj, echo, toolset="test", parallel_safe=True))
        register(Tool("sleep", "Sleep", obj, sleep, toolset="test", parallel_safe=True))
        register(Tool("write", "Write", obj, write, toolset="test", parallel_safe=True, path_arg="path"))
        register(Tool("ask", "Ask", obj, echo, toolset="test", parallel_safe=True, interactive=True))
        register(Tool("boom", "Boom", obj, boom, toolset="test"))
        register(Tool("aecho", "Async echo", obj, aecho, toolset="test"))


def _hookimpl_register_tools():
    from kernel import hookimpl

    EchoTools.register_tools = hookimpl(EchoTools.register_tools)


_hookimpl_register_tools()


@pytest.fixture
def echo_plugin():
    return EchoTools()


def sandboxed() -> bool:
    """Can a sandbox start on this machine (the README's test command installs bubblewrap)?"""
    import shutil

    from plugins.core_tools.sandbox import unavailable

    return unavailable(shutil.which("bwrap")) is None


def pip_from_index(*args, what: str, timeout: float = 300):
    """``pip ARGS`` for a test that needs the package index (marked ``network``): no retries and a short
    connect timeout, so an unreachable index is one clear failing line, not minutes of pip's retry noise."""
    import re
    import subprocess

    done = subprocess.run([sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check",
                           "--retries", "0", "--timeout", "20"], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if re.match(r"\s*(ERROR|error)\b", line)]
        pytest.fail(f"{what} needs the package index and pip failed: {(lines or [done.stderr.strip()])[-1][:300]} "
                    "(pytest -m 'not network' leaves such tests out)", pytrace=False)
    return done


def installed_and_tested(package, site, what: str):
    """pip-install a plugin package (setuptools from the index builds it) into ``site``, then run its own tests
    there as its author would (hermes on the path, no HERMES_HOME): the finished pytest process."""
    import subprocess

    pip_from_index("install", "--no-deps", "--target", str(site), str(package), what=what)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env.pop("HERMES_HOME", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          capture_output=True, text=True, cwd=package, env=env, timeout=300)


def hermes_command() -> list:
    """How users run hermes: the console script next to this interpreter."""
    script = Path(sys.executable).parent / "hermes"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "hermes.cli"]


@pytest.fixture
def hermes(hermes_home):
    """``hermes(*args, env={}, input=None, timeout=60, cwd=None)`` runs the CLI as a subprocess."""
    import subprocess

    def run(*args, env=None, input=None, timeout=60, cwd=None):
        full_env = dict(os.environ)
        full_env["HERMES_HOME"] = str(hermes_home)
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), full_env.get("PYTHONPATH", "")]))
        full_env.update(env or {})
        return subprocess.run(hermes_command() + [str(a) for a in args], capture_output=True, text=True,
                              env=full_env, input=input, timeout=timeout, cwd=cwd)

    return run


class Approver:
    """A callback answering the approval question (the gate fails closed without one);
    ``asked`` records (tool_name, message, rule_key) of every question."""

    __name__ = "approver"

    def __init__(self, answer):
        self.answer, self.asked = answer, []

    def approve_tool_call(self, tool_name, args, message, rule_key):
        self.asked.append((tool_name, message, rule_key))
        return self.answer


def _hookimpl_approver():
    from kernel import hookimpl

    Approver.approve_tool_call = hookimpl(Approver.approve_tool_call)


_hookimpl_approver()


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 now (for a server a test starts)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for this test session (see tests/postgres_server.py); with none installed,
    a failure that says how to get it (never a skip: the README's test command installs it)."""
    from tests.postgres_server import PostgresServer, bin_dir

    if bin_dir() is None:
        pytest.fail("PostgreSQL is not installed here (no initdb): run scripts/install_test_system_packages.sh")
    server = PostgresServer(free_port()).start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server, request):
    """The URL of a fresh, empty database on :func:`postgres_server`, for this test alone."""
    import re

    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:40] + f"_{os.getpid()}"
    return postgres_server.create_database(name)


def wait_until(ready, proc=None, timeout: float = 60.0, every: float = 0.02) -> None:
    """Poll ``ready()`` until it is true; ``proc`` ending first, or the timeout, fails the test."""
    import time

    deadline = time.monotonic() + timeout
    while not ready():
        assert proc is None or proc.poll() is None, proc.stderr.read() if proc.stderr else "the process ended"
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(every)


def kill_9(proc) -> None:
    """``kill -9`` the process and reap it."""
    import signal

    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


# --- hermes as installed, with this worktree's entry points and a test tools plugin (sessions, batch, durable)

@pytest.fixture
def home(hermes_home):
    """The test's HERMES_HOME; stores opened through the plugin are closed afterwards."""
    yield hermes_home
    from plugins.sessions import close_stores

    close_stores()


@pytest.fixture
def child_env(home):
    """Environment for a child Python that imports this worktree."""
    env = dict(os.environ)
    env["HERMES_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


SLOW_TOOL_PLUGIN = '''
"""Test-only tools for the CLI tests of sessions, batch and durable runs."""
import time

from kernel import hookimpl
from kernel.types import Tool


def _slow(args, ctx):
    time.sleep(float(args.get("seconds", 0.05)))
    return {"step": args.get("step"), "pad": "p" * 5000}


def _maybe_crash(args, ctx):
    import os

    if "CRASH" in ctx.agent.messages[0]["content"]:  # the process ends mid-turn, as a segfault would end it
        os._exit(3)
    return "fine"


def _append(args, ctx):
    """Append a line to a file: the side effect a durable turn must not repeat. While ``hold`` exists it
    waits first (a test kills the process meanwhile); ``started`` is appended to as it begins."""
    import os

    if args.get("started"):
        with open(args["started"], "a") as f:
            f.write(args["text"] + "\\n")
    while args.get("hold") and os.path.exists(args["hold"]):
        if ctx.agent.interrupted:  # as a built-in tool does: an interrupt ends the wait, nothing appended
            return "interrupted before appending " + args["text"]
        time.sleep(0.01)
    with open(args["path"], "a") as f:
        f.write(args["text"] + "\\n")
    return "appended " + args["text"]


@hookimpl
def register_tools(register):
    register(Tool("append", "Append a line to a file", {"type": "object", "properties": {}}, _append, toolset="effects"))
    register(Tool("append_parallel", "Append a line to a file, beside others", {"type": "object", "properties": {}},
                  _append, toolset="effects", parallel_safe=True))
    register(Tool("slow", "Wait a moment", {"type": "object", "properties": {}}, _slow, toolset="slow"))
    register(Tool("maybe_crash", "End the process if the prompt says CRASH", {"type": "object", "properties": {}},
                  _maybe_crash, toolset="crash"))
'''


def _entry_points() -> dict:
    """The worktree's declared ``hermes.plugins`` entry points, plus this plugin."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    eps = dict(data["project"].get("entry-points", {}).get("hermes.plugins", {}))
    if "plugins.sessions" not in eps.values():
        eps["sessions-sqlite"] = "plugins.sessions"
    eps["sessions-test-tools"] = "sessions_test_tools"
    return eps


@pytest.fixture
def hermes_sessions(home, tmp_path, child_env):
    """``hermes_sessions(*args, input=None)``: the real ``hermes`` command in a
    subprocess, with this plugin installed.

    A throwaway ``hermes-kernel`` dist-info first on the path declares this
    worktree's entry points (the shared venv's editable install describes
    main's), so the CLI discovers plugins exactly as an installed hermes does.
    """
    import subprocess

    site = tmp_path / "site"
    meta = site / "hermes_kernel-0.1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-kernel\nVersion: 0.1.0\n")
    lines = ["[hermes.plugins]"] + [f"{k} = {v}" for k, v in _entry_points().items()]
    (meta / "entry_points.txt").write_text("\n".join(lines) + "\n")
    (site / "sessions_test_tools.py").write_text(SLOW_TOOL_PLUGIN)
    env = dict(child_env)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    work = tmp_path / "cwd"
    work.mkdir()

    argv = hermes_command()

    def run(*args, input=None, timeout=60):
        return subprocess.run([*argv, *args], env=env, cwd=work, input=input,
                              capture_output=True, text=True, timeout=timeout)

    def start(*args):
        """The command in the background (stdout discarded), for a test that stops it."""
        return subprocess.Popen([*argv, *args], env=env, cwd=work, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)

    run.env = env
    run.argv = argv
    run.cwd = work
    run.start = start
    return run
