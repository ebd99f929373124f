"""``hermes chat``: an interactive conversation on the terminal."""

from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path

import click

from hermes.cli.app import Fail, program
from hermes.host.plugins import paused_collector
from kernel import __version__
from kernel.messages import text_of
from kernel.types import add_usage
from plugins.front import (CtrlC, ask_store, build_agent, preload_skills, prepare_store, provider_options,
                            session_to_resume, skills_option)
from plugins.commands.hookspecs import SLASH_COMMANDS
from plugins.images import image_option
from plugins.text import printable

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
BELL, TIMESTAMPS = "display.bell_on_complete", "display.timestamps"  # hermes-agent's
EXPLAIN = "display.turn_completion_explainer"  # hermes-agent's: a turn that ended without an answer says why
PASTE_LINES, PASTE_CHARS = "paste_collapse_threshold", "paste_collapse_char_threshold"  # hermes-agent's
FIRST_LINES, LAST_LINES = "display.user_message_preview.first_lines", "display.user_message_preview.last_lines"
# a path at a line's start as a terminal pastes a dragged file: 'quoted', "quoted", or with its spaces escaped
DROPPED = re.compile(r"""(?:'([^']+)'|"([^"]+)"|((?:[~/]|file:)(?:\\ |\S)*))(?:\s+(.*))?$""", re.S)


@click.command()
@provider_options
@click.option("-c", "--continue", "cont", is_flag=True, help="Continue the latest chat.")
@click.option("-q", "--query", metavar="PROMPT",
              help="One turn and its answer, as `hermes run PROMPT` (hermes-agent's).")
@click.option("-w", "--worktree", is_flag=True, help="Work in a git worktree of this chat's own, on a new branch "
              "(hermes-agent's; removed at the end when nothing changed in it).")
@click.option("-Q", "--quiet", is_flag=True,
              help="No banner, no tool lines; each answer printed whole (hermes-agent's).")
@click.option("--checkpoints", is_flag=True, help="Snapshot a folder before a turn changes it (checkpoints.enabled).")
@click.option("--source", metavar="NAME", help="The sessions' platform (default cli; hermes-agent's: tool keeps an "
              "integration's sessions from `hermes chat -c`).")
@click.option("--accept-hooks", is_flag=True, help="Run config.yaml's shell hooks unapproved (HERMES_ACCEPT_HOOKS).")
@click.option("--no-restore-cwd", is_flag=True, help="Resumed, stay here instead of going to the folder the session "
              "started in (hermes-agent's).")
@skills_option
@click.option("--pass-session-id", is_flag=True, help="The system prompt names the session (prompt.pass_session_id; "
              "hermes-agent's).")
@click.option("--ignore-rules", is_flag=True, help="No AGENTS.md, SOUL.md or other context files, no memory, no "
              "preloaded skills from config (hermes-agent's; HERMES_IGNORE_RULES=1 too).")
@image_option
@click.pass_obj
def chat(app, query, worktree, quiet, checkpoints, source, accept_hooks, no_restore_cwd, preload, pass_session_id,
         ignore_rules, images, **opts):
    """An interactive conversation (Ctrl+C stops a turn, Ctrl+D quits)."""
    if pass_session_id:
        app.config.overrides["prompt.pass_session_id"] = True
    if ignore_rules or os.environ.get("HERMES_IGNORE_RULES") == "1":
        _ignore_rules(app.config)
    preload_skills(app, preload)
    if checkpoints:
        app.config.overrides["checkpoints.enabled"] = True
    if accept_hooks:
        os.environ["HERMES_ACCEPT_HOOKS"] = "1"
    if query is not None:  # hermes-agent's scripts call `hermes chat -q "..." [-Q]`: run prints only the answer
        root = click.get_current_context().find_root()
        root.meta["hermes.quiet"] = quiet  # run's display: no spinner nor tool lines, the answer whole
        run = lambda: root.invoke(root.command.get_command(root, "run"), prompt=(query,), as_json=False,  # noqa: E731
                                  images=list(images), **opts)
        return _in_worktree(run) if worktree else run()
    opts.update(quiet=quiet, platform=source or "cli", restore_cwd=not (no_restore_cwd or worktree), images=images)
    _first_run(app, opts)
    if worktree:
        return _in_worktree(lambda: _chat(app, opts))
    _chat(app, opts)


def _ignore_rules(config) -> None:
    """hermes-agent's --ignore-rules, for this chat: the plugins' keys that bring the user's and the project's rules
    in, turned off (a key no loaded plugin declares is left alone)."""
    off = {"prompt.disabled_layers": sorted({*(config.get("prompt.disabled_layers", None) or []), "context"}),
           "memory.memory_enabled": False, "memory.user_profile_enabled": False, "memory.provider": "",
           "skills.preload": [],  # and the memory tool (registered as the program started, with config's memory)
           "agent.disabled_tools": sorted({*(config.get("agent.disabled_tools", None) or []), "memory"})}
    if "prompt.identity" in config.keys and not config.get("prompt.identity"):  # SOUL.md's: the built-in one
        from plugins.prompt.layers import DEFAULT_IDENTITY

        off["prompt.identity"] = DEFAULT_IDENTITY
    config.overrides.update({key: value for key, value in off.items() if key in config.keys})


