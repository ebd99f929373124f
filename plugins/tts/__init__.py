"""Built-in plugin tts: speech out (``text_to_speech``, hermes-agent's tool) and in (voice notes, for the gateway).

The audio of the text is kept in the data folder's ``audio_cache/`` (or where the model says) and its path returned.
``tts.provider`` names the backend, as in hermes-agent: ``openai`` (an OpenAI-compatible speech endpoint,
``POST /v1/audio/speech``, through the openai SDK: ``tts.openai.model``, ``voice``, ``base_url``; its key in
``VOICE_TOOLS_OPENAI_KEY`` or ``OPENAI_API_KEY``), ``edge`` (hermes-agent's default: Microsoft Edge's online voices,
no key, through the ``edge-tts`` package, ``pip install 'hermes-kernel[tts]'``; ``tts.edge.voice``), a command of the
user's declared under ``tts.providers`` (:mod:`plugins.tts.command`), or any a plugin provides through the
``tts_backends`` hook. hermes-agent's other cloud and local backends are not here: the tool is not offered while
``tts.provider`` names one of them (or ``edge`` without its package). Voice notes: :mod:`plugins.tts.listen`."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from kernel import hookimpl
from kernel.types import Tool, ToolError

KEYS = ("VOICE_TOOLS_OPENAI_KEY", "OPENAI_API_KEY")
NOT_HERE = {"elevenlabs", "minimax", "xai", "mistral", "gemini", "neutts", "kittentts", "piper", "deepinfra"}
BUILT_IN = frozenset({"openai", "edge", *NOT_HERE})  # hermes-agent's own backends: no plugin's may take their names
LIMITS = {"openai": 4096, "edge": 5000}  # characters a backend takes (a command's: 5000, a plugin's: 4000), as
# hermes-agent cuts
FORMATS = ("mp3", "wav", "ogg", "flac", "opus", "aac")


@hookimpl
def register_config(declare):
    declare("tts.provider", str, "edge", "the backend text_to_speech speaks with: edge (Microsoft Edge's online "
            "voices, no key; pip install 'hermes-kernel[tts]'), openai, a command of tts.providers, or a plugin's")
    declare("tts.edge.voice", str, "en-US-AriaNeural", "the voice of tts.provider: edge (`edge-tts --list-voices`)")
    declare("tts.speed", float, 1.0, "how fast the voice speaks (1.0: as the backend does)", minimum=0.25)
    declare("tts.voice", str, "", "the voice a plugin's backend is asked for (empty: its own)")
    declare("tts.model", str, "", "the model a plugin's backend is asked for (empty: its own)")
    declare("tts.providers", dict, {}, "commands that speak: NAME: {command, output_format, timeout, voice, model, "
            "max_text_length}; {input_path} and {output_path} in the command (see the tts plugin)")
    declare("tts.openai.model", str, "gpt-4o-mini-tts", "the speech model text_to_speech asks with tts.provider: openai")
    declare("tts.openai.voice", str, "alloy", "the voice of tts.provider: openai")
    declare("tts.openai.base_url", str, "", "an OpenAI-compatible speech endpoint (empty: OpenAI's)")
    declare("stt.enabled", bool, True, "voice notes sent to the gateway are transcribed (plugins.tts.listen)")
    declare("stt.provider", str, "local", "what transcribes them: openai (hermes-agent's default, local, is not here)")
    declare("stt.openai.model", str, "whisper-1", "the transcription model of stt.provider: openai")
    declare("stt.openai.base_url", str, "", "an OpenAI-compatible transcription endpoint (empty: OpenAI's)")
    declare("stt.echo_transcripts", bool, True, "the gateway shows the chat what it heard before it answers")


@hookimpl
def register_hookspecs(add):
    from plugins.tts import hookspecs

    add(hookspecs)


def declared(config) -> dict:
    """``{name: entry}`` of ``tts.providers`` that are commands (:mod:`plugins.tts.command`; an entry of another
    ``type`` is someone else's). Read here, at each start: running one is the module's."""
    entries = config.get("tts.providers") or {}
    return {str(name): entry for name, entry in (entries.items() if isinstance(entries, dict) else ())
            if isinstance(entry, dict) and str(entry.get("type") or "command").strip().lower() == "command"
            and isinstance(entry.get("command"), str) and entry["command"].strip()}


def _key() -> str:
    return next((os.environ[name].strip() for name in KEYS if os.environ.get(name, "").strip()), "")


def _offered(config) -> bool:
    provider = str(config.get("tts.provider") or "").strip()
    if provider in declared(config):
        return True
    if provider == "edge":
        return _edge_installed()
    return bool(_key()) if provider == "openai" else bool(provider) and provider not in NOT_HERE


@functools.lru_cache(maxsize=1)
def _edge_installed() -> bool:
    """Whether edge-tts can be imported (looked for once a process: the tools' check runs at every agent's start)."""
    import importlib.util

    return importlib.util.find_spec("edge_tts") is not None


def _openai(config):
    def speak(text: str, path: Path) -> Path:
        import openai

        from plugins.tool_args import endpoint_error

        fmt = path.suffix[1:] if path.suffix[1:] in FORMATS else "mp3"
        asked = "opus" if fmt == "ogg" else fmt  # OpenAI's opus comes in an Ogg file: a voice note's
        client = openai.OpenAI(api_key=_key() or "none", base_url=config.get("tts.openai.base_url") or None,
                               max_retries=1, timeout=120)
        speed = float(config.get("tts.speed") or 1.0)
        try:
            audio = client.audio.speech.create(model=config.get("tts.openai.model"), input=text,
                                               voice=config.get("tts.openai.voice"), response_format=asked,
                                               **({"speed": min(speed, 4.0)} if speed != 1.0 else {}))
            data = audio.read()
        except openai.APIError as exc:
            raise endpoint_error("text_to_speech", "speech", exc) from None
        if not data:
            raise ToolError("text_to_speech: the speech endpoint sent no audio")
        from hermes.host.files import atomic_write

        atomic_write(path.with_suffix("." + fmt), data)
        return path.with_suffix("." + fmt)

    return speak


def _edge(config):
    def speak(text: str, path: Path) -> Path:
        """Microsoft Edge's voices (its MP3; an Ogg file asked for, a voice note's, made with ffmpeg when there)."""
        import asyncio

        try:
            import aiohttp
            import edge_tts
        except ImportError:
            raise ToolError("text_to_speech: the edge voices need the edge-tts package: pip install "
                            "'hermes-kernel[tts]' (or set tts.provider to openai)") from None
        speed = float(config.get("tts.speed") or 1.0)
        said = edge_tts.Communicate(text, config.get("tts.edge.voice") or "en-US-AriaNeural",
                                    **({"rate": f"{round((speed - 1) * 100):+d}%"} if speed != 1.0 else {}))
        mp3 = path.with_suffix(".mp3")
        partial = mp3.with_name(f".{mp3.name}.partial")
        try:
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # the tool's own thread, as it is everywhere but inside a server's loop
                asyncio.run(said.save(str(partial)))
            else:
                import concurrent.futures

                with concurrent.futures.ThreadPoolExecutor(1) as aside:
                    aside.submit(asyncio.run, said.save(str(partial))).result()
            partial.replace(mp3)
        except (edge_tts.exceptions.EdgeTTSException, aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
            partial.unlink(missing_ok=True)
            raise ToolError(f"text_to_speech: Edge's voices did not answer: {exc or type(exc).__name__}") from None
        return _as_ogg(mp3) if path.suffix == ".ogg" else mp3

    return speak


def _as_ogg(mp3: Path) -> Path:
    """An MP3 as Ogg Opus (a voice note's format) with ffmpeg; the MP3 itself when that cannot be."""
    import shutil
    import subprocess

    ogg = mp3.with_suffix(".ogg")
    if shutil.which("ffmpeg") is None:
        return mp3
    try:
        done = subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-i", str(mp3), "-c:a", "libopus", "-ac", "1",
                               "-b:a", "64k", str(ogg)], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return mp3
    if done.returncode or not ogg.is_file():
        return mp3
    mp3.unlink(missing_ok=True)
    return ogg


