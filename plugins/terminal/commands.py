"""The chat's own slash commands (the recap a resumed chat starts with: plugins.terminal.recap).

Each command is ``handler(chat, args) -> text or None``; plugins add theirs
with ``register_slash_commands`` and ``/help`` lists both."""

from __future__ import annotations

import os
import sys

from kernel.messages import text_of
from plugins.commands.hookspecs import SLASH_COMMANDS
from plugins.terminal import settings
from plugins.terminal.recap import clip, last_exchanges, one_line, recap_of, spoken


def _history(chat, args):
    agent = chat.agent
    if args and (not args.isdigit() or int(args) < 1):  # /history 0 showed one
        return "usage: /history [N] (the last N exchanges; 10 when not given)"
    refused = agent.load_history()  # a resumed session's stored messages, if no turn has loaded them yet
    if refused:
        return refused
    said = spoken(agent.messages)
    if not said:
        return "nothing said yet in this session"
    lines = last_exchanges(said, int(args or 10))
    shown = f"the last {len(lines)} of {len(said)} messages" if len(lines) < len(said) else f"{len(said)} messages"
    from hermes.cli.app import program

    return "\n".join([f"{shown} (clipped; all of it: {program()} sessions show {agent.session_id})", *lines])


def _help(chat, args):
    rows = [(f"/{name}", text) for name, (text, _) in BUILTIN.items()]
    rows += [(f"/{name}", entry.description) for name, entry in sorted(chat.agent.host.registry[SLASH_COMMANDS].items())
             if name not in BUILTIN]
    quick_commands = chat.agent.config.get("quick_commands")
    rows += [(f"/{name}", str(entry.get("description") or entry.get("command") or entry.get("target") or ""))
             for name, entry in sorted(quick_commands.items() if isinstance(quick_commands, dict) else ())
             if isinstance(entry, dict) and name not in BUILTIN]
    rows.append(("/exit, /quit", "leave (Ctrl+D too)"))
    width = max(len(name) for name, _ in rows)
    keys = "Enter sends · Alt+Enter: new line · Up/Down: history · Tab: complete · Ctrl+C: stop a turn"
    return "\n".join(f"{name.ljust(width)}  {text}" for name, text in rows) + "\n" + keys


def _new(chat, args):
    from plugins.terminal.goals import STATE, restore

    old, goal = chat.agent.session_id, chat.agent.state.get(STATE)
    new = chat.agent.new_session()
    restore(chat)  # a goal stays with the session it was set in (as hermes-agent's): none in the new one
    return f"new session {new}" + (f"; the goal stays with session {old} (/resume {old} brings it back)" if goal else "")


def _tools(chat, args):
    tools = chat.agent.tools
    if not tools:
        return "no tools are offered (see -t)"
    width = max(map(len, tools))  # a column, as /help's
    return "\n".join(f"{name:<{width}}  {clip(tool.description.splitlines()[0] if tool.description else '', 70)}"
                     for name, tool in sorted(tools.items()))


def _toolsets(chat, args):
    """hermes-agent's /toolsets: each toolset, its tools' count, and whether this chat offers it (-t, toolsets)."""
    agent, rows, registry = chat.agent, [], chat.agent.host.registry
    named = {name: description for name, (_, description) in registry.toolsets.items()}
    for name in sorted(named.keys() | {tool.toolset for tool in registry.tools.values() if tool.toolset}):
        description = named.get(name) or "(the tools that name it as theirs)"
        try:
            count = len(registry.expand_toolsets([name]))
        except KeyError:  # a composite naming a toolset no plugin registered
            count = 0
        rows.append((name, f"{count} tools", "offered" if agent.offers(name) else "-", clip(description or "", 60)))
    if not rows:
        return "no toolsets are registered"
    width = max(len(row[0]) for row in rows)
    return "\n".join(f"{n:<{width}}  {c:>9}  {o:<7}  {d}" for n, c, o, d in rows)