def _in_worktree(work) -> None:
    """``work()`` (the chat, or -q's turn) in a git worktree of its own (-w)."""
    from plugins.terminal.worktree import WorktreeError, create, finish

    started = os.getcwd()
    try:
        tree = create(Path(started))
    except WorktreeError as exc:
        raise Fail(str(exc)) from None
    click.echo(f"worktree {tree.path} (branch {tree.branch}, from {tree.base[:10]})", err=True)
    os.chdir(tree.path)  # the agent's tools start here
    try:
        work()
    finally:
        os.chdir(started)
        click.echo(finish(tree), err=True)


def _chat(app, opts: dict) -> None:
    from plugins.terminal.commands import BUILTIN
    from plugins.terminal.recap import recap_of
    from plugins.terminal.console import Console
    from plugins.terminal.line_editor import LineEditor, Pastes
    from plugins.terminal.style import paint

    quiet, platform, restore_cwd, images = (opts.pop(k) for k in ("quiet", "platform", "restore_cwd", "images"))
    with paused_collector():
        prepare_store(app, opts)
        session_id = session_to_resume(app, opts, platform)
        if session_id and restore_cwd:
            to_sessions_folder(app, session_id)
        console = Console(show_reasoning=bool(app.config.get("display.show_reasoning")), quiet=quiet,
                          markdown=app.config.get("display.final_response_markdown"))
        console.inbox = []
        commands = lambda: {**{n: h for n, (h, _) in BUILTIN.items()}, "exit": EXIT_HELP,  # noqa: E731
                            **{n: e.description for n, e in app.host.registry[SLASH_COMMANDS].items()}}
        # before the agent: building it starts its MCP servers, whose SDK import in the background would slow this
        editor = LineEditor(lambda: prompt(app.config), app.config.data_dir / "chat_history", commands,
                            lambda: (app.config.get(FIRST_LINES), app.config.get(LAST_LINES)),
                            Pastes(app.config.data_dir / "pastes", lambda: (app.config.get(PASTE_LINES),
                                                                            app.config.get(PASTE_CHARS))))
        agent = build_agent(app, opts, console, session_id=session_id, platform=platform)
    chat = Chat(app, agent, console)
    chat.restore_cwd = restore_cwd  # /resume goes to its session's folder too
    chat.images = list(images)  # --image: with the first message, as /image FILE does
    if not quiet:
        click.echo(paint(f"{program()} {__version__} · session {agent.session_id} · /help for commands, /exit to "
                         "leave", "dim", sys.stderr), err=True)
    if session_id:
        for line in recap_of(app, session_id):
            click.echo(printable(line, sys.stderr), err=True)
        from plugins.terminal.goals import restore

        restore(chat)
    threading.Thread(target=_ready_the_model, args=(agent,), name="hermes-ready-model", daemon=True).start()
    try:
        while True:
            text, chat.prefill = editor.read(bool(chat.background and chat.background.running), chat.prefill), ""
            if text is None:
                click.echo("", err=True)
                break
            if not text.strip():
                continue
            with chat.screen:  # a background task's answer waits for the turn's end
                if not chat.handle(text):
                    break
    finally:
        chat.close()


EXIT_HELP = "leave (Ctrl+D too); /exit --delete: and delete this chat's sessions (also /quit)"


def forget(agent, ids: list) -> str:
    """``/exit --delete`` (hermes-agent's ``/quit --delete``): this chat's sessions deleted from the store, once
    the chat has let them go."""
    from plugins.sessions import get_store
    from plugins.sessions.base import StoreError

    try:
        deleted, busy, _ = get_store(agent.config, agent.host).delete_unclaimed(ids)
    except StoreError as exc:
        return f"the sessions were not deleted: {exc}"
    kept = f"; {', '.join(busy)} kept: another process writes it" if busy else ""
    return f"deleted {len(deleted)} session{'s' * (len(deleted) != 1)} of this chat: {', '.join(deleted)}{kept}"


def prompt(config) -> str:
    """``hermes> ``, or with ``display.timestamps`` (hermes-agent's; chat's /timestamps) ``hermes 14:03> ``: drawn
    last as the line is sent, it says when each message went, and the next prompt when its answer ended."""
    if not config.get(TIMESTAMPS):
        return f"{program()}> "
    import time

    return f"{program()} {time.strftime(str(config.get('display.timestamp_format')))}> "


