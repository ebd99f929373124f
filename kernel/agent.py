"""The agent loop. One :class:`Agent` holds a conversation; each turn goes as hermes-agent's does: the user message,
the (cached) system prompt, the pre-flight context check, ephemeral context, then model and tool calls until the
model answers, the budget runs out (after one grace call), the user interrupts or the providers fail. Models are
called only in :mod:`kernel.calls`, tools run only in :mod:`kernel.tools`."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from functools import partial
from operator import call
from typing import Any, Callable, Iterable, Optional

from kernel import messages as schema
from kernel.budget import IterationBudget
from kernel.calls import ModelCaller
from kernel.hookspecs import CONTEXT_ENGINES, MODEL_PROVIDERS
from kernel.protocols import Host
from kernel.secrets import Secrets
from kernel.exceptions import StopTurn
from kernel.types import ExitReason, GiveUp, Interrupted, ProviderConfig, Step, Tool, Turn, TurnResult

log = logging.getLogger("hermes.agent")


class AgentError(Exception):
    """The agent cannot be built as asked (no provider, unknown toolset ...)."""


def new_session_id() -> str:
    return time.strftime("%Y%m%d_%H%M%S") + "_" + uuid.uuid4().hex[:6]


class Agent:
    """One conversation of the loop, in the plugin host ``host``, on ``provider`` (default: the configured one,
    :meth:`ProviderConfig.configured`). ``budget`` is the iteration budget: a number of model calls per turn (reset
    every turn; default ``agent.max_turns``) or an :class:`IterationBudget` shared with others. ``callbacks`` are
    objects with hook implementations that this agent alone calls. Resume a stored session with
    :meth:`new_session`."""

    def __init__(self, host: Host, provider: Optional[ProviderConfig] = None, *, toolsets: Optional[list] = None,
                 blocked_tools: Iterable[str] = (), budget: "int | IterationBudget | None" = None,
                 callbacks: Iterable[Any] = (), platform: str = "cli", parent: Optional["Agent"] = None):
        self.config = cfg = host.config
        self.host = host
        registry = host.registry  # first: a plugin that fails to register is dropped before we copy the set
        try:
            self._pm = host.manager_with(callbacks)
        except ValueError as exc:
            raise AgentError(str(exc)) from None
        self.hook = self._pm.hook
        self.platform, self.parent = platform, parent
        self.depth = parent.depth + 1 if parent else 0
        self.state: dict = {}
        self.stream = bool(cfg.get("agent.stream")) and parent is None  # a child's answer is its parent's to show
        self.provider_config = self.primary = provider or ProviderConfig.configured(cfg)
        self.read_secrets()
        if not registry[MODEL_PROVIDERS]:
            raise AgentError("no model provider is enabled: install or enable a provider plugin "
                             "(see `hermes plugins list`)")

        self._owns_budget = not isinstance(budget, IterationBudget)
        self.budget = budget if isinstance(budget, IterationBudget) else \
            IterationBudget(int(budget or cfg.get("agent.max_turns") or 90))
        self.toolsets = toolsets if toolsets is not None else cfg.get("toolsets")  # None: all ("all" too)
        self._blocked = set(blocked_tools) | set(cfg.get("agent.disabled_tools") or [])
        self.context_engine_plugin = "context engine"  # whose code the engine is (failures are the plugin's)
        self.context_engine = self._select_context_engine()

        self.session_id = new_session_id()
        self._resume = self._loaded = self._session_started = False
        self.parent_session_id = parent.session_id if parent else None
        self.messages, self._unsaved = [], []  # _unsaved: a step's tool results, stored with the next write
        self._system_prompt = self._system_message = None  # Optional[str]s, set by the first turn
        self._interrupt = threading.Event()
        self.caller = ModelCaller(self)  # the one model-call path
        self._redirects: list = []
        self.interrupt_message: Optional[str] = None
        self._children: list = []
        self._lock = threading.RLock()  # of the redirects and the children (a signal handler may re-enter)
        self._closed = False
        self.threads: set = set()  # the turn's thread and its parallel tools' (an interrupt gets each out of plugins)
        self.turn: Optional[Turn] = None
        self.refresh_tools(starting=True)

    # ------------------------------------------------------------------ setup
    def offers(self, toolset: str) -> bool:
        """Whether this agent's toolsets take in ``toolset``'s tools: left unset, or reaching it or ``all``, through
        composite toolsets too (hermes-agent's ``hermes-cli`` is every tool, an MCP server's too)."""
        return self.toolsets is None or bool({"all", toolset} & self.host.registry.expand_toolsets(self.toolsets, True))

    def tools_changed(self) -> None:
        """From any thread: a plugin's ``agent_tools`` changed; the next model call chooses the tools again."""
        self._tools_stale = True

    def refresh_tools(self, starting: bool = False) -> None:
        """Choose the tools: the registry's by toolset and blocked names, the context engine's, then the plugins'
        ``agent_tools`` of those toolsets; the first of a name wins, and one whose ``check`` says no is left out."""
        wanted, blocked, registry, self._tools_stale = self.toolsets, self._blocked, self.host.registry, False
        try:
            names = registry.expand_toolsets(wanted) if wanted is not None else set(registry.tools)  # []: none
        except KeyError as exc:
            raise AgentError(exc.args[0]) from None
        offered = [registry.tools[name] for name in sorted(names - blocked)]
        engine = self.context_engine  # one that does not subclass ContextEngine may lack tools(): its failure
        offered += engine and self.host.contain(self.context_engine_plugin, "tools", lambda: engine.tools()) or []
        for answer in self.hook.agent_tools(agent=self, starting=starting):
            offered += [t for t in answer if isinstance(t, Tool) and t.name not in blocked
                        and self.offers(t.toolset)] if isinstance(answer, list) else []
        tools: dict = {}
        for tool in offered:
            if tool.name not in tools and (tool.check is None or self.host.contain(
                    tool.plugin or tool.name, f"availability check of tool {tool.name}", tool.check, default=False)):
                tools[tool.name] = tool
        self.tools = tools

    def _select_context_engine(self):
        name = self.config.get("context.engine")
        entry = self.host.registry[CONTEXT_ENGINES].get(name) if name else None
        if entry is None:
            if name and name != "compressor":
                log.warning("context engine %r is not registered; running without one", name)
            return None
        self.context_engine_plugin = entry.plugin
        return self.host.contain(entry.plugin, "context engine factory", entry.value, self)

    def emit(self, hook_name: str, **kwargs) -> None:
        """Fire an observer hook on this agent's plugins and callbacks
        (``agent`` is added); skipped cheaply when nobody implements it."""
        caller = getattr(self.hook, hook_name)
        if caller.get_hookimpls():
            caller(agent=self, **kwargs)

    def ask(self, hook_name: str, **kwargs) -> Any:
        """Call a question hook (``clarify``, ``approve_tool_call``) on this
        agent's plugins and callbacks; ``None`` if nobody answered."""
        return getattr(self.hook, hook_name)(agent=self, **kwargs)

    def read_secrets(self) -> None:
        """Which variables hold keys, and their values to mask, read from the environment (again: a key added)."""
        self.secrets = Secrets({self.primary.api_key_env, *self.config.key_envs()},
                               passthrough=self.config.get("tools.env_passthrough") or [])

    def provider_for(self, pconf: ProviderConfig):
        """The provider object for a config (built once, then kept)."""
        return self.caller.provider_for(pconf)

    def complete_once(self, messages: list, **options: Any) -> str:
        """One model call beside the conversation (see :meth:`ModelCaller.complete_once`)."""
        return self.caller.complete_once(messages, **options)

    # ----------------------------------------------------------- interrupts
    @property
    def interrupted(self) -> bool:
        return self._interrupt.is_set()

    def interrupt(self, message: Optional[str] = None) -> None:
        """Stop the running turn now, from any thread, its children too (the model call in flight is
        abandoned); ``message``, a new user message, is kept in ``interrupt_message`` to send next."""
        self.interrupt_message = message
        self._interrupt.set()
        self.caller.wake.set()
        with self._lock:
            children = list(self._children)
        for child in children:
            child.interrupt()
        for ident in sorted(self.threads, key=threading.get_ident().__eq__):  # never wait for a hook; this one last:
            self.host.interrupt_thread(ident)  # on its own thread, it raises

    def redirect(self, message: str) -> None:
        """Queue a user message sent mid-turn: it enters the history at the next iteration."""
        with self._lock:
            self._redirects.append(schema.valid_text(message))

    # ----------------------------------------------------------- children
    def spawn_child(self, *, toolsets: Optional[list] = None, blocked_tools: Iterable[str] = (),
                    max_iterations: Optional[int] = None, callbacks: Iterable[Any] = (), provider=None) -> "Agent":
        """A child agent on ``provider`` (default: the current ProviderConfig, a fallback entry's options included)
        with its own budget (``max_iterations``, default 50), interrupted with this one; :meth:`release_child` it."""
        child = Agent(self.host, provider or self.provider_config, toolsets=toolsets, blocked_tools=blocked_tools,
                      budget=IterationBudget(int(max_iterations or 50)), callbacks=callbacks, platform=self.platform,
                      parent=self)
        with self._lock:
            self._children.append(child)
        if self.interrupted:
            child.interrupt()
        return child

    def release_child(self, child: "Agent") -> None:
        with self._lock:
            if child in self._children:
                self._children.remove(child)
        child.close()

    # ----------------------------------------------------------- sessions
    def load_history(self) -> Optional[str]:
        """Load a resumed session's stored history, once (a turn does it first
        thing); a one-line reason instead when another process writes it."""
        done, self._loaded = self._loaded or not self._resume, True
        if done:
            return None
        refused = self.hook.claim_session(session_id=self.session_id, agent=self)
        if isinstance(refused, str) and refused:
            self._loaded = False
            return refused
        stored = self.hook.load_session(session_id=self.session_id, agent=self)
        if stored:
            self.messages = [m for m in schema.repair(stored) if m.get("role") != "system"]

    def _persist(self, new_messages: list, later: bool = False) -> None:
        """Store ``new_messages`` with what waits (one write, one transaction); ``later``: with the next write."""
        self._unsaved += [dict(m) for m in new_messages]
        if self._unsaved and not later and self.hook.append_messages.get_hookimpls():
            batch, self._unsaved = self._unsaved, []
            self.step("store", batch)(partial(self.hook.append_messages, session_id=self.session_id,
                                              messages=batch, agent=self))

    def step(self, kind: str, record: Any) -> Callable[[Callable[[], Any]], Any]:
        """The runner of one step of the running turn (:class:`~kernel.types.Step`, the ``durable_step`` hook):
        call it with the work. Take it on the agent's thread in the turn's order; it may run on another. A
        plugin's side effect that must happen once per turn, even when a crashed turn is resumed, goes here too."""
        runner = self.hook.durable_step(step=Step(kind, record), agent=self) if self.turn and self.turn.durable \
            else None
        return call if runner is None else partial(_replayable, runner, record)

    def _start_session(self, reason: str = "new") -> None:
        self._session_started = True
        pconf = self.provider_config
        self.emit("on_session_start", session_id=self.session_id, model=pconf.model, platform=self.platform,
                  provider=pconf.label(), parent_session_id=self.parent_session_id, reason=reason)

    def system_prompt_text(self, system_message: Optional[str] = None) -> str:
        """The system prompt a session started now would get: ``system_message``
        (else ``agent.system_prompt``), then the plugins' ``system_prompt`` parts."""
        parts = [system_message if system_message is not None else self.config.get("agent.system_prompt")]
        parts += self.hook.system_prompt(agent=self, session_id=self.session_id, model=self.provider_config.model,
                                         platform=self.platform)
        return "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())

    def new_session(self, resume: Optional[str] = None) -> str:
        """Leave the current session for an empty one (chat's ``/new``), or for
        the stored session ``resume`` (``/resume``; its history loads with the
        next turn): ``on_session_finalize`` fires with ``reason="new_session"``."""
        old, started = self.session_id, self._session_started
        self.session_id, self.parent_session_id = resume or new_session_id(), None  # finalize sees where it goes
        if started:
            self.emit("on_session_finalize", session_id=old, platform=self.platform, reason="new_session")
        self._resume, self._loaded, self._session_started = bool(resume), not resume, False
        self.messages, self._system_prompt = [], None
        return self.session_id

    def rotate_session(self, reason: str) -> None:
        """Continue in a new session linked to the current one, with the history as it is now (after compression, or
        a front end's undo): the old one is finalized with ``reason``, the new one started and stored."""
        old, _ = self.session_id, self._persist([])  # the old session keeps all it had
        self.emit("on_session_finalize", session_id=old, platform=self.platform, reason=reason)
        self.parent_session_id, self.session_id = old, new_session_id()
        self._start_session(reason=reason)
        self._system_prompt = self.system_prompt_text(self._system_message)  # a new session, a fresh snapshot
        self._persist(self.messages)

    def compress(self, reason: str = "preflight") -> bool:
        """Let the context engine shrink the history; True if it did."""
        engine = self.context_engine
        if engine is None:
            return False
        self.emit("on_status", status="compressing", detail=f"compressing the conversation ({reason})")
        notes = [n.strip() for n in self.hook.on_pre_compress(session_id=self.session_id, messages=list(self.messages),
                                                                 agent=self) if isinstance(n, str) and n.strip()]
        new = self.host.contain(self.context_engine_plugin, "compress", engine.compress, list(self.messages),
                      agent=self, reason=reason, notes=notes)
        if self.interrupted:  # the summary call was interrupted: history and session stay as they were
            raise Interrupted()
        new = [m for m in schema.repair(new or []) if m.get("role") != "system"]
        if not new or new == self.messages:
            return False
        self.messages = new
        self.rotate_session("compression")
        return True

    # ----------------------------------------------------------- the turn
    def chat(self, message: str) -> str:
        """One turn; the final answer text ("" if none), as hermes-agent's ``chat``."""
        return self.run_conversation(message).final_response or ""

    def run_conversation(self, user_message: "str | list", system_message: Optional[str] = None,
                         conversation_history: Optional[list] = None, task_id: Optional[str] = None,
                         turn_id: Optional[str] = None) -> TurnResult:
        """One turn: the user's message (text, or content parts: text and images), then model and tool calls until
        the model answers, the budget runs out, the user interrupts or the providers fail (``TurnResult.exit_reason``
        says which). A passed ``conversation_history`` replaces this agent's (hermes-agent's call); a durable
        engine that replays a turn passes its ids. Hooks get the message's text."""
        user_message = schema.valid_text(user_message)  # bytes that were not UTF-8 (stdin, argv) or a JSON "\ud800"
        turn = Turn(task_id=task_id or uuid.uuid4().hex, turn_id=turn_id or uuid.uuid4().hex,
                    user_message=schema.text_of(user_message), content=user_message)
        self.turn = turn
        self.threads = {threading.get_ident()}
        try:
            return self._run_turn(turn, user_message, system_message, conversation_history)
        finally:
            self.threads = set()
            self.turn = None

    def _run_turn(self, turn: Turn, user_message: str, system_message: Optional[str],
                  conversation_history: Optional[list]) -> TurnResult:
        if not (self.parent is not None and self.parent.interrupted):
            self._interrupt.clear()  # a child started after its parent was interrupted stays interrupted
        self.interrupt_message = None
        if self._owns_budget:
            self.budget.reset()
        if conversation_history is not None:
            system_message = self._take_history(conversation_history, system_message)
        elif not self._loaded:
            refused = self.load_history()
            if refused:  # another process writes this session: nothing of this turn is run or stored
                return self._result(turn, ExitReason.ERROR, refused, None)
        turn.durable = bool(self.hook.durable_step.get_hookimpls())  # an engine may take the turn
        run = self.step("turn", turn)
        turn.durable = run is not call
        return run(partial(self._take_turn, turn, user_message, system_message))

    def _take_turn(self, turn: Turn, user_message: str, system_message: Optional[str]) -> TurnResult:
        first_turn = not self._session_started
        if first_turn:
            self._start_session(reason="resume" if self.messages else "new")
        if self._system_prompt is None or (system_message is not None and first_turn):
            self._system_message, self._system_prompt = system_message, self.system_prompt_text(system_message)
        before = len(self.messages)
        schema.append_user(self.messages, user_message)
        exit_reason, error, final = self._work(turn, first_turn, before)
        try:
            if final is not None and exit_reason in (ExitReason.COMPLETED, ExitReason.BUDGET):
                final = self._answer(turn, final)
            elif exit_reason == ExitReason.INTERRUPTED and self.messages[-1].get("role") == "user":
                # the parts of an answer the model was going on with, as shown; else a marker: the next prompt not glued
                self.messages.append({"role": "assistant", "content": self.secrets.mask("".join(turn.parts))
                                      or schema.UNANSWERED})
                self._persist(self.messages[-1:], later=True)
            self._persist([])  # what still waits: the last step's results, the marker answer
        except StopTurn as exc:  # the store failed: the answer stands, the failure is said
            exit_reason, error = ExitReason.ERROR, str(exc)
        self.emit("on_session_end", session_id=self.session_id, task_id=turn.task_id, turn_id=turn.turn_id,
                  completed=exit_reason == ExitReason.COMPLETED, interrupted=exit_reason == ExitReason.INTERRUPTED,
                  model=self.provider_config.model, platform=self.platform, exit_reason=exit_reason,
                  usage=dict(turn.usage))
        return self._result(turn, exit_reason, error, final)

    def _take_history(self, history: list, system_message: Optional[str]) -> Optional[str]:
        """A history passed in replaces this agent's; its system message is the prompt unless one is given or built."""
        history = schema.repair(history)
        if history and history[0].get("role") == "system":
            if system_message is None and self._system_prompt is None:
                system_message = history[0].get("content") or ""
            history = history[1:]
        self.messages, self._loaded = history, True
        return system_message

    def _work(self, turn: Turn, first_turn: bool, before: int) -> tuple:
        """Model and tool calls until the turn ends: (exit reason, error, final answer)."""
        try:
            self._persist([{"role": "user", "content": turn.content}])
            if self.context_engine is not None and self._should_compress():
                self.compress("preflight")
            context = self._pre_llm_context(turn, first_turn, before)
            chosen = self.hook.choose_provider(primary=self.primary, agent=self)
            if chosen is not None and not isinstance(chosen, ProviderConfig):  # a broken policy: not the turn's end
                log.warning("choose_provider answered %s, not a ProviderConfig; the turn starts on %s",
                            type(chosen).__name__, self.primary.label())
                chosen = None
            self.provider_config = chosen or self.primary
            return self._loop(turn, context)
        except Interrupted:
            self.emit("on_status", status="interrupted", detail="interrupted by the user")
            return ExitReason.INTERRUPTED, None, None
        except StopTurn as exc:  # a plugin's reason (a store that cannot write), said already
            return ExitReason.ERROR, str(exc), None
        except Exception as exc:  # a bug in the kernel or a plugin: end the turn, keep the history
            log.exception("turn failed")
            return ExitReason.ERROR, f"{type(exc).__name__}: {exc}", None

    def _answer(self, turn: Turn, final: str) -> str:
        """The final answer, as ``transform_llm_output`` leaves it: stored, then ``post_llm_call``."""
        for replaced in self.hook.transform_llm_output(
            response_text=final, session_id=self.session_id, model=self.provider_config.model,
            platform=self.platform, agent=self,
        ):
            if isinstance(replaced, str) and replaced:
                self.messages[-1]["content"] = final = replaced
                break
        self._persist([self.messages[-1]])
        self.emit(
            "post_llm_call", session_id=self.session_id, task_id=turn.task_id, turn_id=turn.turn_id,
            user_message=turn.user_message, assistant_response=final, conversation_history=list(self.messages),
            model=self.provider_config.model, platform=self.platform,
        )
        return final

    def _result(self, turn: Turn, exit_reason: str, error: Optional[str], final: Optional[str]) -> TurnResult:
        return TurnResult(
            final_response=final, messages=list(self.messages), exit_reason=exit_reason, error=error,
            interrupt_message=self.interrupt_message, api_calls=turn.api_calls, usage=turn.usage,
            session_id=self.session_id, task_id=turn.task_id, model=self.provider_config.model,
            provider=self.provider_config.label(),
        )

    def _should_compress(self) -> bool:
        return bool(self.host.contain(self.context_engine_plugin, "should_compress",
                            self.context_engine.should_compress, self.messages))

    def _pre_llm_context(self, turn: Turn, first_turn: bool, before: int) -> str:
        if not self.hook.pre_llm_call.get_hookimpls():
            return ""
        pieces = []
        for answer in self.hook.pre_llm_call(
            session_id=self.session_id, task_id=turn.task_id, turn_id=turn.turn_id,
            user_message=turn.user_message, conversation_history=list(self.messages[:before]),
            is_first_turn=first_turn, model=self.provider_config.model, platform=self.platform, agent=self,
        ):
            if isinstance(answer, dict):
                answer = answer.get("context")
            if isinstance(answer, str) and answer.strip():
                pieces.append(answer.strip())
        return "\n\n".join(pieces)

    def request_messages(self, context: str) -> list:
        """The messages sent to the model: system prompt, history, and this
        turn's ephemeral context added to a copy of the current user message."""
        out = [{"role": "system", "content": self._system_prompt}] if self._system_prompt else []
        out.extend(self.messages)
        if context:
            for i in range(len(out) - 1, -1, -1):
                if out[i].get("role") == "user":  # a copy: the history keeps the message as it was
                    out[i] = {**out[i], "content": schema._merge_content(out[i].get("content"), context)}
                    break
        return out

    def _loop(self, turn: Turn, context: str):
        grace, cut, going_on = False, turn.parts, []  # cut: an interrupt keeps it as the answer (_take_turn)
        while True:
            with self._lock:
                pending, self._redirects = self._redirects, []
            for text in pending:
                schema.append_user(self.messages, text)
                self._persist([{"role": "user", "content": text}])
            if self.interrupted:
                raise Interrupted()
            if not self.budget.consume():
                if grace:
                    return ExitReason.BUDGET, None, None
                grace = True  # one last call to summarise; no tools may run
                self.emit("on_status", status="budget", detail="iteration budget exhausted: asking for a summary")
            step_start = len(self.messages)
            response = self.caller.call(turn, self.request_messages(context) + going_on,
                                        tool_choice="none" if grace else "auto")
            if isinstance(response, GiveUp):
                return ExitReason.ERROR, response.message, None
            message, turn.cut = response.to_message(), response.finish_reason == "length"
            if turn.cut and response.content and not (response.tool_calls or grace) and len(cut) < 3:
                cut.append(response.content)  # the model goes on where it stopped (it sees what it wrote)
                going_on = [{"role": "assistant", "content": "".join(cut)}, {"role": "user", "content": schema.GO_ON}]
                continue
            message["content"] = "".join(cut) + (message.get("content") or "") if cut else message.get("content")
            cut.clear()
            going_on = []
            if isinstance(message.get("content"), str):  # a key the model repeats is masked as in a tool result
                message["content"] = self.secrets.mask(message["content"])
            if response.tool_calls and not grace:
                self.messages.append(message)
                # stored before any handler starts: after a crash or kill -9 the resumed
                # history shows the call (with a "no result was recorded" result), so the
                # model knows it may have happened; the results go with the next write
                self._persist(self.messages[step_start:])
                results = self._run_tools(turn, response.tool_calls)
                self.messages.extend(results)
                self._persist(results, later=True)
                self.emit("on_step", step=turn.api_calls, messages=list(self.messages[step_start:]))
                continue
            message.pop("tool_calls", None)  # a grace answer may not start new work
            if message.get("content") is None:
                message["content"] = ""
            self.messages.append(message)
            self.emit("on_step", step=turn.api_calls, messages=[message])
            return (ExitReason.BUDGET if grace else ExitReason.COMPLETED), None, message["content"]

    def _run_tools(self, turn: Turn, tool_calls: list) -> list:
        from kernel.tools import execute_batch

        self.emit("on_status", status="tools", detail=", ".join(tc["function"]["name"] for tc in tool_calls))
        results = execute_batch(self, tool_calls, turn)
        if (note := self.budget.note()) and results:
            results[-1]["content"] = _with_note(results[-1]["content"], note)
        return results

    def close(self) -> None:
        """End the session for good: ``on_session_finalize`` fires once."""
        if self._closed:
            return
        self._closed = True
        if self._session_started:
            self.emit("on_session_finalize", session_id=self.session_id, platform=self.platform, reason="shutdown")
        self.caller.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _replayable(runner: Callable, record: Any, work: Callable[[], Any]) -> Any:
    """``runner(work)``; when it answered without calling ``work`` (a replay) the record says so."""
    ran = []
    try:
        return runner(lambda: ran.append(True) or work())
    finally:
        if not ran and hasattr(record, "replayed"):
            record.replayed = True


def _with_note(content: str, note: str) -> str:
    """Put the budget note inside the tool result's JSON (never a separate message)."""
    try:
        data = json.loads(content)
    except (TypeError, ValueError):
        data = None
    data = {**data, "_budget": note} if isinstance(data, dict) else {"result": content, "_budget": note}
    return json.dumps(data, ensure_ascii=False)

