"""The gateway at work: each platform's messages received on a thread of its own, one conversation per chat.

A chat's messages are answered in order, by an agent of its own (``platform`` the platform's name, its session
stored as any other and kept across restarts); chats run side by side, ``max_concurrent_sessions`` at once, and
the agents of the ``max_live_sessions`` chats used last stay built. Only the allowed users are answered (a
stranger is told their id, once). A message received is kept in the data folder's ``gateway/state.json`` until
its turn starts, with where receiving goes on: a gateway stopped or killed meanwhile answers it when it starts
again, and never receives a message twice. A flagged tool call asks the chat (``/approve``, ``/deny``) and is
denied after ``approvals.timeout`` seconds without an answer."""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from kernel import hookimpl
from plugins.gateway.commands import AT_ONCE, Commands
from plugins.gateway.hookspecs import Incoming, PlatformError, channel_of
from plugins.gateway.pairing import Pairing
from plugins.gateway.sending import LOCK, STATE, claim, media_of, send_parts, switched_on
from plugins.gateway.watching import watch
from plugins.images import keep
from plugins.tool_args import ORIGIN

log = logging.getLogger("hermes.gateway")
CHAT = "gateway.chat"  # agent.state key: the chat a gateway agent answers
RETRY_WAIT = (1, 2, 5, 10, 30)  # seconds between attempts to reach a platform that failed
MAKERS = {"image_generate": "photo", "text_to_speech": "audio"}  # tools whose file (their result's path) is sent
NOT_TEXT = "only text, pictures and voice notes are read here (another file is not)"


@dataclass
class Chat:
    platform: Any
    chat: str
    queue: deque = field(default_factory=deque)  # (text, inbox entry) waiting for their turn
    busy: bool = False  # a worker is answering its queue
    turning: bool = False  # a turn runs now
    agent: Any = None
    pending: list = field(default_factory=list)  # Waiting approvals, oldest first
    made: list = field(default_factory=list)  # (path, kind) of the files its turn's tools made, sent after the answer
    draft: Any = None  # the turn's answer as it is written (plugins.gateway.streaming), when the platform shows one
    active: float = 0.0  # when its turn last did something (a word streamed, a tool call, a model's answer)
    tool: str = ""  # the tool its turn runs now
    why: str = ""  # why its turn was stopped by the gateway (it stayed idle too long), said instead of "stopped"

    @property
    def key(self) -> str:
        return f"{self.platform.name}:{self.chat}"


def allowed_users(config, platform: str) -> "set | None":
    """The ids allowed on ``platform`` (hermes-agent's ``TELEGRAM_ALLOWED_USERS``, ``GATEWAY_ALLOWED_USERS``), or
    ``None`` for everybody (``TELEGRAM_ALLOW_ALL_USERS``, ``GATEWAY_ALLOW_ALL_USERS``: true)."""
    prefix = platform.upper()
    if any(switched_on(os.environ.get(v)) for v in (f"{prefix}_ALLOW_ALL_USERS", "GATEWAY_ALLOW_ALL_USERS")):
        return None
    listed = ",".join(os.environ.get(v, "") for v in (f"{prefix}_ALLOWED_USERS", "GATEWAY_ALLOWED_USERS"))
    return {u.strip() for u in listed.split(",") if u.strip()}


def fresh() -> dict:
    """The state of a gateway that never ran: offsets by platform, sessions, homes and voice modes by chat, the
    inbox."""
    return {"offsets": {}, "sessions": {}, "inbox": [], "homes": {}, "voice": {}}


