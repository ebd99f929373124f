"""The MCP servers of this process: one thread runs an asyncio loop, each server
a task on it that holds its session (anyio's scopes must end in the task that
opened them). Agents' threads hand their calls to that loop and wait, waking
for their interrupt and their deadline.

Servers are the process's, shared by every agent in it (a ``hermes serve`` has
many): they start together when the first agent is built, each within its
``connect_timeout``; one that fails to start or dies is reported once, its tools
answer with an error naming it, and the next call connects again. stdio servers
run under :mod:`plugins.mcp.guard`, so none outlives hermes however it ends;
their stderr goes to ``logs/mcp-stderr.log`` in the data folder.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import shutil
import sys
import threading
import time
import weakref
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Callable, Optional

from kernel.secrets import Secrets
from plugins.tool_args import tool_environment
from kernel.types import ToolError
from plugins.mcp import tools as mcp_tools
from plugins.mcp.config import Server, problems, resolve, tls_context
from plugins.tls import advice

log = logging.getLogger("hermes.mcp")
GUARD = Path(__file__).with_name("guard.py")
SHUTDOWN_WAIT = 1.5  # seconds exit waits for the servers to stop; their guards end what is left
POLL = 0.05  # how often a waiting call looks at its agent's interrupt


class Connection:
    """One server: its state, its session while connected, and its tools' listing."""

    def __init__(self, server: Server, manager: "Manager"):
        self.server, self.manager = server, manager
        self.state = "stopped"  # connecting, ready, failed, stopped
        self.error = ""
        self.session: Any = None
        self.listed: list = []  # the server's mcp Tool records, as last listed
        self.capabilities: Any = None
        self.connect_seconds: Optional[float] = None
        self.ready = threading.Event()  # set when a connection attempt ended, either way
        self.relisted = threading.Event()  # clear while a changed tool list is being listed again
        self.relisted.set()
        self.reported = ""  # the last error said on stderr (each failure is said once)
        self._stop: Optional[asyncio.Event] = None
        self.attempt = 0  # each start is a new attempt; an older one's end changes nothing
        self._starting = threading.Lock()
        self.task: Optional[asyncio.Task] = None

    # ------------------------------------------------------------ on the loop
    def _transport(self):
        from mcp.client.stdio import StdioServerParameters, stdio_client

        server = self.server
        if server.transport == "stdio":
            env = self.manager.environment({k: resolve(v) for k, v in server.env.items()})
            params = StdioServerParameters(command=sys.executable,
                                           args=["-I", "-S", str(GUARD), str(os.getpid()), server.command,
                                                 *server.args], env=env, cwd=server.cwd or None)
            return stdio_client(params, errlog=self.manager.stderr_log(server.name))
        headers = {k: resolve(v) for k, v in server.headers.items()}
        client = client_factory(tls_context(server))
        auth = None
        if server.auth == "oauth":  # with the tokens of `hermes mcp login`
            from hermes.host.paths import data_dir
            from plugins.mcp.oauth import provider

            auth = provider(server, data_dir())
        if server.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(server.url, headers=headers, timeout=server.connect_timeout, auth=auth,
                              httpx_client_factory=client)
        from mcp.client.streamable_http import streamable_http_client

        return streamable_http_client(server.url, http_client=client(headers=headers, auth=auth))

    async def run(self, attempt: int, stop: asyncio.Event) -> None:
        """One connection's life: connect and list within the connect timeout, then hold the session until
        asked to stop or the server goes away. Only the latest attempt writes the state."""
        from mcp import ClientSession
        from mcp_types import Implementation

        started, error, gone = time.monotonic(), "", asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                async with asyncio.timeout(self.server.connect_timeout):
                    read, write = await stack.enter_async_context(self._transport())
                    read = _watched(read, gone, stack)
                    session = await stack.enter_async_context(ClientSession(
                        read, write, message_handler=self._on_message, client_info=Implementation(
                            name="hermes", version=_version()), **self.manager.sampling_for(self.server)))
                    result = await session.initialize()
                    capabilities = result.capabilities
                    listed = await self._list(session, capabilities)
                if attempt != self.attempt:
                    return
                self.session, self.capabilities, self.listed, self.state = session, capabilities, listed, "ready"
                self.connect_seconds = time.monotonic() - started
                self.ready.set()
                self.manager.changed()
                await _first(stop.wait(), gone.wait())
                if gone.is_set() and not stop.is_set():
                    raise EOFError("the server closed the connection")
        except asyncio.CancelledError:
            error = "stopped"
        except BaseException as exc:  # noqa: BLE001 - a server's failure is reported, never ours
            error = _why(exc, self.server)
        if attempt != self.attempt:
            return
        self.session, self.error = None, self.error or ("" if error == "stopped" else error)
        self.state = "failed" if self.error else "stopped"
        if self.error:
            self.manager.report(self)  # before the waiters go on: said by the time the first call is made
        self.ready.set()
        self.manager.changed()

    async def _list(self, session, capabilities: Any) -> list:
        listed, cursor = [], None
        if getattr(capabilities, "tools", None) is None:
            return listed
        while True:
            from mcp_types import PaginatedRequestParams

            page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            listed += page.tools
            cursor = page.next_cursor
            if not cursor:
                return listed

    async def _on_message(self, message) -> None:
        """A server's notification: a changed tool list is listed again (the agents are told at once, and
        wait for the new list before their next model call)."""
        if type(message).__name__ == "ToolListChangedNotification" and self.session is not None:
            self.relisted.clear()
            self.manager.changed()
            asyncio.get_running_loop().create_task(self._relist(self.session))

    async def _relist(self, session) -> None:
        try:
            self.listed = await self._list(session, self.capabilities)
        except Exception as exc:  # noqa: BLE001 - the old list stays
            log.debug("MCP server %s: listing its tools again failed: %s", self.server.name, exc)
        finally:
            self.relisted.set()
            self.manager.changed()

    def stop(self, error: str = "") -> None:
        """End the connection (``error``: why, when the server failed); the next call connects again."""
        if self.state in ("connecting", "ready"):
            self.state, self.session, self.error = ("failed" if error else "stopped"), None, error
        if self._stop is not None:
            self.manager.loop.call_soon_threadsafe(self._stop.set)

    # ------------------------------------------------------- from any thread
    def start(self) -> None:
        """Connect in the background (once at a time: parallel calls may all find it gone)."""
        with self._starting:
            if self.state in ("connecting", "ready"):
                return
            self.ready.clear()
            self.state, self.error, self.attempt = "connecting", "", self.attempt + 1
            self._stop = asyncio.Event()
            self.task = asyncio.run_coroutine_threadsafe(self.run(self.attempt, self._stop), self.manager.loop)

    def call(self, work: Callable, timeout: float, agent: Any = None) -> Any:
        """Run ``work(session)`` on the loop and wait for its answer: connecting first if the server is not
        connected, giving up past ``timeout`` or at the agent's interrupt (the request is cancelled, the server
        told)."""
        name = self.server.name
        if self.state != "ready":
            self.start()
            self.wait(self.server.connect_timeout, agent)
        session = self.session
        if agent is not None and self.manager.sampler is not None:
            self.manager.sampler.agents[name] = agent  # a sampling request during this call uses its model
        if session is None:
            raise ToolError(f"MCP server '{name}' is not connected: {self.error or 'it stopped'}")
        future = asyncio.run_coroutine_threadsafe(work(session), self.manager.loop)
        deadline = time.monotonic() + timeout
        while True:
            try:
                return future.result(timeout=POLL)
            except concurrent.futures.TimeoutError:
                if agent is not None and agent.interrupted:
                    future.cancel()
                    raise ToolError(f"MCP server '{name}': the call was cancelled (the user interrupted)") from None
                if time.monotonic() >= deadline:
                    future.cancel()
                    raise ToolError(f"MCP server '{name}': no answer within {timeout:g}s (its timeout); "
                                    "the call was cancelled") from None
            except concurrent.futures.CancelledError:
                raise ToolError(f"MCP server '{name}': the call was cancelled") from None
            except ToolError:
                raise
            except Exception as exc:  # noqa: BLE001 - the server's answer or its death
                if self.session is not session or self._gone(exc):
                    self.stop(_why(exc, self.server))
                    self.manager.report(self)
                    raise ToolError(f"MCP server '{name}' went away during the call ({self.error}); "
                                    "the next call connects again") from None
                raise ToolError(f"MCP server '{name}': {_why(exc, self.server)}") from None
            except BaseException:  # the user's interrupt, raised into this thread: the server is told too
                future.cancel()
                raise

    def _gone(self, exc: BaseException) -> bool:
        code = getattr(getattr(exc, "error", None), "code", None)
        return code == -32000 or "closed" in str(exc).lower() or isinstance(exc, (OSError, EOFError))

    def wait(self, seconds: float, agent: Any = None) -> None:
        deadline = time.monotonic() + seconds
        while not self.ready.wait(POLL):
            if time.monotonic() >= deadline or (agent is not None and agent.interrupted):
                return