def to_sessions_folder(app, session_id: str) -> None:
    """A resumed chat works where the session started (its relative paths mean what they meant), as hermes-agent's."""
    folder = (ask_store(app, "session_info", needed=False, session_id=session_id) or {}).get("cwd")
    if not folder or os.path.realpath(folder) == os.path.realpath(os.getcwd()):
        return
    if not os.path.isdir(folder):
        click.echo(f"the session started in {folder}, which is gone: working here", err=True)
        return
    os.chdir(folder)
    click.echo(f"working in {folder}, where the session started (--no-restore-cwd stays where you are)", err=True)


def _first_run(app, opts: dict) -> None:
    """Nothing chosen of a model (a new user's first ``hermes``: no model, provider, URL or API mode, given or in
    config): offer the ``setup`` command a plugin adds, and chat on what it saved, as hermes-agent's first run does.
    Declined, the chat stops as before with what to do."""
    chosen = any(opts.get(k) or app.config.get(k) for k in ("model", "provider", "base_url", "api_mode"))
    if chosen or opts.get("cont") or opts.get("resume") or not sys.stdin.isatty():  # a stored session has its own
        return
    root = click.get_current_context().find_root()
    setup = root.command.get_command(root, "setup")
    if setup is None or not click.confirm(f"No model is chosen yet. Run `{program()} setup` now?", default=True,
                                          err=True):
        return
    root.invoke(setup)
    app.reload()  # what setup saved
    click.echo("", err=True)


def _ready_the_model(agent) -> None:
    """While the user types the first message: the provider's SDK imported and its client built (the provider
    checked its settings and key already, and put that off so that the prompt is drawn without waiting)."""
    try:
        getattr(agent.provider_for(agent.provider_config), "client", None)
    except Exception:  # noqa: BLE001 - the first turn says what is wrong, as one line
        pass