def _status(chat, args):
    """hermes-agent's /status: where this chat stands."""
    from hermes.cli.entry import profile_name
    from plugins.front import ask_store
    from plugins.core_tools.processes import listed

    agent = chat.agent
    info = ask_store(chat.app, "session_info", needed=False, session_id=agent.session_id)
    title = info.get("title") if isinstance(info, dict) else None
    lines = [f"session {agent.session_id}{f' ({title})' if title else ''}: {len(agent.messages)} messages",
             f"model: {agent.provider_config.label()}", _usage(chat, ""),
             f"working in {os.getcwd()}; data folder {agent.config.data_dir} (profile {profile_name()})"]
    context = agent.host.registry[SLASH_COMMANDS].get("context")  # the context engine's, when it has one
    lines += [f"context: {context.value('', agent)}"] if context is not None else []
    tasks = len(chat.background.running) if chat.background else 0
    commands = sum(job["status"] == "running" for job in listed(agent))
    if tasks or commands:
        lines.append(f"beside it: {tasks} background task(s), {commands} background command(s) (/agents)")
    return "\n".join(lines)


def _usage(chat, args):
    if not chat.usage:
        return "no model calls yet"
    from kernel.types import USAGE_KEYS

    used = chat.usage
    tokens = ", ".join(f"{k[:-7].replace('_', ' ')} {used[k]}" for k in USAGE_KEYS if used.get(k))
    return f"tokens in this chat: {tokens or 'none reported'} (total {used.get('total_tokens', 0)}); " \
        f"model requests: {used.get('request_count', 0)}"


