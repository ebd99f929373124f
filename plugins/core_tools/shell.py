"""What a session's shell keeps from one terminal command to the next, beside the folder and the exported variables
themselves (:mod:`plugins.tool_args`): the variables ``env -0`` printed, the user's shell files a session's first
command takes them from, and the folder a resumed session's history left its commands in."""

from __future__ import annotations

import logging
import os

from plugins.tool_args import EXPORTED, remember_exports, setting

log = logging.getLogger("hermes.plugins.tools")
_said: set = set()
MAX_ENVIRONMENT = 1 << 20  # bytes of a command's exported variables read to carry over


def environment(listed: bytes) -> dict:
    """The variables ``env -0`` printed."""
    return dict(os.fsdecode(entry).partition("=")[::2] for entry in listed.split(b"\0") if b"=" in entry)


def init_files(config) -> list:
    """The files a session's first command sources the variables of: hermes-agent's ``terminal.shell_init_files``,
    else (``terminal.auto_source_bashrc``) ~/.profile, ~/.bash_profile and ~/.bashrc, those that exist."""
    named = setting(config, "terminal.shell_init_files", [], list)
    if not named and setting(config, "terminal.auto_source_bashrc", True, bool):
        named = ["~/.profile", "~/.bash_profile", "~/.bashrc"]
    return [path for path in (os.path.expandvars(os.path.expanduser(str(n))) for n in named) if os.path.isfile(path)]


def source_init_files(agent, config, argv_of, env: dict) -> None:
    """Before a session's first command: what the user's shell files export (PATH of nvm, pyenv, a venv) carries over
    to its commands, as in a login shell, for a hermes started without one (a service, cron). Keys they export stay
    out; a file that fails, exits or hangs (10 s) leaves the variables as they were, said once."""
    import shlex
    import subprocess

    from hermes.host.config import is_secret_name

    agent.state[EXPORTED] = {}
    files = init_files(config)
    if not files:
        return
    sources = "; ".join(f". {shlex.quote(path)}" for path in files)
    try:
        done = subprocess.run(argv_of(f"{{ {sources}; }} >/dev/null 2>&1 </dev/null; env -0"), env=env,
                              capture_output=True, timeout=10, start_new_session=True)
        ended = environment(done.stdout)
        if done.returncode or not ended:
            raise OSError(f"it ended with status {done.returncode}")
    except (OSError, subprocess.SubprocessError) as exc:
        if files[0] not in _said:
            _said.add(files[0])
            log.warning("terminal: sourcing %s failed (%s); commands run without what it exports "
                        "(terminal.auto_source_bashrc: false stops trying)", ", ".join(files), exc)
        return
    remember_exports(agent, env, {k: v for k, v in ended.items() if k in env or not is_secret_name(k)})


def last_folder(messages: list) -> "str | None":
    """The folder the terminal's results in ``messages`` last said commands moved to (``workdir``), if it is there."""
    import json

    terminal = {call.get("id") for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or ()
                if (call.get("function") or {}).get("name") == "terminal"}
    for message in reversed(messages):
        content = message.get("content") if message.get("tool_call_id") in terminal else None
        if isinstance(content, str) and '"workdir"' in content:
            try:
                folder = json.loads(content).get("workdir")
            except (ValueError, AttributeError):
                continue
            return folder if isinstance(folder, str) and os.path.isdir(folder) else None
    return None
