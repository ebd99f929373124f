"""Bridge one loaded hermes plugin into the kernel: an adapter object whose
``@hookimpl`` functions implement the kernel hooks from what the plugin
registered.

Hook callbacks are called the hermes way: keyword arguments only, hermes'
full keyword set for that hook (kernel extras such as ``agent``, ``usage`` or
``exit_reason`` are dropped where hermes does not pass them) plus
``telemetry_schema_version``. One failing callback is logged and the others
still run. A callback that declares no ``**kwargs`` gets only the keywords it
names (hermes would raise TypeError there). Async callbacks are awaited.

Return values, as in hermes-agent: ``pre_tool_call`` block/approve (the same
``args`` dict goes to the tool, so in-place rewrites work); ``pre_llm_call``
context strings (joined); the first ``str`` of a ``transform_*`` hook wins.
A ``pre_tool_call`` callback that raises blocks the call (the kernel's rule:
hooks that guard tools fail closed); hermes-agent would let it run. Between
hermes plugins, callbacks run in load order as in hermes-agent (see ``ORDERED``).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from hermes.host.isolation import run_awaitable
from plugins.hermes_compat import standins, state
from plugins.hermes_compat.keywords import DERIVED, FIRST_STR, TOOL_HOOKS, TOOL_IDS, hermes_kwargs, tool_kwargs
from plugins.hermes_compat.state import TELEMETRY_SCHEMA_VERSION, log


# --------------------------------------------------------------------------
# Calling plugin code


def _resolve(value: Any) -> Any:
    """Await an awaitable result (hermes would have dropped it un-awaited)."""
    return run_awaitable(value) if inspect.isawaitable(value) else value


_SIG_CACHE: dict = {}


def accepted(fn: Callable, kwargs: dict) -> dict:
    """``kwargs`` narrowed to what ``fn`` accepts (all of them if it takes ``**kwargs``)."""
    key = id(fn)
    cached = _SIG_CACHE.get(key)
    if cached is None or cached[0] is not fn:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            names = None
        else:
            if any(p.kind is p.VAR_KEYWORD for p in params):
                names = None
            else:
                names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        cached = _SIG_CACHE[key] = (fn, names)
    names = cached[1]
    return dict(kwargs) if names is None else {k: v for k, v in kwargs.items() if k in names}


def call_plugin_callable(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """Run plugin code with the host modules available; await async results."""
    with standins.window():
        return _resolve(fn(*args, **accepted(fn, kwargs)))


def call_callback(record: state.PluginRecord, hook: str, cb: Callable, kwargs: dict) -> tuple:
    """``(True, result)`` or ``(False, exception)``; a failure is logged, never raised."""
    try:
        with standins.window():
            return True, _resolve(cb(**accepted(cb, kwargs)))
    except Exception as exc:
        log.warning("hermes plugin %s: hook %r callback %s raised %s: %s", record.name, hook,
                    getattr(cb, "__qualname__", cb), type(exc).__name__, exc)
        return False, exc


# --------------------------------------------------------------------------
# Hook bodies


def _tool_request_middleware(record, kw: dict) -> None:
    args = kw.get("args")
    if not isinstance(args, dict):
        return
    for kind, cb in record.middleware:
        if kind != "tool_request":
            continue
        payload = {"tool_name": kw.get("tool_name"), "args": dict(args), "original_args": dict(args),
                   **{k: kw.get(k) for k in TOOL_IDS}, "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
                   "middleware_schema_version": "hermes.middleware.v1"}
        ok, value = call_callback(record, "tool_request middleware", cb, payload)
        if ok and isinstance(value, dict) and isinstance(value.get("args"), dict):
            new = dict(value["args"])
            args.clear()  # the same dict object goes on to the other hooks and the tool
            args.update(new)


# Hooks whose outcome depends on the order of the callbacks (first block, first
# str, joined context). hermes-agent calls callbacks in plugin load order; pluggy
# calls implementations last-registered first. So for these hooks the first
# loaded hermes plugin of the agent's host runs every hermes plugin's callbacks,
# in load order, and the others stand aside.
ORDERED = {"pre_tool_call", "pre_llm_call"} | FIRST_STR


def _peers(agent: Any, hook: str, record: state.PluginRecord):
    """The records of the hermes plugins loaded in ``agent``'s host that take
    part in ``hook``, in load order; None when that is unknown."""
    objects = getattr(getattr(agent, "host", None), "objects", None)
    if not objects:
        return None
    peers = [obj.record for _name, obj in objects
             if isinstance(obj, HermesPluginAdapter) and hook in obj.hermes_hooks]
    return peers if any(p is record for p in peers) else None


def hook_body(record: state.PluginRecord, hook: str, spec_args: tuple, kernel_hook: str = "") -> Callable[[dict], Any]:
    """What the kernel hook ``kernel_hook`` (by default the one named ``hook``)
    does for the hermes hook ``hook`` of this plugin."""

    def body(kw: dict) -> Any:
        if (kernel_hook or hook) in TOOL_HOOKS:
            kw = {**kw, **tool_kwargs(kw)}
        peers = _peers(kw.get("agent"), hook, record) if hook in ORDERED else None
        if peers is None:
            peers = [record]
        elif peers[0] is not record:
            return None  # the first hermes plugin answers for all of them
        if hook == "pre_tool_call":
            for rec in peers:  # hermes runs every tool_request middleware before the hooks
                _tool_request_middleware(rec, kw)
        hkw = hermes_kwargs(hook, kw, spec_args, kernel_hook)
        if hkw is None:
            return None  # not the event this hermes hook means
        outcomes = []  # (record, results, failures) in load order
        for rec in peers:
            results, failures = [], []
            for cb in list(rec.hooks.get(hook, ())):
                ok, value = call_callback(rec, hook, cb, hkw)
                if not ok:
                    failures.append(value)
                elif value is not None:
                    results.append(value)
            outcomes.append((rec, results, failures))
        if hook in FIRST_STR:  # every callback ran (as in hermes); the first str wins
            for _rec, results, _failures in outcomes:
                for value in results:
                    if isinstance(value, str) and (value or hook != "transform_llm_output"):
                        return value
        if hook == "transform_api_error_classification":
            _reclassify(outcomes, kw["failure"].error)
            return None  # the fallback policy decides, on the new classification
        if hook == "on_session_finalize" and record.context_engines:
            _engine_session_end(record, kw)
        if hook == "pre_tool_call":
            return _directive(outcomes, kw)
        if hook == "pre_llm_call":
            parts = []
            for _rec, results, _failures in outcomes:
                for value in results:
                    text = value.get("context") if isinstance(value, dict) else value
                    if isinstance(text, str) and text.strip():
                        parts.append(text)
            return {"context": "\n\n".join(parts)} if parts else None
        return None

    return body


# hermes-agent's FailoverReason names -> the kernel's error reasons
_REASONS = {"auth": "auth", "auth_permanent": "auth", "billing": "billing", "rate_limit": "rate_limit",
            "upstream_rate_limit": "rate_limit", "overloaded": "server", "server_error": "server",
            "unknown": "server", "timeout": "transport", "context_overflow": "context_overflow",
            "payload_too_large": "context_overflow"}


def _reclassify(outcomes: list, error: Any) -> None:
    """The first valid answer of hermes' ``transform_api_error_classification``
    becomes the error's classification, in the kernel's terms: what to
    compress, retry or fall back from (other reasons: a bad request)."""
    for _rec, results, _failures in outcomes:
        for value in results:
            if not (isinstance(value, dict) and isinstance(value.get("reason"), str) and value["reason"]):
                continue
            if value.get("should_compress"):
                reason = "context_overflow"
            elif value.get("should_fallback"):
                reason = "rate_limit" if value.get("retryable") else "billing"  # try the next provider
            elif value.get("retryable"):
                reason = "server"
            else:
                reason = _REASONS.get(value["reason"], "bad_request")
            error.reason = reason
            if isinstance(value.get("message"), str) and value["message"].strip():
                error.message = value["message"].strip()
            return


def _engine_session_end(record, kw: dict) -> None:
    """A true session boundary: the agent's hermes context engine hears ``on_session_end``."""
    from plugins.hermes_compat.engines import ContextEngineAdapter

    agent = kw.get("agent")
    engine = getattr(agent, "context_engine", None)
    if isinstance(engine, ContextEngineAdapter) and engine.record is record:
        try:
            engine._call("on_session_end", kw.get("session_id"), list(getattr(agent, "messages", []) or []))
        except Exception as exc:
            log.warning("hermes context engine of %s: on_session_end failed: %s", record.name, exc)


