"""``hermes acp``: hermes as an Agent Client Protocol agent on stdio, for editors that speak it (Zed, JetBrains'
AI Assistant, Neovim's and Emacs' ACP clients), with the official SDK (``agent-client-protocol``).

A session is a hermes session (platform ``acp``, stored, resumable with ``session/load``) whose agent lives as long
as the connection; a prompt is a turn. While it runs, the editor sees the answer and the reasoning as they stream,
each tool call as it starts and ends, and hermes' approval question as a permission request (allow once, allow
for the session, reject); ``session/cancel`` interrupts the turn. The prompt's text, linked files and embedded
files are what the model reads; an image is too, or is kept and the model told where (:mod:`plugins.images`).
The editor's MCP servers join the configured ones. Turns run one at a time, in the session's folder. What plugin code
prints goes to stderr: the protocol owns stdout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
from dataclasses import dataclass
from typing import Any, Optional

from kernel import hookimpl
from plugins.tool_args import masked
from plugins_providers.reasoning import Effort
from plugins.tool_args import headline as title

log = logging.getLogger("hermes.acp")

KINDS = {"read_file": "read", "search_files": "search", "write_file": "edit", "patch": "edit", "terminal": "execute",
         "process": "execute", "execute_code": "execute", "web_search": "fetch", "web_extract": "fetch",
         "session_search": "search", "memory": "think", "todo": "think"}
STOPS = {"interrupted_by_user": "cancelled", "budget_exhausted": "max_turn_requests"}  # kernel.types.ExitReason


EFFORT = "reasoning_effort"  # the session's config option an editor shows as its thought level


@dataclass
class Session:
    agent: Any
    cwd: str
    relay: "Relay"
    streamed: bool = False  # the turn's answer reached the editor as it streamed


class Relay(Effort):
    """The callbacks of a session's agent (on its turn's thread): each becomes an update or a request to the editor,
    sent in order by the connection's sender; its calls go at the editor's reasoning level (``level``, set with
    session/set_config_option)."""

    __name__ = "acp-client"

    def __init__(self, server: "HermesAgent", session_id: str):
        super().__init__()
        self.server, self.session_id = server, session_id

    def _update(self, update) -> None:
        self.server.send(self.session_id, update)

    @hookimpl
    def on_stream_delta(self, text):
        from acp import update_agent_message_text

        self.server.sessions[self.session_id].streamed = True
        self._update(update_agent_message_text(text))

    @hookimpl
    def on_reasoning(self, text):
        from acp import update_agent_thought_text

        self._update(update_agent_thought_text(text))

    @hookimpl
    def on_tool_start(self, tool_name, args, tool_call_id, agent):
        from acp import start_tool_call

        args = masked(args, agent)  # a key the model typed into the call: not shown

        self._update(start_tool_call(tool_call_id, title(tool_name, args), kind=KINDS.get(tool_name, "other"),
                                     status="in_progress", raw_input=args))

    @hookimpl
    def on_tool_complete(self, tool_name, tool_call_id, result, status):
        from acp import text_block, tool_content, update_tool_call

        self._update(update_tool_call(tool_call_id, status="completed" if status == "ok" else "failed",
                                      content=[tool_content(text_block(result[:20_000]))]))

    @hookimpl
    def approve_tool_call(self, tool_name, args, message, agent):
        from acp.schema import PermissionOption, ToolCallUpdate

        args = masked(args, agent)

        options = [PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
                   PermissionOption(option_id="session", name="Allow for this session", kind="allow_always"),
                   PermissionOption(option_id="deny", name="Reject", kind="reject_once")]
        call = ToolCallUpdate(tool_call_id=f"approval-{id(args)}", title=f"{title(tool_name, args)}: {message}"[:500],
                              kind=KINDS.get(tool_name, "other"), status="pending", raw_input=args)
        try:
            answer = self.server.ask(self.session_id, call, options)
        except Exception as exc:  # noqa: BLE001 - the editor could not be asked: nobody to ask
            log.info("the editor could not be asked (%s): denied", exc)
            return None
        outcome = answer.outcome
        return outcome.option_id if getattr(outcome, "outcome", "") == "selected" else "deny"


def prompt_content(blocks: list, how: str) -> Any:
    """The prompt as the model gets it: its text, each file the editor attached or linked (read here), and its images
    (``how``: :mod:`plugins.images`' ``native``, parts of the message, or ``text``, kept for vision_analyze)."""
    from plugins.images import decoded, with_images

    parts, images = [], []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            image = decoded(block.data)  # its type told by its bytes, not by the editor's word
            if image is None:
                parts.append("[an image the editor sent could not be read]")
            else:
                images.append(image)
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(f"<file uri=\"{block.resource.uri}\">\n{block.resource.text}\n</file>")
        elif kind == "resource_link":
            parts.append(_linked(block.uri, block.name))
    return with_images("\n\n".join(p for p in parts if p), images, how)


def _linked(uri: str, name: str) -> str:
    from urllib.parse import unquote, urlparse

    path = unquote(urlparse(uri).path) if uri.startswith("file:") else ""
    try:
        with open(path, encoding="utf-8") as f:
            return f"<file uri=\"{uri}\">\n{f.read(200_000)}\n</file>"
    except (OSError, UnicodeDecodeError, ValueError):
        return f"[{name}]({uri})"


def mcp_servers(servers: list) -> dict:
    """The editor's MCP servers in config.yaml's ``mcp_servers`` form."""
    out = {}
    for server in servers or ():
        if getattr(server, "command", None):
            out[server.name] = {"command": server.command, "args": list(server.args),
                                "env": {e.name: e.value for e in server.env}}
        elif getattr(server, "url", None):
            out[server.name] = {"url": server.url, "headers": {h.name: h.value for h in server.headers}}
    return out


class HermesAgent:
    """The ACP agent: sessions of the configured hermes agent."""

    def __init__(self, app, opts: dict):
        self.app, self.opts = app, opts
        self.sessions: dict = {}
        self.conn = None
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.outbox: Optional[asyncio.Queue] = None
        self.turns = threading.Lock()  # one turn at a time: the process has one working folder
        app.config.overrides["terminal.cwd"] = ""  # the tools work in the folder the editor opened, not config's

    def on_connect(self, conn) -> None:
        self.conn = conn

    # -- what the agent's threads send, in order
    def send(self, session_id: str, update) -> None:
        self.loop.call_soon_threadsafe(self.outbox.put_nowait, (session_id, update, None))

    def ask(self, session_id: str, call, options):
        done: concurrent.futures.Future = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self.outbox.put_nowait, (session_id, (call, options), done))
        return done.result()

    async def sender(self) -> None:
        while True:
            session_id, item, done = await self.outbox.get()
            try:
                if done is None:
                    await self.conn.session_update(session_id=session_id, update=item)
                else:  # a question: asked once what came before it was sent, answered whenever
                    task = asyncio.ensure_future(self.conn.request_permission(
                        session_id=session_id, tool_call=item[0], options=item[1]))
                    task.add_done_callback(lambda t, d=done: d.set_exception(t.exception()) if t.exception()
                                           else d.set_result(t.result()))
            except Exception as exc:  # noqa: BLE001 - the editor went away mid-update
                log.info("an update did not reach the editor: %s", exc)
            finally:
                self.outbox.task_done()

    # -- the protocol
    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        from acp import PROTOCOL_VERSION
        from acp.schema import AgentCapabilities, Implementation, InitializeResponse, PromptCapabilities

        from kernel import __version__

        if self.outbox is None:
            self.loop, self.outbox = asyncio.get_running_loop(), asyncio.Queue()
            asyncio.ensure_future(self.sender())
        return InitializeResponse(protocol_version=min(protocol_version, PROTOCOL_VERSION), agent_capabilities=
                                  AgentCapabilities(load_session=True, prompt_capabilities=PromptCapabilities(
                                      embedded_context=True, image=True)), agent_info=Implementation(name="hermes",
                                                                                         version=__version__))

    async def new_session(self, cwd, mcp_servers=None, **kwargs):
        from acp.schema import NewSessionResponse

        session_id = await self._open(cwd, None, mcp_servers)
        return NewSessionResponse(session_id=session_id, config_options=_options(self.sessions[session_id]))

    async def load_session(self, cwd, session_id, mcp_servers=None, **kwargs):
        from acp import RequestError
        from acp.schema import LoadSessionResponse

        session_id = await self._open(cwd, session_id, mcp_servers)
        agent = self.sessions[session_id].agent
        refused = await asyncio.to_thread(agent.load_history)  # now: the editor shows the conversation so far
        if refused:
            raise RequestError.invalid_params({"sessionId": refused})
        for message in agent.messages:
            for update in _replayed(message):
                self.send(session_id, update)
        await self.outbox.join()
        return LoadSessionResponse(config_options=_options(self.sessions[session_id]))

    async def set_config_option(self, config_id, session_id, value, **kwargs):
        from acp import RequestError
        from acp.schema import SetSessionConfigOptionResponse

        from plugins_providers.reasoning import LEVELS

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no session '{session_id}' on this connection"})
        if config_id != EFFORT:
            raise RequestError.invalid_params({"configId": f"no option '{config_id}' (there is {EFFORT})"})
        if value not in ("default", *LEVELS):
            raise RequestError.invalid_params({"value": f"'{value}' is none of default, {', '.join(LEVELS)}"})
        session.relay.level = "" if value == "default" else value
        return SetSessionConfigOptionResponse(config_options=_options(session))

    async def _open(self, cwd: str, session_id: Optional[str], servers) -> str:
        from acp import RequestError

        from hermes.cli.app import Fail
        from plugins.front import build_agent, check_session

        if not os.path.isdir(cwd or ""):
            raise RequestError.invalid_params({"cwd": f"not a folder: {cwd}"})
        extra = mcp_servers(servers)
        if extra:
            configured = self.app.config.get("mcp_servers")
            self.app.config.overrides["mcp_servers"] = {**(configured if isinstance(configured, dict) else {}),
                                                        **extra}

        def build():
            with self.turns:
                os.chdir(cwd)  # the project's own files (AGENTS.md, skills) shape the session's prompt
                resumed = check_session(self.app, session_id) if session_id else None
                relay = Relay(self, "")
                agent = build_agent(self.app, dict(self.opts), relay, session_id=resumed, platform="acp")
                relay.session_id = agent.session_id
                return agent, relay

        try:
            agent, relay = await asyncio.to_thread(build)
        except Fail as exc:
            raise RequestError.invalid_params({"message": exc.message}) from None
        self.sessions[agent.session_id] = Session(agent, os.path.realpath(cwd), relay)
        return agent.session_id

    async def prompt(self, session_id, prompt, **kwargs):
        from acp import RequestError, update_agent_message_text
        from acp.schema import PromptResponse

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no session '{session_id}' on this connection"})
        from plugins.images import mode

        content = prompt_content(prompt, mode(session.agent.config, session.agent.provider_config.model))
        if isinstance(content, str) and not content.strip():
            raise RequestError.invalid_params({"prompt": "the prompt is empty"})

        def turn():
            with self.turns:
                os.chdir(session.cwd)
                session.streamed = False
                return session.agent.run_conversation(content)

        result = await asyncio.to_thread(turn)
        if result.final_response and not session.streamed:  # a provider that does not stream: the answer whole
            self.send(session_id, update_agent_message_text(result.final_response))
        if result.exit_reason == "error":
            self.send(session_id, update_agent_message_text(f"\n\nhermes: the turn failed: {result.error}"))
        await self.outbox.join()
        return PromptResponse(stop_reason=STOPS.get(result.exit_reason, "end_turn"))

    async def cancel(self, session_id, **kwargs):
        session = self.sessions.get(session_id)
        if session is not None:
            session.agent.interrupt()

    def close(self) -> None:
        for session in self.sessions.values():
            session.agent.close()


