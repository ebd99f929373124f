"""hermes-agent's command providers: a program of the user's (Piper, a voice-cloning script, a cloud CLI) as a speech
backend, declared in config.yaml with no code::

    tts:
      provider: piper
      providers:
        piper:
          command: "piper -m ~/voices/en.onnx -f {output_path} < {input_path}"
          output_format: wav      # mp3 (default), wav, ogg or flac
          timeout: 120            # seconds

The text is written to a file first (``{input_path}``, ``{text_path}``), so nothing the model wrote is ever part of
the command line; ``{output_path}``, ``{format}``, ``{voice}``, ``{model}`` and ``{speed}`` are the entry's own.
Each value is quoted for where it stands (bare, in single or in double quotes); ``{{`` and ``}}`` are braces and
``${name}`` is the shell's. The command runs through ``sh`` as the user's own hooks do, with the user's environment
(a cloud CLI needs its key), not in the tool sandbox: the model chooses only the words."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import tempfile
from pathlib import Path

from kernel.types import ToolError

FORMATS = ("mp3", "wav", "ogg", "flac")
TIMEOUT = 120.0
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(input_path|text_path|output_path|format|voice|model|speed)\}")


def output_format(entry: dict) -> str:
    fmt = str(entry.get("output_format") or entry.get("format") or "mp3").strip().lower().lstrip(".")
    return fmt if fmt in FORMATS else "mp3"


def _quoted(value: str, quote: "str | None") -> str:
    if quote == "'":  # close, an escaped quote, reopen
        return value.replace("'", "'\\''")
    if quote == '"':
        return re.sub(r'([\\"$`])', r"\\\1", value)
    return shlex.quote(value)


def render(template: str, values: dict) -> str:
    """``template`` with its placeholders replaced, each value quoted for the quotes it stands in."""
    out, quote, i = [], None, 0
    while i < len(template):
        found = PLACEHOLDER.match(template, i)
        if found and not (found.group(1) and i and template[i - 1] == "$"):
            out.append(found.group(0)[0] if not found.group(1) else _quoted(values[found.group(1)], quote))
            i = found.end()
            continue
        char = template[i]
        if char == "\\" and quote != "'":  # an escaped character: never a quote that opens or closes
            out.append(template[i:i + 2])
            i += 2
            continue
        if char in "'\"" and quote in (None, char):
            quote = None if quote else char
        out.append(char)
        i += 1
    return "".join(out)


def speaker(name: str, entry: dict, config):
    """The backend of the command provider ``name``."""
    try:
        timeout = float(entry.get("timeout", entry.get("timeout_seconds", TIMEOUT)))
    except (TypeError, ValueError):
        timeout = TIMEOUT
    timeout = timeout if timeout > 0 else TIMEOUT

    def speak(text: str, path: Path) -> Path:
        path = path.with_suffix("." + output_format(entry))
        path.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory(prefix="hermes-tts-") as folder:
            text_path = os.path.join(folder, "input.txt")
            Path(text_path).write_text(text, encoding="utf-8")
            values = {"input_path": text_path, "text_path": text_path, "output_path": str(path),
                      "format": path.suffix[1:], "voice": str(entry.get("voice") or ""),
                      "model": str(entry.get("model") or ""),
                      "speed": str(entry.get("speed", config.get("tts.speed")) or "")}
            _run(name, render(entry["command"], values), timeout)
        if not path.is_file() or not path.stat().st_size:
            raise ToolError(f"text_to_speech: the command of tts.providers.{name} wrote no audio to {path}")
        return path

    return speak


def _run(name: str, command: str, timeout: float) -> None:
    proc = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)  # its own group: a timeout ends it all
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # gone between the timeout and now
            pass
        proc.communicate()
        raise ToolError(f"text_to_speech: the command of tts.providers.{name} took over {timeout:g} s and was "
                        "stopped") from None
    if proc.returncode:
        said = (err or out).decode("utf-8", "replace").strip().splitlines()
        raise ToolError(f"text_to_speech: the command of tts.providers.{name} exited with {proc.returncode}"
                        + (f": {said[-1][:300]}" if said else ""))