def _directive(outcomes: list, kw: dict):
    """hermes-agent's ``{"action": ...}`` answers as the kernel's decisions: the
    first block wins; then a failed callback blocks (fails closed); then the first approve."""
    from kernel.types import Approve, Block

    for rec, results, _failures in outcomes:
        for value in results:
            if isinstance(value, dict) and value.get("action") == "block":
                return Block(str(value.get("message") or f"blocked by plugin {rec.name}: {kw.get('tool_name')}"))
    for rec, _results, failures in outcomes:
        if failures:
            exc = failures[0]
            return Block(f"blocked: the pre_tool_call hook of hermes plugin '{rec.name}' failed "
                         f"({type(exc).__name__}: {exc})")
    for _rec, results, _failures in outcomes:
        for value in results:
            if isinstance(value, dict) and value.get("action") == "approve":
                return Approve(str(value.get("message") or ""), str(value.get("rule_key") or ""))
    return None


# --------------------------------------------------------------------------
# The adapter


def _impl(name: str, params: tuple, body: Callable[[dict], Any], **opts: Any) -> Callable:
    """A function pluggy sees with exactly ``params`` as its arguments (pluggy
    reads a function's code object, so the function is generated; the names
    are the kernel's hook spec parameters)."""
    from kernel import hookimpl

    assert all(p.isidentifier() for p in params)
    source = f"def {name}({', '.join(params)}):\n    return _body(dict({', '.join(f'{p}={p}' for p in params)}))\n"
    scope: dict = {"_body": body}
    exec(source, scope)  # noqa: S102 - only identifiers from the hook specs
    return hookimpl(**opts)(scope[name])