def _options(session: Session) -> list:
    """The session's settings an editor shows (ACP config options): how hard the model thinks, as configured
    (agent.reasoning_effort) or a level of the editor's."""
    from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

    from plugins_providers.reasoning import LEVELS, level_for

    agent = session.agent
    configured = level_for(agent.config, agent.provider_config.model) or "the model's own"
    choices = [SessionConfigSelectOption(value="default", name=f"As configured ({configured})")]
    return [SessionConfigOptionSelect(
        type="select", id=EFFORT, name="Reasoning effort", category="thought_level",
        description="How hard the model thinks (sent only to models known to take it)",
        current_value=session.relay.level or "default",
        options=choices + [SessionConfigSelectOption(value=level, name=level) for level in LEVELS])]


def _replayed(message: dict) -> list:
    """The editor's updates that show a stored message again (``session/load``): the user's and the model's text,
    and the user's images."""
    from acp import image_block, update_agent_message_text, update_user_message, update_user_message_text

    from plugins.images import data_url

    role, content = message.get("role"), message.get("content")
    if role not in ("user", "assistant"):
        return []
    updates = []
    for part in content if isinstance(content, list) else [{"type": "text", "text": content}]:
        image = part.get("image_url") if isinstance(part, dict) else None
        url = image.get("url") if isinstance(image, dict) else image
        text = part.get("text") if isinstance(part, dict) else None
        if role == "user" and isinstance(url, str) and url.startswith("data:"):
            mime, data = data_url(url)
            updates.append(update_user_message(image_block(data, mime)))
        elif isinstance(text, str) and text:
            updates.append((update_user_message_text if role == "user" else update_agent_message_text)(text))
    return updates


async def _serve(app, opts: dict, protocol_out) -> None:
    from acp import run_agent

    from hermes.cli.app import Fail

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", closefd=False))
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, protocol_out)
    except ValueError:  # a file: asyncio reads and writes pipes, sockets and terminals
        raise Fail("hermes acp talks over pipes: its stdin and stdout must be pipes (an editor starts it so)", 2) \
            from None
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    agent = HermesAgent(app, opts)
    try:
        await run_agent(agent, writer, reader)
    finally:
        agent.close()


def serve(app, opts: dict) -> None:
    """Speak ACP on stdin and the real stdout; everything else printed goes to stderr."""
    import sys

    from hermes.cli.output import document_stream

    real = document_stream()  # the real stdout (descriptor 1 may already be stderr: hermes.cli.output)
    real.flush()
    protocol_out = os.fdopen(os.dup(real.fileno()), "wb", buffering=0)
    if real.fileno() == 1:
        os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        asyncio.run(_serve(app, opts, protocol_out))
    except KeyboardInterrupt:
        pass
