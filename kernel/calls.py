"""The one place the agent calls a model. Each agent's :class:`ModelCaller` builds and keeps its providers, runs
each call on a helper thread (the agent's thread fires the streamed events and waits for an interrupt), fires the
API hooks and executes the fallback policy's decisions."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import TYPE_CHECKING, Optional

from kernel.hookspecs import MODEL_PROVIDERS
from kernel.types import (CONFIG, TRANSPORT, ApiCall, Compress, GiveUp, Interrupted, ModelRequest, ModelResponse,
                          ProviderConfig, ProviderError, ProviderFailure, RefreshCredentials, Retry, SwitchProvider,
                          Turn, add_usage, describe, is_user_interrupt)

if TYPE_CHECKING:
    from kernel.agent import Agent

log = logging.getLogger("hermes.agent")


class _Emitter:
    """Hands a provider's streamed events to the agent's thread, which fires them while it waits (a hung hook never
    holds the model call; every hook of a turn runs on one thread). Events of an abandoned call, or that no plugin
    listens to, are dropped."""

    def __init__(self, caller: "ModelCaller", request: ModelRequest):
        self.caller, self.request = caller, request
        self.delta_shown = False
        hook = caller.agent.hook
        self._heard = {name for name in ("on_stream_delta", "on_reasoning", "on_tool_call_generated")
                       if getattr(hook, name).get_hookimpls()}

    def _send(self, hook_name: str, **kwargs) -> None:
        if self.request.cancelled or hook_name not in self._heard:
            return
        self.caller.post(self.request, hook_name, kwargs)

    def delta(self, text: str) -> None:
        if text and not self.request.cancelled and "on_stream_delta" in self._heard:
            self.delta_shown = True  # someone may have displayed it (nobody listens under --json)
            self._send("on_stream_delta", text=text)

    def reasoning(self, text: str) -> None:
        if text:
            self._send("on_reasoning", text=text)

    def tool_call(self, name: str, call_id: str) -> None:
        self._send("on_tool_call_generated", tool_name=name, tool_call_id=call_id)


class ModelCaller:
    """The providers and model calls of one :class:`~kernel.agent.Agent`."""

    def __init__(self, agent: "Agent"):
        self.agent = agent
        self.providers: dict = {}  # ProviderConfig -> the provider built for it
        self.modes: dict = {}  # ProviderConfig -> the API mode it resolved to
        self.wake = threading.Event()  # set by a streamed event, the call's end, or an interrupt
        self._events: list = []  # (request, hook name, kwargs) streamed by the call in flight
        self._events_lock = threading.Lock()
        self._thread: Optional["_CallThread"] = None

    def post(self, request: ModelRequest, hook_name: str, kwargs: dict) -> None:
        """A streamed event, from the call's thread: the agent's thread fires it."""
        with self._events_lock:
            self._events.append((request, hook_name, kwargs))
        self.wake.set()

    # ----------------------------------------------------------- providers
    def provider_for(self, pconf: ProviderConfig):
        """The provider object for a config (built once, then cached)."""
        if pconf in self.providers:
            return self.providers[pconf]
        providers = self.agent.host.registry[MODEL_PROVIDERS]
        mode = pconf.api_mode or self.agent.hook.resolve_api_mode(config=pconf)
        if not mode and len(providers) == 1:
            mode = next(iter(providers))
        entry = providers.get(mode) if mode else None
        if entry is None:
            known = ", ".join(sorted(providers)) or "none"
            what = f"no model provider named '{mode}' is enabled" if mode else f"cannot tell which provider serves {pconf.label()}"
            if mode and pconf.provider and not pconf.api_mode:  # the user named a provider, not a mode: say so
                what = f"provider '{pconf.provider}' needs the API mode '{mode}', and no enabled plugin serves it"
            raise ProviderError(f"{what} (enabled: {known})", reason=CONFIG, provider=pconf.label())
        build = pconf if pconf.api_mode else pconf.with_(api_mode=mode)
        options = build.options()
        added = []  # fallback entries too: an abandoned call must not linger, a silent one must end
        if "timeout" not in options:
            added.append(("timeout", float(self.agent.config.get("agent.api_timeout") or 600)))
        if "idle_timeout" not in options:
            added.append(("idle_timeout", float(self.agent.config.get("agent.stream_idle_timeout") or 60)))
        if added:
            build = build.with_(extra=tuple(sorted(build.extra + tuple(added))))
        try:
            provider = entry.value(build)
        except ProviderError:
            raise
        except BaseException as exc:  # SystemExit in a provider plugin too
            if is_user_interrupt(exc):
                raise Interrupted() from None
            raise ProviderError(describe(exc), reason=CONFIG, provider=pconf.label()) from exc
        self.providers[pconf] = provider
        self.modes[pconf] = build.api_mode
        return provider

    # ------------------------------------------------------- the model call
    def complete_once(self, messages: list, *, max_tokens: Optional[int] = None,
                      provider_config: Optional[ProviderConfig] = None, task: str = "auxiliary") -> str:
        """One model call beside the conversation (a summary, an approval): no tools, nothing streamed or stored, but
        the API hooks and the fallback policy apply. On the current provider unless ``provider_config`` names another
        (an auxiliary model); ``task`` is ``ApiCall.aux_task``."""
        turn = self.agent.turn or Turn(task_id=uuid.uuid4().hex, turn_id=uuid.uuid4().hex, user_message="")
        saved = self.agent.provider_config
        if provider_config is not None:
            self.agent.provider_config = provider_config
        try:
            response = self.call(turn, messages, tool_choice="none", offer_tools=False,
                                        max_tokens=max_tokens, stream=False, aux_task=task or "auxiliary")
        finally:
            self.agent.provider_config = saved
        if isinstance(response, GiveUp):
            raise ProviderError(response.message or "the model call failed", reason=TRANSPORT)
        return response.content or ""

    def call(self, turn: Turn, request_messages: list, *, tool_choice: str = "auto", offer_tools: bool = True,
             max_tokens: Optional[int] = None, stream: Optional[bool] = None, aux_task: str = ""):
        """Call the current provider; on failure ask the policy and execute
        its decision. Returns a ModelResponse or a GiveUp."""
        attempt, compressed, refreshed = 0, False, set()
        while True:
            if self.agent.interrupted:
                raise Interrupted()
            pconf = self.agent.provider_config
            request = self._request(turn, pconf, request_messages, tool_choice, offer_tools, max_tokens, stream)
            emitter = _Emitter(self, request)
            call = self._api_call(turn, pconf, request, aux_task)
            try:
                return self._attempt(turn, pconf, call, request, emitter)
            except ProviderError as exc:
                error = exc
            attempt += 1
            self._observe_failure(turn, pconf, call, error, attempt)
            decision, attempt, refreshed_now = self._decide(turn, pconf, error, attempt, emitter.delta_shown, refreshed)
            if refreshed_now:
                continue  # call again with the re-read key
            if isinstance(decision, Retry):
                self.agent.emit("on_status", status="retrying", detail=f"{pconf.label()}: {error} (retrying in {decision.delay:.1f}s)")
                if self.agent._interrupt.wait(max(0.0, decision.delay)):  # True: the user interrupted
                    raise Interrupted()
            elif isinstance(decision, SwitchProvider):
                self.agent.emit("on_status", status="fallback", detail=f"{pconf.label()} failed: {error}; trying {decision.config.label()}")
                self.agent.provider_config, attempt = decision.config, 0
            elif isinstance(decision, Compress) and not compressed and offer_tools and self.agent.compress("overflow"):
                compressed, request_messages = True, self.agent.request_messages("")
            else:
                return GiveUp(decision.message if isinstance(decision, GiveUp) and decision.message
                              else _summary(turn.failures))

    def _request(self, turn: Turn, pconf: ProviderConfig, messages: list, tool_choice: str, offer_tools: bool,
                 max_tokens: Optional[int], stream: Optional[bool]) -> ModelRequest:
        turn.api_request_id = f"{turn.turn_id}-{turn.api_calls + 1}"  # derived, not drawn: a replay gets the same
        if self.agent._tools_stale:
            self.agent.refresh_tools()
        return ModelRequest(
            model=pconf.model, messages=messages, tool_choice=tool_choice,
            tools=[t.schema() for t in self.agent.tools.values()] if offer_tools else [],
            stream=bool(self.agent.stream if stream is None else stream),
            max_tokens=max_tokens or self.agent.config.get("agent.max_tokens"), session_id=self.agent.session_id,
        )

    def _attempt(self, turn: Turn, pconf: ProviderConfig, call: ApiCall, request: ModelRequest,
                 emitter: _Emitter) -> ModelResponse:
        """One call of the provider, with the API hooks around it."""
        provider = self.provider_for(pconf)
        turn.api_calls += 1  # counts the calls made: a provider that cannot be built made none
        response, call.started_at, call.ended_at = self.agent.step("model", call)(  # a replay keeps the times too
            lambda: (self._send(provider, call, request, emitter), call.started_at, time.time()))
        self._after_success(turn, call, response)
        return response

    def _send(self, provider, call: ApiCall, request: ModelRequest, emitter: _Emitter) -> ModelResponse:
        if self.agent.hook.pre_api_request.get_hookimpls():
            self.agent.hook.pre_api_request(call=call, agent=self.agent)
        self.agent.emit("on_thinking", active=True)
        try:
            return self._interruptible(provider, request, emitter)
        finally:
            self.agent.emit("on_thinking", active=False)

    def _observe_failure(self, turn: Turn, pconf: ProviderConfig, call: ApiCall, error: ProviderError,
                         attempt: int) -> None:
        turn.failures.append((pconf.label(), str(error)))
        call.ended_at = time.time()
        if self.agent.hook.api_request_error.get_hookimpls():
            self.agent.hook.api_request_error(call=call, error=error, attempt=attempt, agent=self.agent)

    def _decide(self, turn: Turn, pconf: ProviderConfig, error: ProviderError, attempt: int, delta_shown: bool,
                refreshed: set) -> tuple:
        """(decision, attempt, call again now?) for ``error``. A RefreshCredentials is carried out here, once per
        provider config; when the key did not change the policy is asked again."""
        while True:
            decision = self.agent.hook.on_provider_error(
                failure=ProviderFailure(error=error, config=pconf, primary=self.agent.primary, attempt=attempt,
                                        delta_shown=delta_shown, history=list(turn.failures),
                                        turn_state=turn.turn_state),
                agent=self.agent,
            )
            if not (isinstance(decision, RefreshCredentials) and pconf not in refreshed):
                return decision, attempt, False
            refreshed.add(pconf)
            if self._refresh(pconf) is not False:
                return decision, attempt, True
            attempt += 1

    def _refresh(self, pconf: ProviderConfig):
        """The provider's re-read key: False if unchanged, True/None if it may have changed."""
        try:
            return self.providers[pconf].refresh_credentials()
        except Exception as exc:
            log.warning("refreshing credentials of %s failed: %s", pconf.label(), exc)
            return None

    def _interruptible(self, provider, request: ModelRequest, emitter: _Emitter) -> ModelResponse:
        """The provider's answer, from the model-call thread, unless an
        interrupt or the timeout comes first (the call is then abandoned)."""
        box: dict = {}
        done = threading.Event()
        wake = self.wake

        def work():
            try:
                box["response"] = provider.complete(request, emitter)
            except BaseException as exc:  # handed to the waiting thread
                box["error"] = exc
            finally:
                done.set()
                wake.set()

        wake.clear()
        if self._thread is None:
            self._thread = _CallThread()
        self._thread.submit(work)
        timeout = float(self.agent.config.get("agent.api_timeout") or 600)
        deadline = time.monotonic() + timeout
        try:
            with self.agent.host.waiting():  # a plugin's clock stops while the kernel waits for a model
                while not done.is_set():
                    if self.agent.interrupted:
                        raise Interrupted()
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise ProviderError(f"no response within {timeout:g}s (agent.api_timeout)",
                                            reason=TRANSPORT, silent=True)
                    wake.wait(remaining)
                    wake.clear()
                    self._fire_events()
        except BaseException:  # interrupted, timed out, or the interrupt raised in here by a signal
            if not done.is_set():
                self._abandon(request)
            raise
        self._fire_events()  # what came with the end of the call
        if "error" in box:
            exc = box["error"]
            if isinstance(exc, ProviderError):
                raise exc
            raise ProviderError(f"{type(exc).__name__}: {exc}", reason=TRANSPORT) from exc
        response = box["response"]
        if not isinstance(response, ModelResponse):
            raise ProviderError(f"the provider returned {type(response).__name__}, not a ModelResponse", reason=TRANSPORT)
        return response

    def _fire_events(self) -> None:
        """Fire the streamed events that arrived, in order, on this thread."""
        with self._events_lock:
            batch, self._events = self._events, []
        for request, hook_name, kwargs in batch:
            if not request.cancelled:
                self.agent.emit(hook_name, **kwargs)

    def _abandon(self, request: ModelRequest) -> None:
        request.cancel_event.set()
        if self._thread is not None:
            self._thread.retire()  # busy with the abandoned call: the next call gets a fresh thread
            self._thread = None

    def _api_call(self, turn: Turn, pconf: ProviderConfig, request: ModelRequest, aux_task: str = "") -> ApiCall:
        """The API hooks' record; the provider named by its name, else its API mode (as hermes-agent does)."""
        mode = self.modes.get(pconf, pconf.api_mode)
        return ApiCall(
            request=request, session_id=self.agent.session_id, task_id=turn.task_id, turn_id=turn.turn_id,
            api_request_id=turn.api_request_id, platform=self.agent.platform, provider=pconf.provider or mode,
            api_mode=mode, base_url=pconf.base_url, number=turn.api_calls + 1, user_message=turn.user_message,
            started_at=time.time(), aux_task=aux_task,
        )

    def _after_success(self, turn: Turn, call: ApiCall, response: ModelResponse) -> None:
        turn.usage = add_usage(turn.usage, response.usage)
        if self.agent.context_engine is not None:
            self.agent.host.contain(self.agent.context_engine_plugin, "update_from_response",
                    self.agent.context_engine.update_from_response, dict(response.usage))
        if self.agent.hook.post_api_request.get_hookimpls():
            self.agent.hook.post_api_request(call=call, response=response, agent=self.agent)

    def close(self) -> None:
        """Let the call thread go and close the providers that say how."""
        if self._thread is not None:
            self._thread.retire()
            self._thread = None
        for provider in self.providers.values():
            try:
                provider.close()
            except Exception:  # closing is best effort: the answer is already in
                pass


class _CallThread:
    """A daemon thread that runs model calls one at a time (reused across
    calls: starting a thread per call costs more than the handoff)."""

    def __init__(self):
        import queue

        self._jobs: "queue.SimpleQueue" = queue.SimpleQueue()
        threading.Thread(target=self._run, name="hermes-model-call", daemon=True).start()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job()

    def submit(self, job) -> None:
        self._jobs.put(job)

    def retire(self) -> None:
        self._jobs.put(None)  # ends after the job in hand, if any


def _summary(failures: list) -> str:
    lines = list(dict.fromkeys(f"{label}: {why}" for label, why in failures))  # each failure once, in order
    if not lines:
        return "the model call failed"
    return lines[-1] if len({label for label, _ in failures}) == 1 else "every provider failed: " + "; ".join(lines)