class HermesPluginAdapter:
    """What the kernel registers for one hermes plugin (its hooks are set per instance)."""

    def __init__(self, record: state.PluginRecord):
        self.record = record
        self.hermes_hooks: set = set()  # kernel hooks this adapter implements from hermes callbacks
        self.__name__ = record.name
        manifest = record.manifest
        self.__doc__ = getattr(manifest, "description", "") or ""  # else the listing reads the package's Summary

    def __repr__(self) -> str:
        return f"<hermes plugin {self.record.name}>"


# hermes-agent hooks whose spec a built-in plugin brings (register_hookspecs), by owner
PLUGIN_SPECS = {
    "on_slash_command": "plugins.terminal.hookspecs",
    "on_skill_event": "plugins.skills.hookspecs",
    "on_clarify_request": "plugins.agent_tools_hookspecs",
    "on_clarify_response": "plugins.agent_tools_hookspecs",
    "on_approval_request": "plugins.approval_hookspecs",
    "on_approval_response": "plugins.approval_hookspecs",
    "transform_terminal_output": "plugins.core_tools_hookspecs",
    "subagent_start": "plugins.agent_tools_hookspecs",
    "subagent_stop": "plugins.agent_tools_hookspecs",
}


def kernel_spec(hook: str):
    """Our spec function for a hermes hook name, or None when nothing fires it."""
    import importlib

    from kernel import hookspecs

    spec = getattr(importlib.import_module(PLUGIN_SPECS[hook]) if hook in PLUGIN_SPECS else hookspecs, hook, None)
    return spec if hasattr(spec, "hermes_spec") else None


def _first_answer(bodies: list) -> Callable[[dict], Any]:
    """One kernel hook standing for several hermes hooks: run each; the first
    answer counts (only hooks of the same name answer)."""
    if len(bodies) == 1:
        return bodies[0]

    def body(kw: dict) -> Any:
        answer = None
        for each in bodies:
            value = each(kw)
            if answer is None:
                answer = value
        return answer

    return body


def build_adapter(record: state.PluginRecord) -> HermesPluginAdapter:
    from kernel import hookspecs

    from plugins.hermes_compat import adapters

    adapter = HermesPluginAdapter(record)
    names = set(record.hooks)
    if any(kind == "tool_request" for kind, _ in record.middleware):
        names.add("pre_tool_call")
    if record.context_engines:
        names.add("on_session_finalize")
    bodies: dict = {}  # kernel hook -> [(hermes hook, body)]
    for hook in sorted(names):
        kernel_hooks = [k for k in DERIVED.get(hook, (hook,)) if kernel_spec(k) is not None]
        if not kernel_hooks:
            log.warning("hermes plugin %s: hook %r is stored but the kernel never fires it", record.name, hook)
            continue
        for kernel_hook in kernel_hooks:
            params = tuple(inspect.signature(kernel_spec(kernel_hook)).parameters)
            bodies.setdefault(kernel_hook, []).append((hook, hook_body(record, hook, params, kernel_hook)))
    for kernel_hook, hermes in bodies.items():
        params = tuple(inspect.signature(kernel_spec(kernel_hook)).parameters)
        opts = {} if kernel_hook in vars(hookspecs) else {"optionalhook": True}  # its owner plugin may be blocked
        if kernel_hook == "on_provider_error":
            opts["tryfirst"] = True  # reclassify before the fallback policy decides
        setattr(adapter, kernel_hook, _impl(kernel_hook, params, _first_answer([b for _h, b in hermes]), **opts))
        adapter.hermes_hooks.update([kernel_hook] + [h for h, _b in hermes])
    for hook, params, body, opts in adapters.registration_impls(record):
        setattr(adapter, hook, _impl(hook, params, body, **opts))
    return adapter