@hookimpl
def tts_backends(agent):
    from plugins.tts.command import speaker

    config = agent.config
    return {"openai": _openai(config), "edge": _edge(config), **{name: speaker(name, entry, config)
                                          for name, entry in declared(config).items() if name not in LIMITS}}


def _limit(config, provider: str) -> int:
    """The characters ``provider`` speaks: its ``max_text_length`` (a command's entry, or ``tts.NAME``), else
    :data:`LIMITS`, 5000 for a command, 4000 for a plugin's."""
    commands, written = declared(config), getattr(config, "data", None) or {}
    entry = commands.get(provider) or (written.get("tts") if isinstance(written.get("tts"), dict) else {}).get(provider)
    wanted = entry.get("max_text_length") if isinstance(entry, dict) else None
    if isinstance(wanted, int) and not isinstance(wanted, bool) and wanted > 0:
        return wanted
    return LIMITS.get(provider) or (5000 if provider in commands else 4000)


def _target(args, ctx, text: str) -> Path:
    from plugins.tool_args import arg, fresh_path, resolve_path, working_folder

    raw = arg(args, "output_path", str, tool="text_to_speech", default="").strip()
    if raw:
        if ".." in Path(raw).parts:  # the model's path: a traversal is a bug or someone's instruction
            raise ToolError(f"text_to_speech: output_path {raw!r} has '..' in it: give a path without it")
        path = resolve_path(raw, "text_to_speech", working_folder(ctx.agent))
        return path if path.suffix else path.with_suffix(".mp3")
    return fresh_path(ctx.agent.config.data_dir / "audio_cache", text, ".mp3", "speech")