class Gateway(Commands):
    def __init__(self, app, platforms: list):
        self.app, self.config, self.platforms = app, app.config, platforms
        self.lock, self.stopping = threading.RLock(), threading.Event()
        self.chats: dict = {}
        self.live: OrderedDict = OrderedDict()  # chat key -> its agent, least recently used first
        self.told: set = set()  # strangers told their id
        self.failure = ""  # why it stopped by itself (a platform that cannot go on)
        self.path = self.config.data_dir / STATE
        self.state = self._load()
        self.pairing = Pairing(self.config.data_dir)
        for platform in platforms:  # before they start: a stream opened at the start goes on from there
            kept = self.state["offsets"].get(platform.name)  # a number (Telegram's), or a platform's token
            platform.offset = kept if kept is not None else platform.offset
        most = int(self.config.get("max_concurrent_sessions") or 4)
        self.workers = ThreadPoolExecutor(most, thread_name_prefix="hermes-gateway")
        self.allowed = {p.name: None if (ids := allowed_users(self.config, p.name)) is None else {
            i.lower() for i in ids} for p in platforms}  # compared without case: Alice@Example.org is alice@...
        self.reacting = {p.name for p in platforms if callable(getattr(p, "react", None)) and switched_on(
            os.environ.get(f"{p.name.upper()}_REACTIONS", self.config.get(f"{p.name}.reactions")))}

    # -- the state file
    def _load(self) -> dict:
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return fresh()
        except (OSError, ValueError) as exc:  # kept aside, never written over: its sessions map is the user's
            aside = self.path.with_suffix(f".unreadable-{int(time.time())}")
            os.replace(self.path, aside)
            log.warning("gateway: %s could not be read (%s); kept as %s", self.path, exc, aside.name)
            return fresh()
        return {k: state.get(k) if isinstance(state.get(k), type(v)) else v for k, v in fresh().items()}

    def _save(self) -> None:
        from hermes.host.files import atomic_write

        with self.lock:
            try:
                atomic_write(self.path, json.dumps(self.state, indent=1))
            except OSError as exc:  # the answers go on; a restart meanwhile may answer a message twice or not
                log.warning("gateway: cannot write %s: %s", self.path, exc.strerror or exc)

    # -- running
    def hold(self) -> None:
        """This data folder's gateway is this process now (``gateway/gateway.lock``, its pid in it): a second one
        would answer the same inbox twice. :class:`PlatformError` (lasting) naming the one running."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.held = claim(self.config.data_dir / LOCK, str(os.getpid()), lambda pid: (
            f"a gateway already runs on this data folder (pid {pid or '?'})"))
        self.tokens = [self._hold_token(platform) for platform in self.platforms]

    def _hold_token(self, platform: Any):
        """One gateway per platform token among the profiles (hermes-agent's token locks): two profiles' gateways
        with one token (a profile cloned with its .env) would both take the bot's messages (Telegram refuses the
        second poller; a topic or a nickname answers twice). A lock per token in the folder holding the profiles."""
        import hashlib

        from hermes.cli.entry import profile_name, profiles_root
        from plugins.gateway.sending import token_variable

        value = os.environ.get(token_variable(platform.name)) or ""
        if not value:
            return None
        folder = Path(profiles_root()).parent / "gateway" / "tokens"
        folder.mkdir(parents=True, exist_ok=True)
        return claim(folder / f"{hashlib.sha256(f'{platform.name}:{value}'.encode()).hexdigest()[:24]}.lock",
                      f"{os.getpid()} profile {profile_name()} ({self.config.data_dir})", lambda said: (
                          f"{platform.name}: another gateway answers with its token (pid "
                          f"{said.partition(' ')[0] or '?'}, {said.partition(' ')[2] or 'another profile'}): one "
                          "token, one gateway"))

    def run(self) -> None:
        relay = Relay(self)
        self.app.host.pm.register(relay, name="gateway-relay")  # this gateway's agents' approvals, no one else's
        previous = {s: signal.signal(s, lambda *_: self.stopping.set())
                    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            for item in list(self.state["inbox"]):  # received before a stop, not yet answered
                platform = next((p for p in self.platforms if p.name == item.get("platform")), None)
                if platform is not None:
                    chat = self._chat(platform, str(item.get("chat")))
                    chat.queue.append((str(item.get("text")), item))
                    self._schedule(chat)
            for platform in self.platforms:
                threading.Thread(target=self._receive, args=(platform,), name=f"gateway-{platform.name}",
                                 daemon=True).start()
            while not self.stopping.wait(0.5):
                pass
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            self._stop()
            self.app.host.pm.unregister(relay)

    def _stop(self) -> None:
        self.stopping.set()
        with self.lock:
            running = [c for c in self.chats.values() if c.turning]
        for chat in running:  # stored as far as they got; the message stays in the inbox only when not yet started
            self._deny_waiting(chat)
            chat.agent.interrupt()
            self._send(chat, "(the gateway is stopping: this answer ends here; send it again to go on)")
        self.workers.shutdown(wait=True, cancel_futures=True)
        for agent in self.live.values():
            agent.close()
        for platform in self.platforms:
            platform.close()

    def _receive(self, platform) -> None:
        failures = 0
        while not self.stopping.is_set():
            try:
                messages = platform.receive()
                failures = 0
            except Exception as exc:  # noqa: BLE001 - a plugin's platform may raise anything: it is asked again
                if self.stopping.is_set():  # closed under it
                    return
                if not isinstance(exc, PlatformError):
                    log.exception("gateway: %s", platform.name)
                    exc = PlatformError(f"{platform.name}: {type(exc).__name__}: {exc}")
                if exc.lasting:  # `hermes gateway run` ends with it
                    self.failure = str(exc)
                    self.stopping.set()
                    return
                if not failures:
                    click.echo(f"gateway: {exc} (trying again)", err=True)
                self.stopping.wait(RETRY_WAIT[min(failures, len(RETRY_WAIT) - 1)])
                failures += 1
                continue
            with self.lock:  # the messages queued and where receiving goes on, kept together before any answer
                then = [self._sorted(platform, message) for message in messages]
                self.state["offsets"][platform.name] = platform.offset
                self._save()
            for each in then:
                if each is not None:
                    each()

    def _allowed(self, platform, message: Incoming) -> bool:
        allowed = self.allowed[platform.name]
        return allowed is None or message.admitted or message.user.lower() in allowed or automated(platform) or \
            self.pairing.approved(platform.name, message.user)  # `hermes pairing approve`d, at once

    def _hear(self, chat: Chat, text: str, voice: str) -> str:
        """The words of the voice note kept at ``voice`` (after ``text``, its caption), shown to the chat first
        (``stt.echo_transcripts``); "" when it cannot be heard, and the chat is told why."""
        from plugins.tts.listen import transcribe

        path = Path(voice)
        try:
            said = transcribe(path.read_bytes(), path.name.partition("-")[2] or "voice.ogg", self.config)
        except (OSError, ValueError) as exc:
            self._send(chat, str(exc) if isinstance(exc, ValueError) else f"the voice note is gone: {exc}")
            return ""
        finally:
            path.unlink(missing_ok=True)
        if self.config.get("stt.echo_transcripts", True):
            self._send(chat, f"🎤 {said or '(nothing heard)'}")
        return "\n\n".join(filter(None, [text, said]))

    def _sorted(self, platform, message: Incoming):
        try:
            return self._sort(platform, message)
        except Exception:  # noqa: BLE001 - one message that cannot be sorted must not stop the receiving
            log.exception("gateway: a %s message of %s could not be read", platform.name, message.user)
            return None

    def _sort(self, platform, message: Incoming):
        """Queue ``message`` (kept in the inbox), or what to do with it at once; ``None``: nothing."""
        if not message.addressed:
            return None
        chat = self._chat(platform, message.chat)
        if not self._allowed(platform, message):
            if (platform.name, message.user) in self.told:
                return None
            self.told.add((platform.name, message.user))
            log.warning("gateway: %s user %s (%s) is not allowed", platform.name, message.user, message.name)
            behaviour = str(self.config.get("unauthorized_dm_behavior") or "").lower()
            if behaviour == "ignore":
                return None
            code = self.pairing.code_for(platform.name, message.user, message.name) if behaviour == "pair" or (
                not behaviour and not self.allowed[platform.name]) else None  # pairing: nobody is allowed yet
            return lambda: self._send(chat, f"I only answer the people my owner allowed. Your {platform.name} user "
                                            f"id is {message.user}: the owner adds it to "
                                            f"{platform.name.upper()}_ALLOWED_USERS" + (
                                                f", or lets you in with `hermes pairing approve {platform.name} "
                                                f"{code}` (the code lasts an hour)." if code else "."))
        text = message.text.strip()
        if not text and not message.images and not message.missed and message.voice is None:
            return lambda: self._send(chat, NOT_TEXT)
        if text.startswith("/") and text[1:].partition(" ")[0].lower() in AT_ONCE and not automated(platform):
            return lambda: self._at_once(chat, text)
        text = "\n\n".join(filter(None, [text, message.missed]))
        item = {"platform": platform.name, "chat": message.chat, "text": text, "message": message.message,
                "at": time.time(), **({"skills": list(message.skills)} if message.skills else {})}
        try:
            if message.images:  # kept in the data folder's images/ (plugins.images): the inbox holds where
                item["images"] = [str(keep(*image)) for image in message.images]
            if message.voice is not None:  # kept until it is heard, in its turn (a transcription takes seconds)
                item["voice"] = str(self._kept_voice(*message.voice))
        except OSError as exc:  # a data folder that cannot be written: the model is told what did not come
            item["text"] = text = "\n\n".join(filter(None, [text, f"[the user sent a file that could not be kept "
                                                                   f"here: {exc.strerror or exc}]"]))
        self.state["inbox"].append(item)
        chat.queue.append((text, item))
        return lambda: self._schedule(chat)

    def _kept_voice(self, audio: bytes, name: str) -> Path:
        import hashlib

        from hermes.host.files import atomic_write

        path = self.path.parent / "voice" / f"{hashlib.sha256(audio).hexdigest()[:16]}-{Path(name).name}"
        atomic_write(path, audio)
        return path

    def _chat(self, platform, chat_id: str) -> Chat:
        with self.lock:
            return self.chats.setdefault(f"{platform.name}:{chat_id}", Chat(platform, chat_id))

    def _schedule(self, chat: Chat) -> None:
        with self.lock:
            if chat.queue and not chat.busy:
                chat.busy = True
                self.workers.submit(self._drain, chat)

    def _drain(self, chat: Chat) -> None:
        from hermes.cli.app import Fail

        while not self.stopping.is_set():
            with self.lock:
                if not chat.queue:
                    chat.busy = False
                    if automated(chat.platform):  # an event's conversation is done: its chat and agent go
                        self.chats.pop(chat.key, None)
                        if chat.key in self.live:
                            self.live.pop(chat.key).close()
                    return
                text, item = chat.queue.popleft()
                if item in self.state["inbox"]:
                    self.state["inbox"].remove(item)
                self._save()
            try:
                if item.get("voice"):
                    text = self._hear(chat, text, item["voice"])
                if not text and not item.get("images"):
                    continue  # a voice note not heard (the chat was told)
                if text.startswith("/") and not item.get("images") and not automated(chat.platform):
                    self._command(chat, text)
                    continue
                if self.config.get("gateway.message_timestamps.enabled") and item.get("at"):
                    from plugins.clock import now

                    text = f"[{now(self.config, item['at']):%a %Y-%m-%d %H:%M:%S %Z}] {text}"  # hermes-agent's
                if item.get("skills"):  # the skills plugin loads them with this message
                    self._agent(chat).state.setdefault("skills.pending", []).extend(item["skills"])
                self._react(chat, item, "working")
                outcome = "failed"
                try:
                    outcome = self._turn(chat, text, item.get("images") or [], heard=bool(item.get("voice")))
                finally:
                    self._react(chat, item, outcome)
            except Fail as exc:  # the agent could not be built (no model, a provider without its key)
                self._send(chat, f"⚠️ {exc.message}")
            except Exception as exc:  # noqa: BLE001 - one chat's failure is said there, the gateway goes on
                log.exception("gateway: %s", chat.key)
                self._send(chat, f"⚠️ that failed: {type(exc).__name__}: {exc}")
        with self.lock:
            chat.busy = False

    def _react(self, chat: Chat, item: dict, outcome: str) -> None:
        """The user's message marked with how its turn goes (``PLATFORM.reactions``: :meth:`Platform.react`)."""
        if item.get("message") and chat.platform.name in self.reacting:
            try:
                chat.platform.react(chat.chat, str(item["message"]), outcome)
            except Exception as exc:  # noqa: BLE001 - only a mark: a plugin's platform may raise anything
                log.warning("gateway: %s: no reaction: %s", chat.key, exc)

    # -- answering
    def _send(self, chat: Chat, text: str) -> None:
        from plugins.tool_args import masked

        try:
            send_parts(chat.platform, chat.chat, masked(text, chat.agent) if chat.agent is not None else text)
        except PlatformError as exc:
            click.echo(f"gateway: {chat.key}: could not send an answer: {exc}", err=True)

    def _agent(self, chat: Chat):
        """The chat's agent: kept while the chat is among the last used, its session carried across restarts."""
        from hermes.cli.app import Fail
        from plugins.front import build_agent, check_session

        if chat.agent is None:
            session = self.state["sessions"].get(chat.key)
            note = ""
            if session:
                try:
                    check_session(self.app, session)
                except Fail as exc:
                    session, note = None, f"(a new conversation: the last one could not go on: {exc.message})"
            chat.agent = build_agent(self.app, {}, None, session_id=session, platform=chat.platform.name)
            chat.agent.state[CHAT] = chat
            chat.agent.state[ORIGIN] = chat.key  # a job it schedules answers here
            if note:
                self._send(chat, note)
        with self.lock:
            self.live[chat.key] = chat.agent
            self.live.move_to_end(chat.key)
            most = max(int(self.config.get("max_live_sessions") or 16), 1)
            for key in list(self.live):  # the least recently used first; one answering now stays
                if len(self.live) <= most:
                    break
                if key != chat.key and not self.chats[key].busy:
                    self.live.pop(key).close()
                    self.chats[key].agent = None
        return chat.agent

    def _remember(self, chat: Chat) -> None:
        with self.lock:
            if automated(chat.platform):  # an event's conversation never goes on: nothing to keep
                return
            if self.state["sessions"].get(chat.key) != chat.agent.session_id:
                self.state["sessions"][chat.key] = chat.agent.session_id  # a new one, or rotated by compression
                self._save()

    def _turn(self, chat: Chat, text: "str | list", pictures: list = (), heard: bool = False) -> str:
        """A turn on ``text`` (or a message's parts, taken back by /retry) and the pictures kept at ``pictures``;
        ``heard``: it came as a voice note (``/voice on`` answers it aloud). How it ended: ``done``, ``failed`` or
        ``""`` (stopped)."""
        from kernel.types import ExitReason
        from plugins.images import mode, read_image, with_images

        agent = self._agent(chat)
        seen = []
        for path in pictures:
            try:
                seen.append(read_image(path))
            except ValueError as exc:  # removed since (30 days), or unreadable
                text += f"\n\n[the user sent a picture that is gone: {exc}]"
        message = text if isinstance(text, list) else with_images(text, seen, mode(agent.config,
                                                                                     agent.provider_config.model))
        done = threading.Event()
        chat.turning, chat.made, chat.why, chat.tool, chat.active = True, [], "", "", time.monotonic()
        threading.Thread(target=watch, args=(self, chat, done), daemon=True).start()
        if self.config.get(f"display.platforms.{chat.platform.name}.streaming") and \
                callable(getattr(chat.platform, "edit", None)):
            from plugins.gateway.streaming import Draft
            from plugins.tool_args import masked

            agent.stream = True
            chat.draft = Draft(chat.platform, chat.chat, lambda text: masked(text, agent),
                               progress=self.config.get("display.tool_progress", "all") not in ("off", False),
                               every=self.config.get("streaming.edit_interval"),
                               cursor=str(self.config.get("streaming.cursor")))
        prompts = self.config.get(f"{chat.platform.name}.channel_prompts") or {}
        own = {str(k): v for k, v in prompts.items()} if isinstance(prompts, dict) else {}
        own = own.get(chat.chat) or own.get(channel_of(chat.chat)[0])  # a thread's: its channel's
        system = "\n\n".join(filter(None, [self.config.get("agent.system_prompt"), own])) if own else None
        try:
            result = agent.run_conversation(message, system_message=system)
        except BaseException:
            if chat.draft is not None:  # its thread ends with the turn
                chat.draft, _ = None, chat.draft.finish("")
            raise
        finally:
            chat.turning = False
            done.set()
            self._remember(chat)
        from plugins.sessions import titles

        if titles.wanted(agent) and (result.final_response or "").strip():  # its first exchange: a title, beside it
            titles.start(agent, text if isinstance(text, str) else "", result.final_response)
        answer, named = media_of(result.final_response or "")
        if chat.draft is not None:
            answer, chat.draft = chat.draft.finish(answer), None
        if answer.strip():
            self._send(chat, answer)
        if answer.strip() and (self.voice_mode(chat) == "all" or heard and self.voice_mode(chat) == "voice_only"):
            self._aloud(chat, agent, answer)
        for path, kind in [*chat.made, *((p, k) for p, k in named if self._may_send(chat, p))]:
            try:
                chat.platform.send_file(chat.chat, path, kind)
            except (OSError, PlatformError) as exc:
                self._send(chat, f"(could not send {path}: {exc.strerror if isinstance(exc, OSError) else exc})")
        if result.exit_reason == ExitReason.ERROR:
            self._send(chat, f"⚠️ {result.error}")
            return "failed"
        if result.exit_reason == ExitReason.INTERRUPTED:
            if not self.stopping.is_set():
                self._send(chat, chat.why or "stopped")
            return ""
        if result.exit_reason == ExitReason.BUDGET:
            self._send(chat, "(the step budget ran out: send \"go on\" to continue)")
        return "done"

    def _aloud(self, chat: Chat, agent, answer: str) -> None:
        """The answer as a voice note too (``/voice``), spoken by the tts plugin's backend (``tts.provider``)."""
        from kernel.types import ToolError
        from plugins.tool_args import fresh_path
        from plugins.tts import speak, spoken

        words = spoken(answer)
        try:
            made = speak(agent, words, fresh_path(self.config.data_dir / "audio_cache", words, ".ogg", "answer"))
            chat.platform.send_file(chat.chat, made["path"], "audio")
        except (ToolError, OSError, PlatformError) as exc:
            self._send(chat, f"(no voice note: {str(exc).removeprefix('text_to_speech: ')})")

    def _may_send(self, chat: Chat, path: str) -> bool:
        """Whether a file the model names (``MEDIA:``) may go to the chat, as hermes-agent's gateway decides: under
        ``gateway.media_delivery_allow_dirs``, or changed in the last ``gateway.trust_recent_files_seconds`` (a file
        the turn made) while ``gateway.trust_recent_files`` is on; else the chat is told why not."""
        where = os.path.realpath(path)
        allowed = [os.path.realpath(os.path.expanduser(str(d))) for d in self.config.get(
            "gateway.media_delivery_allow_dirs") or []]
        if any(where == d or where.startswith(d.rstrip(os.sep) + os.sep) for d in allowed):
            return True
        recent = float(self.config.get("gateway.trust_recent_files_seconds") or 0)
        try:
            if self.config.get("gateway.trust_recent_files") and time.time() - os.stat(where).st_mtime <= recent:
                return True
        except OSError:
            return True  # not there: sending it says so
        self._send(chat, f"(not sent: {path} was not changed in the last {recent:g} s and is not under "
                         "gateway.media_delivery_allow_dirs)")
        return False

    # -- commands