class Manager:
    """Every server of this process (see the module's docstring)."""

    def __init__(self, data_dir: Path, secrets: Secrets):
        self.data_dir, self.secrets = data_dir, secrets
        self.connections: dict = {}  # name -> Connection
        self.agents: weakref.WeakSet = weakref.WeakSet()  # told when a tool list changes
        self.sampler: Optional[Callable] = None  # set by the plugin: answers a server's sampling request
        self.quiet = False  # True where a command shows the servers' state itself (hermes mcp list)
        self._lock = threading.Lock()
        self._log_file: Any = None
        self.loop = asyncio.new_event_loop()
        thread = threading.Thread(target=self.loop.run_forever, name="hermes-mcp", daemon=True)
        thread.start()
        atexit.register(self.shutdown)
        _quiet_sdk_logging(self.log_path)

    @property
    def log_path(self) -> Path:
        return self.data_dir / "logs" / "mcp-stderr.log"

    def stderr_log(self, name: str):
        """The file every stdio server's stderr goes to, opened once (a line marks where each server starts)."""
        with self._lock:
            if self._log_file is None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log_file = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - for the process's life
            self._log_file.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting MCP server {name}\n")
            self._log_file.flush()
            return self._log_file

    def environment(self, granted: dict) -> dict:
        """A stdio server's environment: hermes' without its secrets (as a terminal command gets it), plus what
        its entry grants."""
        return tool_environment(self.secrets, granted)

    def sampling_for(self, server: Server) -> dict:
        if self.sampler is None or not server.sampling.get("enabled"):
            return {}
        sampler = self.sampler

        async def answer(context, params):
            return await asyncio.get_running_loop().run_in_executor(None, sampler, server, params)

        return {"sampling_callback": answer}

    def update(self, servers: dict, start: Optional[set] = None) -> None:
        """Start the enabled servers not yet started (of those named in ``start``, when given: the others wait for
        an agent whose toolsets choose them); stop those no longer configured (or changed)."""
        with self._lock:
            for name, conn in list(self.connections.items()):
                if name not in servers or servers[name] != conn.server:
                    conn.stop()
                    del self.connections[name]
            for name, server in servers.items():
                if server.enabled and name not in self.connections and (start is None or name in start):
                    self.connections[name] = conn = Connection(server, self)
                    wrong = problems(server) or self._missing_program(server)
                    if wrong:
                        conn.state, conn.error = "failed", "; ".join(wrong)
                        conn.ready.set()
                        self.report(conn)
                    else:
                        conn.start()

    def _missing_program(self, server: Server) -> list:
        """A stdio server whose program is not there: said now, not as a connection that closed."""
        if server.transport != "stdio":
            return []
        command = server.command
        if os.sep in command and not os.path.isabs(command):  # ./run.sh: where the server runs
            command = os.path.join(server.cwd or os.getcwd(), command)
        if os.path.isabs(command):
            return [] if os.access(command, os.X_OK) else [f"its command {server.command!r} is not an executable file"]
        path = self.environment({k: resolve(v) for k, v in server.env.items()}).get("PATH")
        return [] if shutil.which(command, path=path) else [f"its command {command!r} was not found on PATH"]

    def wait_connecting(self, seconds: float, agent: Any = None, names: Optional[set] = None) -> None:
        """Wait until no server (of ``names``, when given) is still connecting (each within its connect timeout), at
        most ``seconds``."""
        deadline = time.monotonic() + seconds
        for name, conn in list(self.connections.items()):
            if names is not None and name not in names:
                continue
            conn.wait(min(conn.server.connect_timeout, max(0.0, deadline - time.monotonic())), agent)

    def changed(self) -> None:
        for agent in list(self.agents):
            agent.tools_changed()

    def report(self, conn: Connection) -> None:
        """Say a server's failure on stderr, once for each new reason."""
        if conn.error and conn.error != conn.reported:
            conn.reported = conn.error
            if self.quiet:
                return
            log.warning("MCP server '%s' (%s): %s", conn.server.name, conn.server.source, conn.error)

    def tools(self, cache: Path) -> list:
        """The tools of every connected server, as hermes tools."""
        found = []
        for conn in list(self.connections.values()):
            conn.relisted.wait(conn.server.timeout if conn.state == "ready" else 0)  # a changed list: the new one
            found += tools_of(conn, cache)  # one that went away keeps its tools: a call says so, and reconnects
        return found

    def shutdown(self) -> None:
        """Stop every server, waiting at most :data:`SHUTDOWN_WAIT`; their guards end what is left."""
        with self._lock:
            connections = list(self.connections.values())
            self.connections.clear()
        tasks = [c.task for c in connections if c.task is not None]
        for conn in connections:
            conn.stop()
        if tasks:
            concurrent.futures.wait(tasks, timeout=SHUTDOWN_WAIT)


