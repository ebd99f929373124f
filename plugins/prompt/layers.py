"""The system prompt's layers, in order: identity, tool guidance, what other
plugins contribute (the memory block), the project's context files, the
platform's hints and the session's date, model and working folder. Each layer is capped
(``prompt.max_layer_chars``) with a visible marker. Nothing that changes within
a day goes in (the date, not the time): within a session the prompt is
byte-identical from turn to turn, so provider prompt caches hit."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from plugins.prompt import project

ORDER = ("identity", "tools", "plugins", "context", "platform", "session")  # plugins' own layers go in between

DEFAULT_IDENTITY = """You are hermes, an agent that works on the user's computer through the tools it is given.

Work in small, checked steps: look before you change, run what you wrote, and read the output before you go on. \
Say plainly what you did and what you found; when something failed, say so and why. Ask the user (the clarify \
tool, when you have it) only when a decision is theirs to make. Never invent file contents, command output or \
facts you have not seen."""

TOOL_GUIDANCE = ("Call a tool when it gets you a fact or does the work; answer directly when neither is needed. "
                 "A tool result that starts with an error says what went wrong: fix the call rather than repeating it.")
# hermes-agent's agent.* switches of its tool guidance, in words of our own
PARALLEL = "Several independent calls may go in one step: they run side by side."
COMPLETION = ("See a task through: do not stop at a plan or a first step when the tools can do the rest, and when "
              "something blocks you say so plainly; never present a result you did not get from a tool as if you had.")
ENFORCEMENT = ("When you say you will do something, make the tool call in the same answer instead of describing it; "
               "end your turn only when the work is done or you need the user.")
ENFORCED_MODELS = ("gpt", "codex", "gemini", "gemma", "grok")  # those told to act rather than narrate ("auto")

SYSTEMS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}  # sys.platform's names, as people say them

PLATFORM_HINTS = {
    "cli": "You are talking to a person in a terminal: plain text, short paragraphs, code in fenced blocks; no "
           "tables wider than 80 columns.",
    "run": "This is a one-shot command: there is no follow-up turn, so finish the task in this answer and end "
           "with the result. Plain text; your output may be read by a script.",
    "telegram": "You are talking to a person on Telegram, often on a phone: short answers; Markdown's bold, italics, "
                "code and links show, tables do not (a list reads better); the files and commands you use are on "
                "the machine you run on, not theirs: to send them a file, end your answer with a line MEDIA:/its/path "
                "(the pictures and audio your tools make are sent by themselves).",
    "slack": "You are talking to people on Slack, at work: short answers; Markdown's bold, code and links show, "
             "tables do not (a list reads better); the files and commands you use are on the machine you run on, "
             "not theirs.",
    "discord": "You are talking to people on Discord: short answers; Markdown shows, tables do not (a list reads "
               "better); the files and commands you use are on the machine you run on, not theirs: to send a file, "
               "end your answer with a line MEDIA:/its/path (the pictures and audio your tools make are sent by "
               "themselves).",
    "matrix": "You are talking to people on Matrix: short answers; Markdown's bold, italics, code, links and quotes "
              "show, tables do not (a list reads better); the files and commands you use are on the machine you "
              "run on, not theirs: to send a file, end your answer with a line MEDIA:/its/path.",
    "signal": "You are talking to a person on Signal, often on a phone: short answers; Markdown's bold, italics and "
              "code show, links as their address, tables do not (a list reads better); the files and commands you "
              "use are on the machine you run on, not theirs: to send a file, end your answer with a line "
              "MEDIA:/its/path.",
    "mattermost": "You are talking to people on Mattermost, at work: short answers; Markdown shows, tables too; the "
                  "files and commands you use are on the machine you run on, not theirs: to send a file, end your "
                  "answer with a line MEDIA:/its/path.",
    "ntfy": "You are answering through ntfy push notifications, read on a phone's lock screen: short plain "
            "answers, no tables; the files and commands you use are on the machine you run on, not theirs.",
    "whatsapp_cloud": "You are talking to a person on WhatsApp, often on a phone: short answers; Markdown's bold, "
                      "italics and code show, links as their address, tables do not (a list reads better); the files "
                      "and commands you use are on the machine you run on, not theirs: to send a file, end your "
                      "answer with a line MEDIA:/its/path.",
    "sms": "You are answering text messages (SMS) on a phone: very short plain answers, no Markdown (it shows as "
           "typed), no tables; the files and commands you use are on the machine you run on, not theirs.",
    "irc": "You are talking to people on IRC: short plain answers, a few lines (each line is a message; no Markdown, "
           "no tables); the files and commands you use are on the machine you run on, not theirs.",
    "email": "You are answering a person's email: a complete answer in one message, plain paragraphs (Markdown's "
             "bold, code and lists show); the files and commands you use are on the machine you run on, not "
             "theirs: to attach a file, end your answer with a line MEDIA:/its/path.",
}


@dataclass
class Layer:
    name: str
    source: str  # where the text came from: a file, a plugin, "built-in"
    text: str
    chars: int = 0  # before the cap
    truncated: bool = False

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "chars": self.chars, "truncated": self.truncated,
                "text": self.text}


def cap(text: str, limit: int, source: str) -> tuple:
    """``(text, truncated)``: at most ``limit`` characters, with a marker saying what was left out."""
    if limit <= 0 or len(text) <= limit:
        return text, False
    head = text[: max(0, limit - 200)].rstrip()
    return f"{head}\n\n[... truncated: {len(text) - len(head)} of {len(text)} characters of {source} left out]", True


def _setting(config: Any, key: str, default: Any) -> Any:
    value = config.get(key, default) if config is not None else default
    return default if value is None else value


def identity(config: Any) -> Optional[Layer]:
    """The distro's or config's text (``prompt.identity``), else ``SOUL.md``
    in HERMES_HOME (as in hermes-agent), else the default. None when the
    kernel's ``agent.system_prompt`` is set: the kernel puts that first, and
    it is the identity then."""
    from hermes.host.paths import config_dir

    if str(_setting(config, "agent.system_prompt", "") or "").strip():
        return None
    text = str(_setting(config, "prompt.identity", "") or "").strip()
    if text:
        return Layer("identity", "prompt.identity", text)
    soul = config_dir() / "SOUL.md"
    try:
        soul_text = soul.read_text(encoding="utf-8", errors="replace").strip() if soul.is_file() else ""
    except OSError:
        soul_text = ""
    if soul_text:
        return Layer("identity", str(soul), soul_text)
    return Layer("identity", "built-in", DEFAULT_IDENTITY)


def tools(agent: Any) -> Optional[Layer]:
    offered = dict(getattr(agent, "tools", None) or {})
    search = sys.modules.get("plugins.tool_search")  # loaded: its bridges may stand in for many tools
    hidden = search.hidden_tools(agent) if search is not None and hasattr(agent, "host") else set()
    for name in (search.SEARCH, search.CALL) if hidden is None else hidden:  # no bridges, or their tools: not named
        offered.pop(name, None)
    if not offered:
        return None
    lines = [" ".join(_guidance(agent)), "", "Tools offered in this session:"]
    for name, tool in sorted(offered.items()):
        summary = _first_sentence(getattr(tool, "description", "") or "")
        lines.append(f"- {name}: {summary}" if summary else f"- {name}")
    if hidden:
        lines.append(f"- and {len(hidden)} more tools of MCP servers and plugins, not listed: find them with "
                     f"{search.SEARCH}, run them with {search.CALL}")
    return Layer("tools", "the tools offered", "\n".join(lines))


def _guidance(agent: Any) -> list:
    config = getattr(agent, "config", None)
    said = [TOOL_GUIDANCE]
    said += [PARALLEL] if _setting(config, "agent.parallel_tool_call_guidance", True) else []
    said += [COMPLETION] if _setting(config, "agent.task_completion_guidance", True) else []
    enforce = _setting(config, "agent.tool_use_enforcement", "auto")
    model = str(getattr(getattr(agent, "provider_config", None), "model", "") or "").lower()
    named = enforce if isinstance(enforce, list) else ENFORCED_MODELS if str(enforce).lower() == "auto" else ()
    if enforce is True or str(enforce).lower() in ("true", "always") or any(str(n).lower() in model for n in named):
        said.append(ENFORCEMENT)
    return said


def _first_sentence(text: str, limit: int = 160) -> str:
    """The description's first sentence (the rest is in the tool's schema)."""
    text = " ".join(text.split())
    end = text.find(". ")
    text = text if end < 0 else text[: end + 1]
    return text if len(text) <= limit else text[: limit - 3].rsplit(" ", 1)[0] + "..."


def context(config: Any, cwd: Path) -> Optional[Layer]:
    files = project.context_files(cwd, _setting(config, "prompt.context_files", []) or [])
    if not files:
        return None
    body = "\n\n".join(project.render(f) for f in files)
    text = ("# Project context\n\nThese files come with the project you are working in. Follow their conventions "
            "where they do not conflict with the user.\n\n" + body)
    return Layer("context", ", ".join(f.label for f in files), text)


def platform(agent: Any) -> Optional[Layer]:
    """How to write for the platform the agent answers on; config's ``platform_hints.<platform>`` (hermes-agent's)
    replaces it (``replace: TEXT``) or adds to it (``append: TEXT``, or the text alone)."""
    name = getattr(agent, "platform", "") or ""
    hint = PLATFORM_HINTS.get(name, "")
    hints = _setting(getattr(agent, "config", None), "platform_hints", {})
    own = hints.get(name) if isinstance(hints, dict) else None
    own = {"append": own} if isinstance(own, str) else own if isinstance(own, dict) else {}
    if isinstance(own.get("replace"), str) and own["replace"].strip():
        hint = own["replace"].strip()
    elif isinstance(own.get("append"), str) and own["append"].strip():
        hint = f"{hint}\n\n{own['append'].strip()}".strip()
    return Layer("platform", f"platform {name}", hint) if hint else None


def session(agent: Any, cwd: Path) -> Layer:
    """The day the conversation started (in ``timezone``, hermes-agent's key, or ``HERMES_TIMEZONE``), the model and
    the provider, as hermes-agent says them: a model knows its training, not today's date; then where its tools work
    (the folder, a git repository or not, the system, a python3 that refuses ``pip install``), which it would
    otherwise spend a tool call to learn, and the user's own line about this machine (hermes-agent's
    ``agent.environment_hint``)."""
    from plugins.clock import now

    config = getattr(agent, "config", None)
    pconf = getattr(agent, "provider_config", None)
    lines = [f"Conversation started: {now(config).strftime('%A, %B %d, %Y')}"]
    lines += [f"Session ID: {agent.session_id}"] if _setting(config, "prompt.pass_session_id", False) else []
    lines += [f"{label}: {value}" for label, value in (("Model", getattr(pconf, "model", "")),
                                                       ("Provider", getattr(pconf, "provider", ""))) if value]
    repository = " (a git repository)" if project.git_root(cwd) else ""
    lines += [f"Working folder: {cwd}{repository}", f"System: {SYSTEMS.get(sys.platform, sys.platform)}"]
    if _setting(config, "agent.environment_probe", True):
        from plugins.prompt.toolchain import python_note

        lines += [note] if (note := python_note()) else []
    if hint := str(_setting(config, "agent.environment_hint", "") or "").strip():
        lines.append(hint)
    return Layer("session", "the date, the model, the working folder", "\n".join(lines))


def working_folder(config: Any) -> Path:
    """The folder the prompt describes: where the tools start, ``terminal.cwd`` as in hermes-agent (a wrong one: its
    tools say so, and the prompt describes where hermes started)."""
    from kernel.types import ToolError
    from plugins.tool_args import start_folder

    try:
        return Path(start_folder(config))
    except ToolError:
        return Path.cwd()


def assemble(agent: Any, contributions: list, cwd: Optional[Path] = None, added: list = ()) -> list:
    """The layers for ``agent``'s session; ``contributions`` are the other
    plugins' ``system_prompt`` parts (the memory block among them), ``added``
    the layers plugins gave through ``prompt_layer``."""
    config = getattr(agent, "config", None)
    off = set(_setting(config, "prompt.disabled_layers", []) or [])
    limit = int(_setting(config, "prompt.max_layer_chars", 20_000))
    plugins_text = "\n\n".join(c.strip() for c in contributions if isinstance(c, str) and c.strip())
    cwd = working_folder(config) if cwd is None else cwd
    built = {
        "identity": lambda: identity(config),
        "tools": lambda: tools(agent),
        "plugins": lambda: Layer("plugins", "other plugins (system_prompt)", plugins_text) if plugins_text else None,
        "context": lambda: context(config, cwd),
        "platform": lambda: platform(agent),
        "session": lambda: session(agent, cwd.resolve()),
    }
    followers: dict = {}  # a plugin's layer goes after the one it names (default: the plugins' parts)
    for extra in added:
        name = str(extra.get("name") or "").strip()
        if not name or name in built or not str(extra.get("text") or "").strip():
            continue
        built[name] = (lambda e=extra, n=name: Layer(n, str(e.get("source") or n), str(e["text"])))
        after = str(extra.get("after") or "plugins")
        followers.setdefault(after if after in ORDER or after in built else "plugins", []).append(name)
    _typos_in(off, [*built, *(str(e.get("name") or "") for e in added)])
    order: list = []

    def place(name: str) -> None:
        order.append(name)
        for follower in followers.get(name, ()):
            place(follower)

    for name in ORDER:
        place(name)
    layers = []
    for name in order:
        if name in off:
            continue
        layer = built[name]()
        if layer is None or not layer.text.strip():
            continue
        layer.chars = len(layer.text)
        most = _setting(config, "context_file_max_chars", None) if name == "context" else None
        layer.text, layer.truncated = cap(layer.text, int(most or limit), layer.source)
        layers.append(layer)
    return layers


_said: set = set()


def _typos_in(off: set, names: list) -> None:
    """Warn once of a ``prompt.disabled_layers`` name that is a layer's misspelt (it turned nothing off); a name
    far from every layer may be a plugin's layer that this session has not, and is left alone."""
    from kernel.hints import close_matches

    for name in sorted(str(n) for n in off if n not in names and str(n) not in _said):
        if near := close_matches(name, names, n=1):
            _said.add(name)
            logging.getLogger("hermes.prompt").warning(
                "prompt.disabled_layers names no layer '%s' (did you mean '%s'?): it turns nothing off", name, near[0])
