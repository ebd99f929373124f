"""What a chat may type to the gateway: the commands answered at once, while a turn runs (``/stop``, ``/approve``,
``/deny``, ``/status``, ``/sethome``, ``/help``), those that wait their turn (``/new``, chat's ``/retry``, ``/undo``,
``/model``, and every plugin's chat command), and the approval question a flagged tool call asks the chat."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click

from plugins.gateway.hookspecs import PlatformError

if TYPE_CHECKING:  # annotations only
    from plugins.gateway.runner import Chat

HELP = ("I answer each message here as one conversation that goes on. /new starts another, /stop stops the answer "
        "being written, /retry asks again, /undo takes the last exchange back, /model switches the model, /voice "
        "on|tts|off answers aloud, /status says where we are, /sethome makes this chat the one scheduled jobs answer "
        "in; when a command of mine needs your yes: /approve (or /approve session, /approve always), /deny.")
BUTTONS = [("✅ Once", "/approve"), ("This session", "/approve session"), ("Always", "/approve always"),
           ("❌ Deny", "/deny")]  # under an approval question, where the platform shows buttons
AT_ONCE = ("start", "help", "stop", "approve", "deny", "status", "sethome", "voice")  # answered while a turn runs
VOICE = {"on": "voice_only", "tts": "all", "off": "off"}  # /voice's words -> the chat's voice mode (hermes-agent's)
VOICE_SAID = {"voice_only": "a voice note is answered with a voice note too", "all": "every answer comes as a voice "
              "note too", "off": "answers come as text only"}


@dataclass
class Waiting:
    """An approval the chat was asked for."""

    event: threading.Event = field(default_factory=threading.Event)
    choice: str = "deny"


class Commands:
    """The gateway's commands (:class:`plugins.gateway.runner.Gateway` has them)."""

    def voice_mode(self, chat: Chat) -> str:
        """How the chat's answers are spoken: ``/voice``'s choice, else ``voice.auto_tts`` (hermes-agent's)."""
        return self.state["voice"].get(chat.key) or ("all" if self.config.get("voice.auto_tts") else "off")

    def _at_once(self, chat: Chat, text: str) -> None:
        """A command of :data:`AT_ONCE`, answered as it comes, while a turn runs (the others wait their turn)."""
        name, _, args = text[1:].partition(" ")
        name = name.lower()
        if name in ("start", "help"):
            self._send(chat, HELP)
        elif name == "stop":
            with self.lock:
                dropped = len(chat.queue)
                for _, item in chat.queue:
                    if item in self.state["inbox"]:
                        self.state["inbox"].remove(item)
                chat.queue.clear()
                self._save()
            running = chat.turning
            if running:
                self._deny_waiting(chat)
                chat.agent.interrupt()
            self._send(chat, "nothing is running" if not running and not dropped else
                       f"stopping{f' (and {dropped} message(s) waiting dropped)' if dropped else ''}")
        elif name in ("approve", "deny"):
            with self.lock:
                waiting = chat.pending.pop(0) if chat.pending else None
            if waiting is None:
                self._send(chat, "nothing waits for your approval")
            else:
                how = args.strip().lower()
                waiting.choice = "deny" if name == "deny" else how if how in ("session", "always") else "once"
                waiting.event.set()
        elif name == "sethome":
            with self.lock:
                self.state["homes"][chat.platform.name] = chat.chat
                self._save()
            self._send(chat, f"this chat is the home chat now: cron jobs delivering to {chat.platform.name} answer "
                             "here")
        elif name == "voice":
            word = args.strip().lower() or "status"
            if word not in (*VOICE, "status"):
                self._send(chat, "usage: /voice on (voice notes answered aloud), tts (every answer), off, status")
                return
            with self.lock:
                if word in VOICE:
                    self.state["voice"][chat.key] = VOICE[word]
                    self._save()
            mode = self.voice_mode(chat)
            ready = "" if mode == "off" or self.config.get("tts.provider") not in ("", "edge") else \
                " (but nothing speaks yet: set tts.provider, openai or a command of yours)"
            self._send(chat, f"voice: {VOICE_SAID[mode]}{ready}")
        elif name == "status":
            agent = chat.agent
            self._send(chat, f"session {self.state['sessions'].get(chat.key) or '(none yet)'}"
                       + (f", model {agent.provider_config.model}" if agent is not None else "")
                       + (", answering" if chat.busy else ", idle")
                       + (f", {len(chat.queue)} message(s) waiting" if chat.queue else ""))

    def _command(self, chat: Chat, text: str) -> None:
        from kernel.hints import close_matches
        from plugins.commands.hookspecs import SLASH_COMMANDS

        name, _, args = text[1:].partition(" ")
        name = name.lower()
        if name in ("new", "reset"):
            agent = self._agent(chat)
            agent.new_session()
            self._remember(chat)
            self._send(chat, f"a new conversation (session {agent.session_id})")
            return
        if name in ("retry", "undo", "model"):  # chat's own, as hermes-agent's gateway has them
            self._send(chat, self._chats_own(chat, name, args.strip()))
            return
        commands = self.app.host.registry[SLASH_COMMANDS]
        entry = commands.get(name)
        if entry is None:
            near = close_matches(name, [*commands, *AT_ONCE, "new", "retry", "undo", "model"], n=1)
            self._send(chat, f"unknown command /{name}" + (f" (did you mean /{near[0]}?)" if near else " (/help)"))
            return
        reply = entry.value(args.strip(), self._agent(chat))
        send = reply.get("send") if isinstance(reply, dict) else None
        reply = reply.get("reply") if isinstance(reply, dict) else reply
        if reply:
            self._send(chat, str(reply))
        if isinstance(send, str) and send.strip():  # the command asked for a turn (a skill and its task)
            self._turn(chat, send)

    def _chats_own(self, chat: Chat, name: str, args: str) -> str:
        """``/retry``, ``/undo [N]`` and ``/model [NAME] [--provider NAME] [--global]``, as ``hermes chat`` has them
        (:mod:`plugins.terminal.commands`: the exchange taken back goes on in a linked session)."""
        from types import SimpleNamespace

        from plugins.terminal.commands import take_back
        from plugins.terminal.recap import clip, one_line
        from plugins.terminal.settings import model

        agent = self._agent(chat)
        if name == "model":
            return model(SimpleNamespace(agent=agent, app=self.app), args)
        if name == "undo" and args and (not args.isdigit() or int(args) < 1):
            return "usage: /undo [N] (the last N exchanges; 1 when not given)"
        taken = take_back(agent, int(args or 1) if name == "undo" else 1)
        self._remember(chat)
        if taken is None:
            return f"nothing to {name}"
        if name == "undo":
            return f"took back: {clip(one_line(taken), 70)} (the chat goes on in session {agent.session_id})"
        self._send(chat, f"again: {clip(one_line(taken), 70)}")
        self._turn(chat, taken)
        return ""

    def _deny_waiting(self, chat: Chat) -> None:
        with self.lock:
            waiting, chat.pending = chat.pending, []
        for each in waiting:
            each.event.set()  # its choice: deny

    def ask(self, chat: Chat, tool_name: str, args: dict, message: str) -> str:
        from plugins.approval import what_runs
        from plugins.tool_args import masked

        waiting = Waiting()
        with self.lock:
            chat.pending.append(waiting)
        timeout = float(self.config.get("approvals.timeout") or 60)
        command = what_runs(tool_name, masked(args, chat.agent))
        question = (f"⚠️ {tool_name} needs your yes: {message.splitlines()[0] if message else ''}\n"
                    + (f"```\n{command[:1500]}\n```\n" if command else "")
                    + f"/approve (once), /approve session, /approve always, or /deny; no answer in {timeout:g} s: no")
        try:
            chat.platform.send(chat.chat, masked(question, chat.agent), buttons=BUTTONS)
        except PlatformError as exc:  # nobody can answer it: no
            click.echo(f"gateway: {chat.key}: could not ask for approval: {exc}", err=True)
            with self.lock:
                chat.pending.remove(waiting)
            return "deny"
        if not waiting.event.wait(timeout):
            with self.lock:
                if waiting in chat.pending:
                    chat.pending.remove(waiting)
            self._send(chat, f"denied: no answer in {timeout:g} s")
            return "deny"
        return waiting.choice