def chat_of(agent) -> "Chat | None":
    """The chat a gateway agent answers, or its parent's for a subagent (its approvals asked there, its work the
    turn's); ``None`` for any other agent of the process (a cron job's)."""
    while agent is not None:
        chat = (getattr(agent, "state", None) or {}).get(CHAT)
        if chat is not None:
            return chat
        agent = getattr(agent, "parent", None)
    return None


def automated(platform) -> bool:
    """A platform whose messages machines send (webhooks): it checks its senders itself, and they send no commands
    and approve nothing."""
    return bool(getattr(platform, "automated", False))


class Relay:
    """The approvals of the gateway's agents go to their chat, and the files their tools make follow their answer
    (registered while ``hermes gateway run`` runs)."""

    def __init__(self, gateway: Gateway):
        self.gateway = gateway

    @staticmethod
    def _active(agent, tool: "str | None" = None) -> "Chat | None":
        """The agent's chat, its turn marked active now (and ``tool`` the one running, when given)."""
        chat = chat_of(agent)
        if chat is not None:
            chat.active = time.monotonic()
            chat.tool = chat.tool if tool is None else tool
        return chat

    @hookimpl
    def on_stream_delta(self, text, agent):
        chat = self._active(agent)
        if chat is not None and chat.draft is not None:
            chat.draft.add(text)

    @hookimpl
    def on_reasoning(self, agent):
        self._active(agent)

    @hookimpl
    def post_api_request(self, agent):
        self._active(agent)

    @hookimpl
    def on_tool_progress(self, agent):
        self._active(agent)

    @hookimpl
    def on_tool_start(self, tool_name, args, agent):
        from plugins.tool_args import headline

        chat = self._active(agent, tool_name)
        if chat is not None and chat.draft is not None:
            chat.draft.tool_started(headline(tool_name, args, 80))

    @hookimpl
    def on_tool_complete(self, tool_name, result, status, agent):
        chat = self._active(agent, "")
        if chat is None or status != "ok" or tool_name not in MAKERS:
            return
        try:
            path = json.loads(result).get("path")
        except (ValueError, AttributeError):
            return
        if isinstance(path, str) and path:
            chat.made.append((path, MAKERS[tool_name]))

    @hookimpl
    def approve_tool_call(self, tool_name, args, message, agent):
        chat = chat_of(agent)
        if chat is None:
            return None
        if automated(chat.platform):  # nobody there to approve
            return False
        choice = self.gateway.ask(chat, tool_name, args, message)
        return False if choice == "deny" else choice
