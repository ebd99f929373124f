"""The ``execute_code`` tool: a Python script the model writes, which calls hermes' tools as functions
(``from hermes_tools import terminal, read_file``). Many steps with logic between them cost one model call, and
only what the script prints comes back: ten pages read and filtered, not ten pages in the context.

The script runs as a terminal command does: its own process group, the sandbox where there is one, no keys in its
environment, a deadline (``code_execution.timeout``) and an interrupt that kill the whole group. Each tool call goes
back to hermes over a socket pair and runs as the model's own calls do (:func:`kernel.tools.execute_batch`: the
``pre_tool_call`` guards, the approval question, the after-hooks, key masking); at most
``code_execution.max_tool_calls`` per script. The approval plugin asks before a script runs at all: Python can do
what a command can without each command being asked about.
"""

from __future__ import annotations

import json
import os
import sys
import time
from types import SimpleNamespace

from kernel.types import Tool, ToolError
from plugins.tool_args import arg, check_args, setting, working_folder

# the tools a script may call unless code_execution.tools names others (those of them the agent offers): hermes-agent's
CALLABLE = ("terminal", "read_file", "write_file", "patch", "search_files", "web_search", "web_extract")
NOT_IN_SCRIPTS = {"terminal": {"background"}}  # a script's job would outlive it unseen
DEFAULT_TIMEOUT = 300
MAX_TOOL_CALLS = 50
MAX_ERROR_CHARS = 10_000

# What the child runs (``python -c``): the first line on the socket is the job, the ``hermes_tools`` module's
# source and the script; the script then runs as ``__main__`` with its own lines in its tracebacks.
BOOT = """\
import json, linecache, os, socket, sys, types
_sock = socket.socket(fileno=int(os.environ.pop("HERMES_TOOLS_FD")))
_channel = _sock.makefile("rwb")
_job = json.loads(_channel.readline())
_tools = types.ModuleType("hermes_tools")
_tools.__dict__.update(_channel=_channel)
exec(compile(_job["module"], "hermes_tools.py", "exec"), _tools.__dict__)
sys.modules["hermes_tools"] = _tools
linecache.cache["<script>"] = (len(_job["code"]), None, _job["code"].splitlines(True), "<script>")
sys.argv = ["<script>"]
_main = {"__name__": "__main__", "__builtins__": __builtins__}
import traceback  # prints the script's lines (the default hook reads files only) and not this frame
sys.excepthook = lambda kind, value, tb: traceback.print_exception(kind, value, tb.tb_next)
del json, linecache, os, socket, sys, types, _sock, _channel, _tools
exec(compile(_job.pop("code"), "<script>", "exec"), _main)
"""

MODULE_HEAD = '''"""hermes' tools, as functions: each runs the tool of its name in hermes and returns its result (a dict or
list when the result is JSON, else its text)."""
import json as _json
import threading as _threading

_lock = _threading.Lock()


class ToolRefused(Exception):
    """hermes did not run the call (not a tool scripts may call, or too many calls)."""


def _call(name, args):
    args = {key: value for key, value in args.items() if value is not None}
    with _lock:
        _channel.write(_json.dumps({"tool": name, "args": args}).encode() + b"\\n")
        _channel.flush()
        line = _channel.readline()
    if not line:
        raise ToolRefused("hermes closed the channel")
    reply = _json.loads(line)
    if "refused" in reply:
        raise ToolRefused(reply["refused"])
    try:
        return _json.loads(reply["result"])
    except ValueError:
        return reply["result"]
'''


def _stub(tool: Tool) -> str:
    """One function of ``hermes_tools``: the tool's name, its arguments (required ones first, then keywords)."""
    import keyword

    properties = tool.parameters.get("properties") or {}
    usable = [name for name in properties if name.isidentifier() and not keyword.iskeyword(name)
              and not name.startswith("_") and name not in NOT_IN_SCRIPTS.get(tool.name, ())]
    required = [name for name in tool.parameters.get("required") or [] if name in usable]
    params = required + [f"{name}=None" for name in usable if name not in required]
    names = ", ".join(f"{name!r}: {name}" for name in usable)
    return (f"\n\ndef {tool.name}({', '.join(params)}):\n    {tool.description!r}\n"
            f"    return _call({tool.name!r}, {{{names}}})\n")


def _python(config) -> str:
    """The interpreter of scripts: ``code_execution.python``, else the project's (an active virtual environment's,
    so its packages import), else hermes' own."""
    chosen = setting(config, "code_execution.python", "", str)
    if chosen:
        return chosen
    for root in (os.environ.get("VIRTUAL_ENV"), os.environ.get("CONDA_PREFIX")):
        candidate = os.path.join(root, "bin", "python") if root else ""
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return sys.executable


