"""Built-in plugin core-tools: shell and file tools for real work on this machine.

* ``terminal``: run a shell command in its own process group, with a timeout
  that kills the whole group, output clipped head+tail; or (``background``)
  start one that keeps running, which ``process`` polls, types into, waits for and kills
  (:mod:`plugins.core_tools.processes`);
* ``read_file``, ``write_file``, ``patch``, ``search_files``: files, path-scoped
  so the kernel can run them in parallel when their paths do not overlap;
* ``execute_code``: a Python script that calls those tools as functions
  (:mod:`plugins.core_tools.code`).

Settings (all optional): ``terminal.cwd`` (where the tools start; a ``cd`` carries over to the next command and
the file tools' relative paths), ``terminal.timeout`` (default 120 s),
``terminal.max_timeout`` (600 s), ``terminal.max_output_chars`` (50,000),
``file.max_read_chars`` (100,000), ``file.max_read_bytes`` (20 MB), ``file.max_read_lines`` (2,000),
``file.max_line_chars`` (2,000),
``file.max_search_files`` (50,000 files per search), ``code_execution.timeout``
(300 s), ``code_execution.max_tool_calls`` (50), ``code_execution.tools``, ``code_execution.python``; the
sandbox's
``sandbox.mode``, ``sandbox.network``, ``sandbox.writable`` and
``sandbox.required`` (:mod:`plugins.core_tools.sandbox`; ``hermes sandbox``
says whether one can start here).
"""


from __future__ import annotations

from kernel import hookimpl
from plugins.core_tools import sandbox
from plugins.core_tools.code import CALLABLE, DEFAULT_TIMEOUT as CODE_TIMEOUT, MAX_TOOL_CALLS
from plugins.core_tools.files import (DEFAULT_READ_LINES, MAX_FILES_SCANNED, MAX_LINE_CHARS, MAX_READ_BYTES,
                                      MAX_READ_CHARS, make_patch, make_read_file, make_search_files, make_write_file)
from plugins.core_tools.terminal import DEFAULT_TIMEOUT, MAX_OUTPUT_CHARS, MAX_TIMEOUT, live_group_members, make_terminal

CHANGING = ("write_file", "patch")  # the file tools whose failures the answer names (plugins.core_tools.verify)
CHANGE_CHECK = "display.file_mutation_verifier"  # hermes-agent's key of that check
FAILED_CHANGES = "core-tools.failed-changes"  # agent.state: (turn id, {path: (tool, why)}) of this turn's

__all__ = ["live_group_members", "make_patch", "make_read_file", "make_search_files", "make_terminal", "make_tools",
           "make_write_file"]



def make_tools(config=None) -> list:
    from plugins.core_tools.code import make_execute_code
    from plugins.core_tools.processes import make_process

    return [make_terminal(config), make_process(config), make_read_file(config), make_write_file(config),
            make_patch(config), make_search_files(config), make_execute_code(config)]


