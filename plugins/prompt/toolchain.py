"""What the session layer says of this machine's Python when a model's first ``pip install`` would fail (hermes-agent's
``agent.environment_probe``): a ``python3`` on PATH that the system manages (PEP 668). Told from files, not by running
anything, so every start pays a PATH search and a few stats; where it cannot tell (a pyenv shim, an active virtual
environment) it says nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Mapping, Optional


def python_note(environ: Optional[Mapping[str, str]] = None) -> str:
    """One line for the prompt, or ""."""
    environ = os.environ if environ is None else environ
    if environ.get("VIRTUAL_ENV") or environ.get("CONDA_PREFIX"):
        return ""  # the tools' python3 is the environment's, where pip works
    found = shutil.which("python3", path=environ.get("PATH", os.defpath))
    if found is None:
        return "There is no python3 on PATH."
    try:
        real = Path(found).resolve()
        if (Path(found).parent.parent / "pyvenv.cfg").exists() or (real.parent.parent / "pyvenv.cfg").exists():
            return ""
        libs = real.parent.parent / "lib"
        names = [real.name] if real.name.startswith("python3.") else [p.name for p in libs.glob("python3.*")]
        managed = any((libs / name / "EXTERNALLY-MANAGED").is_file() for name in names)
    except OSError:
        return ""
    if not managed:
        return ""
    uv = " or use uv, which is installed" if shutil.which("uv", path=environ.get("PATH", os.defpath)) else ""
    return (f"python3 on PATH ({found}) is managed by the system (PEP 668): pip install fails there; make a virtual "
            f"environment first (python3 -m venv .venv){uv}.")