class _Channel:
    """hermes' end of the socket pair: reads the script's calls, runs each through the kernel, answers."""

    def __init__(self, sock, agent, ctx, most: int, names: tuple):
        self.sock, self.agent, self.ctx, self.most = sock, agent, ctx, most
        self.offered = {name: agent.tools[name] for name in names
                        if agent is not None and name in agent.tools and name != "execute_code"}
        self.buffer, self.calls, self.open, self.proc = b"", 0, True, None

    def module(self) -> str:
        return MODULE_HEAD + "".join(_stub(tool) for tool in self.offered.values())

    def pause(self, seconds: float) -> None:
        """Wait up to ``seconds`` for a call (or the script's end) and answer what came."""
        import select

        if not self.open:
            self.proc.wait(seconds)
            return
        if not select.select([self.sock], [], [], seconds)[0]:
            return
        try:
            chunk = self.sock.recv(1 << 16)
            self.buffer += chunk
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                self.sock.sendall(json.dumps(self.answer(line), ensure_ascii=False).encode() + b"\n")
        except OSError:  # it ended while hermes answered
            chunk = b""
        if not chunk:  # the script closed its end (it ended, or closed the socket): only its end is left to wait for
            self.open = False

    def answer(self, line: bytes) -> dict:
        from kernel.tools import execute_batch

        try:
            request = json.loads(line)
            name, args = request["tool"], request["args"]
        except (ValueError, KeyError, TypeError):
            return {"refused": "not a call hermes_tools sends"}
        if name not in self.offered:
            return {"refused": f"{name} is not a tool scripts may call here (they may: {', '.join(self.offered) or 'none'})"}
        if self.calls >= self.most:
            return {"refused": f"this script made {self.calls} tool calls, the most one may (code_execution.max_tool_calls)"}
        self.calls += 1
        ctx, turn = self.ctx, self.agent.turn
        call = {"id": f"{ctx.tool_call_id}.{self.calls}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
        turn = turn or SimpleNamespace(task_id=ctx.task_id, turn_id=ctx.turn_id, api_request_id=ctx.api_request_id,
                                       cut=False)
        return {"result": execute_batch(self.agent, [call], turn)[0]["content"]}


def make_execute_code(config=None) -> Tool:
    from plugins.core_tools.terminal import MAX_OUTPUT_CHARS

    timeout = setting(config, "code_execution.timeout", DEFAULT_TIMEOUT, float, 1)
    most = setting(config, "code_execution.max_tool_calls", MAX_TOOL_CALLS, int, 0)
    max_chars = setting(config, "terminal.max_output_chars", MAX_OUTPUT_CHARS, int, 1000)
    names = tuple(setting(config, "code_execution.tools", list(CALLABLE), list))

    def execute_code(args, ctx):
        import tempfile  # here: a command that never runs a script does not import it

        from plugins.core_tools.sandbox import Sandbox

        code = arg(check_args(args, "execute_code"), "code", str, tool="execute_code")
        if not code.strip():
            raise ToolError("execute_code: 'code' is empty")
        agent = getattr(ctx, "agent", None)
        box = Sandbox.from_config(config)
        strict = setting(config, "code_execution.mode", "project", str).strip().lower() == "strict"
        python = sys.executable if strict else _python(config)
        home = os.path.dirname(os.path.dirname(os.path.abspath(python)))  # its virtual environment, if it has one
        if strict:  # hermes' own Python in a folder of its own, gone afterwards (hermes-agent's isolation)
            with tempfile.TemporaryDirectory(prefix="hermes-code-") as here:
                return _run(box, python, home, here, code, agent, ctx)
        return _run(box, python, home, working_folder(agent, config), code, agent, ctx)  # as the terminal's paths

    def _run(box, python, home, here, code, agent, ctx):
        import socket
        import subprocess  # here: a command that never runs a script does not import them
        import tempfile

        from plugins.core_tools.terminal import read_output, process_environment, wait_or_stop

        argv, sandboxed = box.wrap([python, "-c", BOOT], here, readable=(home,))
        ours, theirs = socket.socketpair()
        channel = _Channel(ours, agent, ctx, most, names)
        env = {**process_environment(agent, config), "HERMES_TOOLS_FD": str(theirs.fileno()),
               "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"}
        with ours, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.monotonic()
            try:
                with theirs:
                    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=here,
                                            pass_fds=(theirs.fileno(),), start_new_session=True)
            except OSError as exc:
                raise ToolError(f"execute_code: cannot start {argv[0]}: {exc}") from None
            channel.proc = proc
            try:
                ours.sendall(json.dumps({"module": channel.module(), "code": code}).encode() + b"\n")
            except OSError:
                pass  # it ended before reading its job: its exit code and errors say why
            stopped = wait_or_stop(proc, started + timeout, agent, channel.pause)
            result = {"exit_code": proc.returncode, "output": read_output(out, max_chars),
                      "tool_calls": channel.calls}
            if errors := read_output(err, MAX_ERROR_CHARS):
                result["errors"] = errors  # read_output clipped it (head and tail)
        if sandboxed:
            result["sandbox"] = box.mode
        if stopped == "timeout":
            result.update(timed_out=True, note=f"the script ran past {timeout:g} s (code_execution.timeout) and was "
                                               "killed with everything it started")
        elif stopped == "interrupted":
            result.update(interrupted=True, note="interrupted before it finished; the script was killed")
        return result

    return Tool(
        name="execute_code",
        description=(
            "Run a Python script that calls your tools as functions, for work of several tool calls with logic "
            "between them (loop over files or pages, filter big outputs, branch on a result): only what it prints "
            "comes back to you. `from hermes_tools import terminal, read_file, ...`: each of "
            f"{', '.join(names)} that you have is a function of the tool's name taking its arguments (required "
            "ones may be positional) and returning its result: a dict when the result is JSON (an 'error' key when "
            "it failed), else its text. terminal() runs in the foreground only. "
            f"At most {most} tool calls and {timeout:g} s per script; output over {max_chars} characters keeps its "
            "beginning and end; stderr (a traceback) comes back as 'errors'. It runs in the working folder with the "
            "project's Python (its virtual environment's packages import), in the sandbox where there is one. "
            "A person may be asked before it runs. For one tool call, call the tool instead."
        ),
        parameters={
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The Python script. Print what you want back."}},
            "required": ["code"],
        },
        handler=execute_code,
        toolset="code_execution",
    )