def speak(agent, text: str, target: Path) -> dict:
    """``text`` spoken with the backend ``tts.provider`` names, into ``target`` (its suffix the format wanted): the
    file written, its backend, format and size, and a note when the text was cut at the backend's limit. Also the
    gateway's voice replies. :class:`ToolError` saying what failed."""
    config = agent.config
    provider = str(config.get("tts.provider") or "").strip()
    backends = {}
    for provided in agent.ask("tts_backends") or []:
        backends.update(provided if isinstance(provided, dict) else {})
    if not callable(backends.get(provider)):
        raise ToolError(f"text_to_speech: no backend named {provider!r} (tts.provider); there are: "
                        f"{', '.join(sorted(backends)) or 'none'}")
    most, total = _limit(config, provider), len(text)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(f"text_to_speech: cannot make the folder {str(target.parent)!r}: {exc.strerror or exc}") \
            from None
    written = Path(backends[provider](text[:most], target))
    result = {"path": str(written), "provider": provider, "format": written.suffix[1:], "bytes":
              written.stat().st_size}
    if total > most:
        result["note"] = f"only the first {most} of {total} characters were spoken (the {provider} backend's limit)"
    return result


def spoken(markdown: str) -> str:
    """An answer as it is said aloud: code blocks, links' addresses and Markdown's marks left out."""
    import re

    text = re.sub(r"```.*?(```|$)", " ", markdown, flags=re.DOTALL)
    text = re.sub(r"\[([^\]\n]+)\]\([^)\s]+\)", r"\1", text)
    text = re.sub(r"https?://\S+", "", text)
    text = re.sub(r"(\*\*|__|\*|_|`|~~)(?=\S)(.+?)(?<=\S)\1", r"\2", text)
    text = re.sub(r"^\s*(#{1,6}|[-*+]|>)\s+", "", text, flags=re.MULTILINE)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def text_to_speech(args, ctx):
    from plugins.tool_args import arg, check_args

    args = check_args(args, "text_to_speech")
    text = arg(args, "text", str, tool="text_to_speech")
    if not text.strip():
        raise ToolError("text_to_speech: 'text' is empty: give the words to speak")
    return speak(ctx.agent, text, _target(args, ctx, text))


@hookimpl
def register_tools(register, config):
    register(Tool(
        name="text_to_speech",
        description="Speak text aloud with the user's configured voice: the audio file is saved and its path "
                    "returned. output_path (optional) says where; its suffix (.mp3, .wav, ...) the format.",
        parameters={"type": "object", "properties": {
            "text": {"type": "string", "description": "The words to speak (long text is cut at the voice's limit)"},
            "output_path": {"type": "string", "description": "Where to save the audio (default: the data folder's "
                                                             "audio_cache/)"}}, "required": ["text"]},
        handler=text_to_speech, toolset="tts", parallel_safe=True, path_arg="output_path",
        check=lambda: _offered(config)))


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """Whether text_to_speech is offered, and if not, what it waits for."""
    from plugins.doctor.hookspecs import OK, WARN, Check

    config = agent.config
    provider = str(config.get("tts.provider") or "").strip()
    if _offered(config):
        return [Check("tts", OK, f"text_to_speech speaks with {provider}" + (
            f" ({config.get('tts.edge.voice')})" if provider == "edge" else ""))]
    why = ("the edge voices need the edge-tts package: pip install 'hermes-kernel[tts]'" if provider == "edge" else
           "its key is not set (VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY)" if provider == "openai" else
           f"{provider!r} is one of hermes-agent's backends that are not here" if provider in NOT_HERE else
           f"no backend named {provider!r}")
    return [Check("tts", WARN, f"text_to_speech is not offered: tts.provider {provider}: {why}")]
