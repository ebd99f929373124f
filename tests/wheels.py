"""Real wheels for tests: plugin packages that pip installs the way users
install them (pip installs a wheel without a build backend, offline)."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path


def build_wheel(out: Path, name: str, version: str, files: dict, entry_points: dict = None, summary: str = "") -> Path:
    """A minimal pure-Python wheel: ``files`` maps archive path -> text; ``summary``, its one-line description."""
    stem = f"{name.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + (
        f"Summary: {summary}\n" if summary else "")
    files[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: hermes-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    if entry_points:
        files[f"{info}/entry_points.txt"] = "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for group, eps in entry_points.items())
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(record) + "\n"
    wheel = out / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


def pip_install_target(target: Path, wheels: list) -> None:
    """``pip install --target`` the wheels, offline, without dependencies."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                    "--disable-pip-version-check", "--target", str(target), *map(str, wheels)],
                   check=True, capture_output=True, text=True)