class Chat:
    """One chat: its agent, its display and what it has used so far."""

    def __init__(self, app, agent, console):
        self.app, self.agent, self.console = app, agent, console
        self.usage: dict = {}
        self.images: list = []  # (bytes, type) of each image for the next message: /image, a file dragged in
        self.typed: list = []  # what the user typed during turns, to send next (plugins.terminal.busy)
        self.title = None  # the thread naming the session (plugins.sessions.titles)
        self.written: set = set()  # the sessions its turns ran in: /exit --delete deletes them
        self.goal_session = ""  # the session its /goal was kept with (plugins.terminal.goals)
        self.forget = False
        self.restore_cwd = False  # /resume works in the folder its session started in (not with -w)
        self.prefill = ""  # what the next input line starts with (/undo's message taken back, to edit)
        self.background = None  # its /background tasks (plugins.terminal.background), from the first
        self.screen = threading.RLock()  # held while a turn or a command writes: a background answer waits for it

    def handle(self, text: str) -> bool:
        """A line the user sent; then what they typed while it ran, and what plugins queued. False: they leave."""
        while True:
            words = text.split()
            if words[:1] in (["/quit"], ["/exit"]):
                if words[1:] in ([], ["--delete"]):
                    self.forget = bool(words[1:])
                    return False
                self.say(f"usage: {words[0]} [--delete] (--delete: the sessions of this chat are deleted too)",
                         "error")
                text = None
            text = text and self.dropped(text)
            if text is not None:
                try:
                    self.slash(text) if text.startswith("/") else self.turn(text)
                except KeyboardInterrupt:  # Ctrl+C in a command's model call (/compress): the command stops, not chat
                    self.say("(interrupted)", "status")
                self.send_queued()
            if not self.typed:
                return True
            text = self.typed.pop(0)

    def turn(self, text: "str | list"):
        """A turn on what the user typed, with the images attached since (a list: a message as it was, /retry);
        its result."""
        from plugins.images import mode, with_images

        if isinstance(text, str):
            text = with_images(text, self.images, mode(self.agent.config, self.agent.provider_config.model))
        self.images = []
        from plugins.terminal.busy import BusyInput

        self.written.add(self.agent.session_id)
        with CtrlC(self.agent) as stop, BusyInput(self) as busy:
            result = self.agent.run_conversation(text)
        self.written.add(self.agent.session_id)  # compression may have gone on in a new one
        self.typed += busy.typed
        self.usage = add_usage(self.usage, result.usage)
        self.console.end_answer(result.final_response)
        if result.final_response and not result.interrupted:
            from plugins.sessions import titles

            if titles.wanted(self.agent):  # a session's first exchange: its title, beside it
                self.title = titles.start(self.agent, text_of(text), result.final_response)
        if self.agent.config.get(BELL) and sys.stdout.isatty():  # a long task done while the user looked elsewhere
            sys.stdout.write("\a")
            sys.stdout.flush()
        if result.exit_reason == "error":
            self.say(f"{program()}: error: {result.error}", "error")
        elif stop.stopped_by:  # hermes is asked to end: the turn is stored, the chat ends with it
            self.say(f"(stopped by {stop.stopped_by.name})", "status")
            raise SystemExit(128 + stop.stopped_by)
        elif result.interrupted:
            self.say("(interrupted)", "status")
        elif not (result.final_response or "").strip() and self.agent.config.get(EXPLAIN):
            self.say("(the iteration budget ran out before a final answer; raise it with --max-turns)"
                     if result.exit_reason == "budget_exhausted" else "(the model's answer was empty; /retry asks "
                     "again)", "status")
        return result

    def dropped(self, text: str) -> "str | None":
        """A line that starts with an image file's path (a terminal pastes a dragged file so: quoted, or its spaces
        escaped) attaches the image; the rest of the line is the message, and ``None`` when there is no rest."""
        found = DROPPED.match(text.strip())
        path = found and next(g for g in found.groups()[:3] if g).replace("\\ ", " ")
        if path and path.startswith("file://"):  # some terminals paste a file's URL
            from urllib.parse import unquote, urlparse

            path = unquote(urlparse(path).path)
        path = path and os.path.expanduser(path)
        if not path or not path.lower().endswith(IMAGE_SUFFIXES) or not os.path.isfile(path):
            return text
        from plugins.images import read_image

        try:
            self.images.append(read_image(path))
        except ValueError as exc:
            self.say(str(exc), "error")
            return None
        self.say(f"attached {os.path.basename(path)}" + ("" if found.group(4) else ": it goes with your next message"))
        return found.group(4) or None

    def send_queued(self, most: int = 5) -> None:
        """Send what plugins queued (``queue_user_message``) as the user's next messages; a plugin
        that queues one after every turn is stopped after ``most`` in a row."""
        for _ in range(most):
            if not self.console.inbox:
                return
            text = self.console.inbox.pop(0)
            self.say(f"(a plugin sends) {text.splitlines()[0][:200] if text.strip() else repr(text)}", "status")
            self.turn(text)
        if self.console.inbox:
            self.say(f"(dropped {len(self.console.inbox)} more messages plugins queued: {most} in a row is the most)",
                     "error")
            self.console.inbox.clear()

    def say(self, text: str, role: str = "dim") -> None:
        from plugins.terminal.style import paint

        click.echo(paint(printable(text, sys.stderr), role, sys.stderr), err=True)

    def slash(self, text: str) -> None:
        """Run an in-chat command: the chat's own, or one a plugin registered (``/name args``)."""
        from plugins.terminal.commands import BUILTIN, ELSEWHERE, quick

        name, _, args = text[1:].partition(" ")
        self.agent.emit("on_slash_command", name=name, args=args.strip())  # the spec is this plugin's own
        own = name in BUILTIN
        reply = BUILTIN[name][1](self, args.strip()) if own else quick(self, name, args.strip())
        if own or reply is not None:  # the chat's own, or one of config's quick_commands
            if reply:
                click.echo(printable(reply, sys.stdout))  # may quote stored text (/history, /resume) or a command
            return
        entry = self.agent.host.registry[SLASH_COMMANDS].get(name)
        if entry is None and name in ELSEWHERE:
            self.say(f"hermes-agent's /{name}: here, {ELSEWHERE[name]}", "error")
            return
        if entry is None:
            from kernel.hints import close_matches

            near = close_matches(name, [*BUILTIN, "exit", *self.agent.host.registry[SLASH_COMMANDS]], n=1)
            self.say(f"unknown command /{name} " + (f"(did you mean /{near[0]}?)" if near else "(try /help)"), "error")
            return
        try:
            reply = entry.value(args.strip(), self.agent)
        except Exception as exc:  # a plugin's command must not end the chat
            self.say(f"/{name} failed: {type(exc).__name__}: {exc}", "error")
            return
        send = reply.get("send") if isinstance(reply, dict) else None
        if isinstance(reply, dict):
            reply = reply.get("reply")
        if reply:
            click.echo(printable(str(reply), sys.stdout))  # a plugin's reply may quote the model or a file
        if isinstance(send, str) and send.strip():  # the command asked for a turn (a skill and its task)
            self.turn(send)

    def close(self) -> None:
        agent = self.agent
        for line in self.background.stop() if self.background else ():
            self.say(line, "status")
        if self.title is not None:  # a title still coming gets a few seconds to be stored
            from plugins.sessions.titles import WAIT

            self.title.join(WAIT)
        stored = agent.messages and agent.hook.append_messages.get_hookimpls()
        agent.close()
        if self.forget and self.written and agent.hook.append_messages.get_hookimpls():
            self.say(forget(agent, sorted(self.written)), "status")
        elif stored:
            self.say(f"resume it with: {program()} chat --resume {agent.session_id}")