@hookimpl
def register_config(declare):
    declare("terminal.timeout", float, DEFAULT_TIMEOUT, "seconds a terminal command may run unless it asks for more", minimum=1)
    declare("terminal.max_timeout", float, MAX_TIMEOUT, "the most seconds a terminal command may ask for", minimum=1)
    declare("terminal.cwd", str, "", "the folder terminal commands and relative file paths start in (empty or .: "
            "where hermes started); a command's cd carries over to the next")
    declare("terminal.auto_source_bashrc", bool, True, "a session's first command takes what ~/.profile, "
            "~/.bash_profile and ~/.bashrc export (PATH of nvm, pyenv): as a login shell, for hermes as a service")
    declare("terminal.shell_init_files", list[str], [], "the files to take the exports of instead of those three")
    declare("terminal.max_output_chars", int, MAX_OUTPUT_CHARS, "characters of a command's output the model reads", minimum=1000)
    declare("file.max_read_chars", int, MAX_READ_CHARS, "characters read_file returns at most", minimum=1000)
    declare(CHANGE_CHECK, bool, True, "a write_file or patch of a turn that failed, and was not made after all, is "
            "named under the answer (hermes-agent's; HERMES_FILE_MUTATION_VERIFIER wins)")
    declare("file.max_read_bytes", int, MAX_READ_BYTES, "the largest file read_file opens, in bytes", minimum=1)
    declare("file.max_read_lines", int, DEFAULT_READ_LINES, "lines one read_file returns at most (and by default)",
            minimum=1)
    declare("file.max_line_chars", int, MAX_LINE_CHARS, "characters of one line read_file shows (the rest: cut)",
            minimum=100)
    declare("file.max_search_files", int, MAX_FILES_SCANNED, "files search_files looks through at most", minimum=1)
    declare("code_execution.timeout", float, CODE_TIMEOUT, "seconds an execute_code script may run", minimum=1)
    declare("code_execution.max_tool_calls", int, MAX_TOOL_CALLS, "tool calls one execute_code script may make", minimum=0)
    declare("code_execution.tools", list[str], list(CALLABLE), "the tools execute_code scripts may call (of those "
            "the agent offers)")
    declare("code_execution.python", str, "", "the Python of execute_code scripts (default: the active virtual "
            "environment's, else hermes' own)")
    declare("code_execution.mode", str, "project", "where execute_code scripts run: project (the working folder, "
            "code_execution.python) or strict (hermes' own Python in a temporary folder of their own; hermes-agent's)",
            choices=("project", "strict"))
    declare("sandbox.mode", (str, bool), "workspace-write", "where terminal commands may write: workspace-write (the "
            "working folder and a private /tmp), read-only (only the private /tmp) or off (no sandbox)",
            choices=(*sandbox.MODES, False))  # YAML reads a bare off as false
    declare("sandbox.network", bool, True, "whether sandboxed commands have the network")
    declare("sandbox.writable", list[str], [], "more folders sandboxed commands may write to")
    declare("sandbox.required", bool, False, "refuse to run commands when no sandbox can start (no bwrap)")


@hookimpl
def register_hookspecs(add):
    from plugins import core_tools_hookspecs

    add(core_tools_hookspecs)


@hookimpl
def register_commands(cli):
    from plugins.core_tools.command import sandbox_command

    cli.add_command(sandbox_command)


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    from kernel.types import ToolError
    from plugins.core_tools.sandbox import Sandbox
    from plugins.doctor.hookspecs import FAIL, OK, WARN, Check

    try:
        box = Sandbox.from_config(agent.config)
    except ToolError as exc:
        return [Check("sandbox", FAIL, str(exc))]
    said = box.describe().replace("It will", "Tool commands will", 1)  # what `hermes sandbox` says
    status = OK if box.mode == "off" or box.why_not() is None else FAIL if box.required else WARN
    return [Check("sandbox", status, said)]


@hookimpl
def register_tools(register, config):
    for tool in make_tools(config):
        register(tool)


@hookimpl
def on_session_start(reason, agent):
    if reason in ("new", "resume"):  # another conversation (/new, /resume): its shell starts afresh, as the prompt says
        from plugins.tool_args import EXPORTED, WORKING_FOLDER

        for key in (WORKING_FOLDER, EXPORTED):
            agent.state.pop(key, None)
        if reason == "resume":  # ... in the folder its commands had moved to, which its history tells the model
            from plugins.core_tools.shell import last_folder

            folder = last_folder(agent.messages)
            if folder:
                agent.state[WORKING_FOLDER] = folder


@hookimpl
def post_tool_call(call, outcome, agent):
    if call.name in CHANGING:  # (the check's module loads when a file tool has run)
        from plugins.core_tools.verify import note

        note(call, outcome, agent)


@hookimpl
def transform_llm_output(response_text, agent):
    """A file change of this turn that failed, and was not made after all, is named under the answer."""
    if FAILED_CHANGES in agent.state:
        from plugins.core_tools.verify import footer

        return footer(response_text, agent)


@hookimpl
def on_session_finalize(reason, agent):
    if reason == "shutdown":  # the agent closes: its background commands end
        from plugins.core_tools.processes import stop_all

        stop_all(agent)


@hookimpl
def register_toolsets(register):
    register("core", ["terminal", "file"], description="Shell and files: terminal, read/write/patch/search files")
    register("safe", ["read_file", "search_files"], description="Read-only: read and search files, no shell, no writes")
