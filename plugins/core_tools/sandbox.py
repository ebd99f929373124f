"""The OS sandbox the terminal tool's commands run in: bubblewrap (``bwrap``)
on Linux, so what the approval check misses the kernel of the machine refuses.

``sandbox.mode`` (Codex's names): ``workspace-write`` (the default) leaves
writable only the workspace (``terminal.cwd``, else the folder hermes runs in), a private temporary
folder and the folders ``sandbox.writable`` names; ``read-only`` only the
private temporary folder; ``off`` runs commands as they are. In a sandbox a
command has its own PID namespace (hermes' process and its ``/proc``, so its
environment, are out of sight), hermes' config and data folders are hidden,
``sandbox.network: false`` takes the network away, and the sandbox dies with
hermes. Where none can start (no ``bwrap``, namespaces refused) commands run
without one and hermes says so once; ``sandbox.required: true`` refuses them.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from typing import Optional

from kernel.types import ToolError

log = logging.getLogger("hermes.sandbox")
MODES = ("workspace-write", "read-only", "off")
_said: set = set()  # why no sandbox could start, said once per process


def bwrap_path() -> Optional[str]:
    import shutil  # here, as subprocess below: most commands never start a tool's process

    return shutil.which("bwrap")


@functools.lru_cache(maxsize=None)
def unavailable(bwrap: Optional[str]) -> Optional[str]:
    """Why no sandbox can start on this machine (one line), or None when one can."""
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed (Debian and Ubuntu: apt-get install bubblewrap)"
    import subprocess

    try:
        done = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--dev", "/dev", "--proc", "/proc",
                               "--", "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{bwrap} does not run: {exc}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"bwrap cannot create a sandbox here ({last}); user namespaces may be disabled"
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


@dataclass(frozen=True)
class Sandbox:
    mode: str
    network: bool
    required: bool
    writable: tuple  # folders writable besides the workspace
    hidden: tuple  # hermes' own folders: a command never sees them
    workspace: str  # the folder writable in workspace-write: where the tools start (terminal.cwd)

    @classmethod
    def from_config(cls, config) -> "Sandbox":
        from hermes.host.paths import config_dir, data_dir

        get = (lambda key, default: config.get(key, default)) if config is not None else (lambda key, default: default)
        mode = get("sandbox.mode", "workspace-write")
        mode = "off" if mode is False else str(mode).strip().lower()  # YAML reads a bare off as false
        if mode not in MODES:
            raise ToolError(f"sandbox.mode is {mode!r}; use one of {', '.join(MODES)}")
        writable = tuple(os.path.realpath(os.path.expanduser(str(p))) for p in get("sandbox.writable", []) or [])
        hidden = tuple(dict.fromkeys(os.path.realpath(str(p)) for p in (config_dir(), data_dir())))
        from plugins.tool_args import start_folder

        return cls(mode, bool(get("sandbox.network", True)), bool(get("sandbox.required", False)), writable, hidden,
                   os.path.realpath(start_folder(config)))

    def why_not(self) -> Optional[str]:
        """Why commands will run without a sandbox (None: they run in one, or mode is off)."""
        return None if self.mode == "off" else unavailable(bwrap_path())

    def describe(self) -> str:
        """One line for a person approving a command: what it may touch if it runs."""
        if self.mode == "off":
            return "It will run without a sandbox (sandbox.mode: off)."
        why = self.why_not()
        if why is not None:
            return f"It will {'not run' if self.required else 'run without a sandbox'}: {why}."
        where = "the working folder and a private /tmp" if self.mode == "workspace-write" else "only a private /tmp"
        extra = " (and sandbox.writable)" if self.writable else ""
        return f"It will run in the sandbox: it can write {where}{extra}{'' if self.network else ', with no network'}."

    def wrap(self, argv: list, cwd: Optional[str], readable: tuple = ()) -> tuple:
        """``(argv to run, whether it runs sandboxed)``. A sandbox that cannot
        start is said once, or refused when ``sandbox.required``. ``readable``:
        folders below /tmp the command needs to read (a Python's virtual
        environment), which the sandbox's own /tmp would hide."""
        why = self.why_not()
        if self.mode == "off":
            return argv, False
        if why is not None:
            if self.required:
                raise ToolError(f"sandbox.required is set and no sandbox can start: {why}")
            if why not in _said:
                _said.add(why)
                log.warning("tools run without a sandbox: %s (`hermes sandbox` shows it; sandbox.mode: off says you know)", why)
            return argv, False
        workspace = self.workspace
        args = [bwrap_path(), "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                *([] if self.network else ["--unshare-net"]),
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                # the workspace is there even below /tmp; writable unless read-only
                "--bind" if self.mode == "workspace-write" else "--ro-bind", workspace, workspace]
        for path in self.writable:
            if os.path.isdir(path):
                args += ["--bind", path, path]
            elif path not in _said:  # a typo (or a file) in sandbox.writable: its writes fail read-only, said once
                _said.add(path)
                log.warning("sandbox.writable: %s is not a folder here; commands cannot write it", path)
        for path in readable:
            path = os.path.realpath(path)
            if _inside(path, "/tmp") and os.path.isdir(path) and not any(_inside(path, h) for h in self.hidden):
                args += ["--ro-bind", path, path]
        for path in self.hidden:  # unless the workspace lies inside it: then it is the workspace the user chose
            if os.path.isdir(path) and not _inside(workspace, path):
                args += ["--tmpfs", path]
        return [*args, "--chdir", os.path.realpath(cwd or workspace), "--", *argv], True