def quick(chat, name: str, args: str) -> "str | None":
    """hermes-agent's ``quick_commands`` (config.yaml): ``{type: exec, command}`` runs the command in a shell (the
    user's own, without the keys in its environment, for 30 seconds at most) and shows its output, masked;
    ``{type: alias, target: /other}`` runs that command with the arguments. None: ``name`` is none of them."""
    commands = chat.agent.config.get("quick_commands")
    commands = commands if isinstance(commands, dict) else {}
    entry = commands.get(name)
    if not isinstance(entry, dict):
        return None
    kind = entry.get("type")
    if kind == "alias" and str(entry.get("target") or "").strip():
        target = str(entry["target"]).strip().lstrip("/")
        aimed = commands.get(target.partition(" ")[0])
        if isinstance(aimed, dict) and aimed.get("type") == "alias":  # itself, or a ring of aliases: never ends
            return f"/{name}: its target /{target.partition(' ')[0]} is an alias too; aim quick_commands.{name}.target " \
                   "at a command"
        chat.slash(f"/{target} {args}".rstrip())
        return ""
    if kind != "exec" or not str(entry.get("command") or "").strip():
        return f"/{name}: quick_commands.{name} needs type: exec with a command, or type: alias with a target"
    import subprocess

    from plugins.tool_args import tool_environment

    agent = chat.agent
    try:
        done = subprocess.run(str(entry["command"]), shell=True, capture_output=True, text=True, errors="replace",
                              timeout=30, env=tool_environment(agent.secrets), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"/{name}: the command did not end within 30 s; it was stopped"
    output = agent.secrets.mask(done.stdout.strip() or done.stderr.strip()) or "(no output)"
    return output + (f"\n(exit {done.returncode})" if done.returncode else "")


def take_back(agent, exchanges: int = 1) -> "str | list | None":
    """Take back the last exchanges (``/undo [N]`` and ``/retry``): the history loses its ``exchanges``-th last user
    message (the first, when it has fewer) and everything after it, and continues in a new session linked to the old
    one (``reason="undo"``), so the stored transcript keeps what was said. The user's message taken back (its text,
    or its parts with the images), or None (nothing to undo, or another process writes the session)."""
    if agent.load_history():
        return None
    messages = agent.messages
    users = [i for i, message in enumerate(messages) if message.get("role") == "user"]
    if not users:
        return None
    last = users[-min(exchanges, len(users))]
    taken = messages[last].get("content")
    agent.messages = messages[:last]
    agent.rotate_session("undo")
    return taken if isinstance(taken, list) else text_of(taken)


def _undo(chat, args):
    """/undo [N]: the last N exchanges taken back; the first of their messages waits on the input line, to edit and
    send again (hermes-agent's)."""
    if args and (not args.isdigit() or int(args) < 1):
        return "usage: /undo [N] (the last N exchanges; 1 when not given)"
    taken = take_back(chat.agent, int(args or 1))
    if taken is None:
        return "nothing to undo"
    chat.prefill = text_of(taken)
    return f"took back: {clip(one_line(taken), 70)} (the chat goes on in session {chat.agent.session_id})"


def _retry(chat, args):
    taken = take_back(chat.agent)
    if taken is None:
        return "nothing to retry"
    chat.say(f"again: {clip(one_line(taken), 70)}")
    chat.turn(taken)


def _branch(chat, args):
    """hermes-agent's /branch: the chat goes on in a new session holding the conversation so far; the current one
    stays as it is, to go back to."""
    from hermes.cli.app import program

    agent = chat.agent
    if not agent.messages:
        return "nothing to branch yet: say something first"
    old = agent.session_id
    agent.rotate_session("branch")
    title = agent.host.registry[SLASH_COMMANDS].get("title")  # the sessions plugin's, when a store keeps them
    if args and title is not None:
        title.value(args, agent)
    return (f"branched{f' as {args!r}' if args else ''}: the chat goes on in session {agent.session_id}; "
            f"{old} stays as it was (`{program()} chat --resume {old}`)")


def _queue(chat, args):
    """/queue TEXT: typed during a turn it waits for the turn's end (busy.py); typed now, it is the next message."""
    if not args:
        return "usage: /queue TEXT  (typed while a turn runs, TEXT is sent when it ends)"
    chat.turn(args)


def _steer(chat, args):
    if not args:
        return "usage: /steer TEXT  (typed while a turn runs, the model reads TEXT after its current tool call)"
    chat.turn(args)  # no turn to steer: the next message


def _agents(chat, args):
    """hermes-agent's /agents: what runs beside the chat (/background's tasks, the model's background commands, a
    goal)."""
    from plugins.core_tools.processes import listed
    from plugins.terminal.goals import STATE

    goal = chat.agent.state.get(STATE)
    lines = [f"goal ({'paused: ' + goal.paused if goal.paused else 'pursued'}): {goal.text}"] if goal else []
    lines += [task.line() for task in chat.background.all] if chat.background else []
    for job in listed(chat.agent):
        state = f"running {job['seconds']:.0f} s" if job["status"] == "running" else \
            f"{job['status']}, exit {job['exit_code']}"
        lines.append(f"{job['process_id']}  pid {job['pid']}  {state}  {clip(job['command'], 60)}")
    return "\n".join(lines) or "nothing runs beside this chat"


def _stop(chat, args):
    from plugins.core_tools.processes import stop_running

    stopped = stop_running(chat.agent)
    return f"stopped {len(stopped)} background command(s): {', '.join(stopped)}" if stopped else \
        "no background command is running"


def _background(chat, args):
    from plugins.terminal.background import command

    return command(chat, args)


def _goal(chat, args):
    from plugins.terminal.goals import command

    return command(chat, args)


def _subgoal(chat, args):
    from plugins.terminal.goals import subgoal

    return subgoal(chat, args)


# what reads an image off the clipboard: Wayland's, X11's, macOS' (pngpaste)
CLIPBOARD = (  # (the types it holds, an image of one type); pngpaste (macOS) gives PNG only
    (["wl-paste", "--list-types"], ["wl-paste", "--no-newline", "--type", "{type}"]),
    (["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"], ["xclip", "-selection", "clipboard", "-t", "{type}",
                                                                   "-o"]),
    (None, ["pngpaste", "-"]))


def _clipboard(listing, argv) -> bytes:
    """The clipboard's image through one program: of the image types it lists, PNG first (a screenshot), else the
    first (a photo copied as JPEG); b"" when there is none."""
    import subprocess

    def run(args):
        return subprocess.run(args, capture_output=True, timeout=10, stdin=subprocess.DEVNULL).stdout

    kinds = ["image/png"]
    if listing is not None:
        listed = [t.strip() for t in run(listing).decode(errors="replace").splitlines() if t.startswith("image/")]
        kinds = sorted(listed, key=lambda t: t != "image/png")[:1]
    return run([part.replace("{type}", kinds[0]) for part in argv]) if kinds else b""


def _paste(chat, args):
    """hermes-agent's /paste: the clipboard's image (a screenshot, a copied photo) goes with the next message."""
    import subprocess

    from plugins.bounded import find_program
    from plugins.images import MAX_BYTES, fitted, sniff

    tried = [pair for pair in CLIPBOARD if find_program(pair[1][0])]
    for listing, argv in tried:
        try:
            raw = _clipboard(listing, argv)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if raw and len(raw) <= MAX_BYTES and sniff(raw):
            chat.images.append(fitted(raw, sniff(raw)))
            return f"attached the clipboard's image ({len(raw) // 1024 or 1} KB): it goes with your next message"
    if not tried:
        return "no clipboard program here (wl-paste, xclip or pngpaste): /image FILE, or drag the file in"
    return f"the clipboard holds no image ({', '.join(argv[0] for _, argv in tried)} asked)"


def _image(chat, args):
    from plugins.images import read_image

    if args == "clear":
        chat.images.clear()
        return "no image goes with your next message"
    if not args:
        return f"{len(chat.images)} image(s) go with your next message" if chat.images else \
            "usage: /image FILE (or drag the file into the terminal): it goes with your next message"
    try:
        chat.images.append(read_image(os.path.expanduser(args)))
    except ValueError as exc:
        return str(exc)
    return f"attached {os.path.basename(args)}: it goes with your next message ({len(chat.images)} image(s); " \
           "/image clear takes them back)"


def _clear(chat, args):
    if sys.stdout.isatty():
        sys.stdout.write("\x1b[H\x1b[2J\x1b[3J")  # the screen and its scrollback
    return _new(chat, args)


def _copy(chat, args):
    """The last answer to the clipboard through the terminal (OSC 52: kitty, iTerm2, WezTerm, tmux's set-clipboard)."""
    import base64

    answer = next((text_of(m.get("content")) for m in reversed(chat.agent.messages)
                   if m.get("role") == "assistant" and text_of(m.get("content")).strip()), "")
    if not answer:
        return "no answer to copy yet"
    sys.stdout.write(f"\x1b]52;c;{base64.b64encode(answer.encode()).decode()}\x07")
    return f"copied the last answer ({len(answer)} characters; a terminal that allows OSC 52 puts it on the clipboard)"


def _prompt(chat, args):
    """Write the next message in $VISUAL or $EDITOR (hermes-agent's /prompt), then send it."""
    import click

    try:
        text = click.edit(args or "", extension=".md", require_save=True)
    except click.ClickException as exc:
        return f"cannot open an editor: {exc.format_message()} (set $EDITOR)"
    if not text or not text.strip():
        return "nothing written: nothing sent"
    chat.turn(text.strip())


def _version(chat, args):
    from hermes.cli.app import program
    from kernel import __version__

    return f"{program()} {__version__}"


def _resume(chat, args):
    from hermes.cli.app import Fail, program
    from plugins.front import check_session

    if not args:  # the sessions plugin's /sessions lists the recent ones
        listing = chat.agent.host.registry[SLASH_COMMANDS].get("sessions")
        recent = listing.value("10", chat.agent) if listing is not None else ""
        return recent if "/resume" in recent else \
            f"usage: /resume ID or TITLE (a unique start of an id will do; `{program()} sessions list` shows them)"
    try:
        full = check_session(chat.app, args)
    except Fail as exc:
        return exc.format_message()
    if full == chat.agent.session_id:
        return f"already in session {full}"
    chat.agent.new_session(resume=full)
    from plugins.terminal.goals import restore

    restore(chat)
    if chat.restore_cwd:  # as `chat --resume` does
        from plugins.terminal.chat import to_sessions_folder

        to_sessions_folder(chat.app, full)
    return "\n".join(recap_of(chat.app, full, chat.agent))


BUILTIN = {
    "help": ("this list", _help),
    "new": ("start a new session (the current one stays stored)", _new),
    "resume": ("/resume ID: continue a stored session instead", _resume),
    "retry": ("send your last message again", _retry),
    "undo": ("take back your last message and its answer (/undo N: the last N); it waits on the line to edit",
             _undo),
    "model": ("show the model, or /model NAME [--provider NAME] [--global] to switch", settings.model),
    "tools": ("the tools the model may call", _tools),
    "toolsets": ("the toolsets, and which this chat offers", _toolsets),
    "history": ("what was said in this session (/history N: the last N exchanges)", _history),
    "usage": ("tokens used in this chat", _usage),
    "status": ("where this chat stands: its session, model, tokens, context, folder", _status),
    "reasoning": ("how hard the model thinks (/reasoning high [--global]), or /reasoning show|hide",
                  settings.reasoning),
    "fast": ("priority processing for this chat, OpenAI's or Claude's (/fast on|off [--global])", settings.fast),
    "busy": ("what a line typed during a turn does: /busy interrupt|queue|steer [--global]", settings.busy),
    "personality": ("the model's prompt: /personality NAME of config's personalities, or none", settings.personality),
    "paste": ("the clipboard's image (a screenshot) goes with your next message", _paste),
    "image": ("/image FILE: an image for the model to see with your next message", _image),
    "prompt": ("write your next message in $EDITOR, then send it", _prompt),
    "copy": ("copy the last answer to the clipboard (through the terminal)", _copy),
    "yolo": ("approvals off in this chat, or back (/yolo on|off)", settings.yolo),
    "clear": ("clear the screen and start a new session", _clear),
    "branch": ("/branch [TITLE]: go on in a copy of this session; this one stays as it is (also /fork)", _branch),
    "fork": ("/fork [TITLE]: /branch", _branch),
    "queue": ("/queue TEXT: typed during a turn, sent when it ends (also /q)", _queue),
    "q": ("/q TEXT: /queue", _queue),
    "steer": ("/steer TEXT: typed during a turn, the model reads it after its current tool call", _steer),
    "stop": ("stop the background commands the model started", _stop),
    "agents": ("what runs beside the chat: /background's tasks, the model's background commands, a goal (also "
               "/tasks)", _agents),
    "tasks": ("/agents", _agents),
    "background": ("/background PROMPT: worked on beside the chat, in a session of its own (also /bg)", _background),
    "bg": ("/bg PROMPT: /background", _background),
    "verbose": ("the tool calls shown: off, new, all, verbose, in turn", settings.verbose),
    "timestamps": ("the prompt says the time each message went: /timestamps [on|off] [--global]", settings.timestamps),
    "goal": ("/goal TEXT: work on it until a judge finds it done; /goal status|resume|clear", _goal),
    "subgoal": ("/subgoal TEXT: the goal must meet it too; /subgoal [remove N|clear] lists or drops them", _subgoal),
    "version": ("hermes' version", _version),
}
ELSEWHERE = {  # hermes-agent's chat commands that are called otherwise here
    "save": "/export [FILE.md]",
    "config": "`hermes config show`",
    "plugins": "`hermes plugins list`",
    "snapshot": "`hermes backup` (and `hermes import ZIP`)",
    "debug": "`hermes doctor --json` and `hermes logs`",
    "statusbar": "/status, when you want it",
    "footer": "/status, when you want it",
    "redraw": "Ctrl+L",
    "curator": "`hermes curator` (status, run, pin, restore, rollback)",
    "profile": "/status (the profile and its folder); `hermes -p NAME chat` chats as another (`hermes profile list`)",
}