def tools_of(conn: Connection, cache: Path) -> list:
    """A connected server's tools, by its ``tools`` policy, with the utility tools it allows."""
    server = conn.server

    def handler(name: str) -> Callable:
        def call(args: dict, ctx) -> str:
            result = conn.call(lambda session: session.call_tool(name, arguments=args), server.timeout,
                               getattr(ctx, "agent", None))
            return mcp_tools.call_result(result, cache)
        return call

    def utility(kind: str) -> Callable:
        def call(args: dict, ctx) -> str:
            def work(session):
                if kind == "list_resources":
                    return session.list_resources()
                if kind == "read_resource":
                    return session.read_resource(str(args.get("uri") or ""))
                if kind == "list_prompts":
                    return session.list_prompts()
                return session.get_prompt(str(args.get("name") or ""), arguments={
                    str(k): str(v) for k, v in (args.get("arguments") or {}).items()})
            return mcp_tools.describe_listing(kind, conn.call(work, server.timeout, getattr(ctx, "agent", None)), cache)
        return call

    made = []
    for tool in conn.listed:
        if server.offers(tool.name):
            made.append(mcp_tools.make_tool(
                server, mcp_tools.tool_name(server.name, tool.name),
                tool.description or f"MCP tool {tool.name} of server {server.name}",
                mcp_tools.input_schema(tool.input_schema), handler(tool.name),
                parallel=server.parallel or mcp_tools.read_only(tool)))
    return made + mcp_tools.utility_tools(server, conn.capabilities, utility)


def client_factory(context: Any) -> Callable:
    """The MCP SDK's maker of HTTP clients, its own when ``context`` is None; else one whose clients check the server
    and show hermes' certificate with ``context`` (:func:`plugins.mcp.config.tls_context`), the SDK's timeouts kept."""
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT, create_mcp_http_client

    if context is None:
        return create_mcp_http_client
    import httpx2  # the SDK's HTTP client

    def make(headers: Optional[dict] = None, timeout: Any = None, auth: Any = None) -> Any:
        return httpx2.AsyncClient(headers=headers, auth=auth, verify=context, timeout=timeout or httpx2.Timeout(
            MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT))

    return make


def _watched(read, gone: asyncio.Event, stack: AsyncExitStack):
    """``read`` relayed through a stream of our own, setting ``gone`` when the server's side ends (a stdio
    server that died while idle, a remote one that hung up): the session alone would notice at the next call."""
    import anyio

    send, receive = anyio.create_memory_object_stream(0)

    async def relay():
        try:
            async with send:
                async for item in read:
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            gone.set()

    task = asyncio.get_running_loop().create_task(relay())
    stack.callback(task.cancel)
    return receive


async def _first(*waits) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _why(exc: BaseException, server: Server) -> str:
    """One line for a server's failure (an exception group's first cause; a missing program named)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return f"no answer within its connect_timeout ({server.connect_timeout:g}s)"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    hint = advice(text, "ssl_verify (its file)", "client_cert and client_key")
    if hint:
        return f"{text}; {hint}"
    causes, cause = [], exc
    while cause is not None and len(causes) < 8:  # an HTTP client's ReadError('') says only what it wraps
        causes.append(type(cause).__name__)
        cause = cause.__cause__ or cause.__context__
    closed = {"ClosedResourceError", "EndOfStream", "BrokenResourceError", "BrokenPipeError", "ConnectionResetError",
              "RemoteProtocolError"}
    if isinstance(exc, EOFError) or closed & set(causes) or "connection closed" in text.lower():
        if server.url.startswith("https:") and not server.client_cert:  # what a mutual-TLS server does to us
            return ("the server closed the connection; if it asks for a client certificate (mutual TLS), give it "
                    "with client_cert and client_key")
        return "the server closed the connection" + (" (see logs/mcp-stderr.log)" * (server.transport == "stdio"))
    return text


def _version() -> str:
    from kernel import __version__

    return __version__


def _quiet_sdk_logging(path: Path) -> None:
    """The SDK's own log lines (a server's malformed output, say) go to the MCP log, not the terminal."""
    sdk = logging.getLogger("mcp")
    if sdk.handlers:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
    sdk.addHandler(handler)
    sdk.propagate = False
