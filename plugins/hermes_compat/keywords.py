"""hermes-agent's keyword sets, built from the kernel's records: what a hermes
plugin's hook callback receives for each kernel hook (0.19's keywords, plus what
0.22 adds), and the keywords of 0.22's hooks that no kernel hook is named after."""

from __future__ import annotations

from typing import Any

from plugins.hermes_compat.state import TELEMETRY_SCHEMA_VERSION

TOOL_IDS = ("task_id", "session_id", "tool_call_id", "turn_id", "api_request_id")
_API_IDS = ("task_id", "turn_id", "api_request_id", "session_id")

# hermes-agent's keyword arguments per hook: 0.19's, plus what 0.22 adds (``NEWER``)
HERMES_KWARGS = {
    "on_session_start": ("session_id", "model", "platform"),
    "on_session_end": ("session_id", "task_id", "turn_id", "completed", "interrupted", "model", "platform"),
    "on_session_finalize": ("session_id", "platform", "reason"),
    "pre_llm_call": ("session_id", "task_id", "turn_id", "user_message", "conversation_history", "is_first_turn",
                     "model", "platform", "sender_id"),
    "post_llm_call": ("session_id", "task_id", "turn_id", "user_message", "assistant_response",
                      "conversation_history", "model", "platform"),
    "transform_llm_output": ("response_text", "session_id", "model", "platform"),
    "pre_api_request": _API_IDS + ("user_message", "conversation_history", "platform", "model", "provider",
                                   "base_url", "api_mode", "api_call_count", "request_messages", "message_count",
                                   "tool_count", "approx_input_tokens", "request_char_count", "max_tokens",
                                   "started_at", "middleware_trace", "request"),
    "post_api_request": _API_IDS + ("platform", "model", "provider", "base_url", "api_mode", "api_call_count",
                                    "api_duration", "started_at", "ended_at", "finish_reason", "message_count",
                                    "response_model", "response", "usage", "assistant_message",
                                    "assistant_content_chars", "assistant_tool_call_count"),
    "api_request_error": _API_IDS + ("platform", "model", "provider", "base_url", "api_mode", "api_call_count",
                                     "api_duration", "started_at", "ended_at", "status_code", "retry_count",
                                     "max_retries", "retryable", "reason", "error", "request"),
    "pre_tool_call": ("tool_name", "args") + TOOL_IDS + ("middleware_trace",),
    "post_tool_call": ("tool_name", "args", "result") + TOOL_IDS + ("duration_ms", "status", "error_type",
                                                                      "error_message", "middleware_trace"),
    "transform_tool_result": ("tool_name", "args", "result") + TOOL_IDS + ("duration_ms", "status", "error_type",
                                                                             "error_message"),
    "transform_terminal_output": ("command", "output", "returncode", "task_id", "env_type"),
    "subagent_start": ("parent_session_id", "parent_turn_id", "parent_subagent_id", "child_session_id",
                       "child_subagent_id", "child_role", "child_goal"),
    "subagent_stop": ("parent_session_id", "parent_turn_id", "child_session_id", "child_role", "child_summary",
                      "child_status", "duration_ms"),
}
# keywords hermes-agent 0.22 passes beyond 0.19's (read from its fire sites)
NEWER = {
    "on_session_end": ("failed", "turn_exit_reason"),
    "pre_llm_call": ("parent_session_id",),
    "transform_llm_output": ("turn_id",),
    "pre_api_request": ("retry_count", "system_prompt"),
    "post_api_request": ("context_length", "first_chunk_at", "moa_references"),
    "transform_terminal_output": ("tool_call_id",),
    "subagent_stop": ("tool_call_history",),
}
for _hook, _names in NEWER.items():
    HERMES_KWARGS[_hook] += _names
FIRST_STR = {"transform_tool_result", "transform_terminal_output", "transform_llm_output"}

# hermes-agent 0.22 hooks that no kernel hook is named after: the kernel hooks
# that stand for them (their keywords are built by ``_derived_kwargs``; the
# hermes hook fires only when the kernel event is the one it means)
DERIVED = {
    "on_stream_start": ("pre_api_request",),
    "on_stream_end": ("post_api_request", "api_request_error"),
    "agent_loop_stopped": ("on_session_end",),
    "on_session_reset": ("on_session_finalize",),
    "pre_command": ("on_slash_command",),
    "pre_approval_request": ("on_approval_request",),
    "post_approval_response": ("on_approval_response",),
    "on_interim_message": ("on_step",),
    "on_skill_lifecycle": ("on_skill_event",),
    "transform_api_error_classification": ("on_provider_error",),
    "on_human_input_request": ("on_approval_request", "on_clarify_request"),
    "on_human_input_resolved": ("on_approval_response", "on_clarify_response"),
    "pre_auxiliary_call": ("pre_api_request",),
    "post_auxiliary_call": ("post_api_request", "api_request_error"),
}
_API_HOOKS = ("pre_api_request", "post_api_request", "api_request_error")  # the conversation's calls only
_AUX_BASE = ("session_id", "task_id", "turn_id", "platform", "api_request_id", "api_call_count", "model", "provider",
             "base_url", "api_mode", "started_at", "message_count")
_AUX_PRE = ("request_messages", "tool_count", "approx_input_tokens", "request_char_count", "max_tokens", "request")
_AUX_POST = ("ended_at", "api_duration", "finish_reason", "response_model", "usage", "response",
             "assistant_content_chars", "assistant_tool_call_count")


def _api_kwargs(hook: str, kw: dict) -> dict:
    """hermes-agent's loose keywords for an API hook, from our ``ApiCall``
    (and the response or the error)."""
    call, agent = kw["call"], kw.get("agent")
    out = dict(task_id=call.task_id, turn_id=call.turn_id, api_request_id=call.api_request_id,
               session_id=call.session_id, platform=call.platform, model=call.model, provider=call.provider,
               base_url=call.base_url, api_mode=call.api_mode, api_call_count=call.number,
               started_at=call.started_at, message_count=len(call.request.messages))
    if hook == "pre_api_request":
        r = call.request
        chars = sum(len(m["content"]) for m in r.messages if isinstance(m.get("content"), str))
        body = {"model": r.model, "messages": r.messages, "tools": r.tools, "tool_choice": r.tool_choice,
                "stream": r.stream}  # the request body in OpenAI chat form, as hermes-agent's hooks get it
        out.update(user_message=call.user_message, conversation_history=list(getattr(agent, "messages", []) or []),
                   request_messages=list(r.messages), tool_count=len(r.tools), approx_input_tokens=chars // 4,
                   request_char_count=chars, max_tokens=r.max_tokens, middleware_trace=[],
                   request={"method": "POST", "body": body})
    elif hook == "post_api_request":
        response = kw["response"]
        message = response.to_message()
        out.update(api_duration=call.duration, ended_at=call.ended_at, finish_reason=response.finish_reason,
                   response_model=response.model, response=message, usage=dict(response.usage),
                   assistant_message=message, assistant_content_chars=len(response.content or ""),
                   assistant_tool_call_count=len(response.tool_calls))
    else:  # api_request_error
        error, attempt = kw["error"], kw["attempt"]
        max_retries = agent.config.get("agent.api_max_retries") if agent is not None else None
        out.update(api_duration=call.duration, ended_at=call.ended_at, status_code=error.status_code,
                   retry_count=attempt - 1, max_retries=max_retries, retryable=error.retryable,
                   reason=error.reason, error={"type": error.reason, "message": error.message}, request=None)
    return out


# what hermes-agent passes where the kernel has nothing to pass
_EMPTY = {"middleware_trace": list, "sender_id": lambda: None}


def _stream_base(kw: dict) -> dict:
    """hermes-agent 0.22's common keywords of the stream hooks."""
    agent, call = kw.get("agent"), kw.get("call")
    turn = getattr(agent, "turn", None)
    provider = str(getattr(call, "provider", None) or getattr(getattr(agent, "provider_config", None), "provider", "")
                   or "")
    return {"turn_id": getattr(call, "turn_id", None) or getattr(turn, "turn_id", "") or "",
            "iteration": int(getattr(call, "number", 0) or getattr(turn, "api_calls", 0) or 0),
            "session_id": getattr(agent, "session_id", "") or "",
            "model": getattr(call, "model", None) or getattr(getattr(agent, "provider_config", None), "model", "") or "",
            "provider": provider, "surface": getattr(agent, "platform", "") or "cli"}


def _derived_kwargs(hook: str, kernel_hook: str, kw: dict):
    """hermes' keywords for a hook of hermes-agent 0.22, or None when this
    kernel event is not the one the hook means."""
    agent = kw.get("agent")
    call = kw.get("call")
    streaming = bool(getattr(getattr(call, "request", None), "stream", False))
    if hook == "on_stream_delta":
        return {**_stream_base(kw), "delta": kw.get("text", ""), "kind": "text"}
    if hook == "on_stream_start":
        return _stream_base(kw) if streaming else None
    if hook == "on_stream_end":
        if not streaming:
            return None
        if kernel_hook == "post_api_request":
            return {**_stream_base(kw), "final_text": kw["response"].content or "", "finished": True, "error": None}
        return {**_stream_base(kw), "final_text": "", "finished": False, "error": kw["error"].message}
    if hook == "agent_loop_stopped":
        if not kw.get("interrupted"):
            return None
        return {"session_key": kw.get("session_id"), "platform": kw.get("platform"), "reason": "user_stop",
                "invalidation_reason": "session_interrupt"}
    if hook == "on_session_reset":
        if kw.get("reason") != "new_session":
            return None
        new = getattr(agent, "session_id", "") or ""
        return {"session_id": new, "reason": "new_session", "platform": kw.get("platform"),
                "old_session_id": kw.get("session_id"), "new_session_id": new}
    if hook in ("pre_approval_request", "post_approval_response"):
        out = {"command": kw.get("command") or kw.get("tool_name"), "description": kw.get("message"),
               "pattern_key": kw.get("rule_key"), "pattern_keys": [kw.get("rule_key")] if kw.get("rule_key") else [],
               "session_key": getattr(agent, "session_id", None), "surface": "cli"}
        return {**out, "choice": kw["choice"]} if hook == "post_approval_response" else out
    if hook in ("on_human_input_request", "on_human_input_resolved"):
        return _human_input(hook, kernel_hook, kw)
    if hook == "transform_api_error_classification":
        error = kw["failure"].error
        messages = list(getattr(agent, "messages", []) or [])
        return {"provider": error.provider or getattr(getattr(agent, "provider_config", None), "provider", ""),
                "model": getattr(getattr(agent, "provider_config", None), "model", ""),
                "status_code": error.status_code, "error_type": error.reason, "error_code": None,
                "error_message": error.message, "error_body": None, "error": error,
                "approx_tokens": sum(len(str(m.get("content") or "")) for m in messages) // 4,
                "context_length": getattr(getattr(agent, "context_engine", None), "context_length", None),
                "num_messages": len(messages)}
    if hook == "on_skill_lifecycle":
        source = kw.get("source")
        provenance = "local" if source == "user" else "installed" if source not in ("project",) else "external"
        turn = getattr(agent, "turn", None)
        return {"action": kw.get("action"), "skill_name": kw.get("name"), "provenance": provenance,
                "task_id": getattr(turn, "task_id", "") or "", "session_id": getattr(agent, "session_id", "") or "",
                "use_count": None, "reused": None, "reuse_after_patch": None}
    if hook == "on_interim_message":  # what the model said beside the tool calls it asked for
        said = [m for m in kw.get("messages") or [] if m.get("role") == "assistant" and m.get("tool_calls")]
        text = " ".join(str(m.get("content") or "").strip() for m in said).strip()
        if not text:
            return None
        return {**_stream_base(kw), "text": text, "already_streamed": bool(getattr(agent, "stream", False))}
    if hook in ("pre_auxiliary_call", "post_auxiliary_call"):
        if not getattr(call, "aux_task", ""):
            return None  # the conversation's own call: hermes' *_api_request hooks have it
        api = _api_kwargs(kernel_hook, kw)
        first = (call.request.messages or [{}])[0]
        out = {**{k: api.get(k) for k in _AUX_BASE}, "aux_task": call.aux_task, "retry_count": 0,
               "streaming": streaming}
        if hook == "pre_auxiliary_call":
            return {**out, **{k: api.get(k) for k in _AUX_PRE},
                    "system_prompt": first.get("content") if first.get("role") == "system" else ""}
        error = kw.get("error")
        return {**out, **{k: api.get(k) for k in _AUX_POST},
                "error": None if error is None else f"{error.reason}: {error.message}",
                "error_type": None if error is None else error.reason}
    if hook == "pre_command":
        return {"surface": "cli", "command": kw.get("name"), "alias_used": kw.get("name"),
                "args_raw": kw.get("args", ""), "session_key": getattr(agent, "session_id", None),
                "platform": getattr(agent, "platform", "cli")}
    return None


_HUMAN_INPUT = "hermes_compat.human_input"  # agent.state: the request id of the question being asked


def _human_input(hook: str, kernel_hook: str, kw: dict) -> dict:
    """hermes-agent 0.22's human-input observers, from the approval and the
    clarify questions: one ``request_id`` for the question and its end; the
    prompt is masked and what the person typed is never passed."""
    import uuid

    agent = kw.get("agent")
    state = getattr(agent, "state", {})
    kind = "approval" if "approval" in kernel_hook else "clarify"
    if hook == "on_human_input_request":
        request_id = state[_HUMAN_INPUT] = uuid.uuid4().hex
    else:
        request_id = state.pop(_HUMAN_INPUT, None) or uuid.uuid4().hex
    prompt = str(kw.get("command") or kw.get("question") or kw.get("tool_name") or "")
    secrets = getattr(agent, "secrets", None)
    out = {"kind": kind, "request_id": request_id, "session_id": getattr(agent, "session_id", ""),
           "session_key": getattr(agent, "session_id", ""), "platform": getattr(agent, "platform", "cli"),
           "prompt": secrets.mask(prompt) if secrets is not None else prompt}
    if hook == "on_human_input_resolved":
        out["outcome"] = kw["choice"] if kind == "approval" else ("answered" if kw.get("answered") else "unanswered")
    return out


def hermes_kwargs(hook: str, kw: dict, spec_args: tuple, kernel_hook: str = ""):
    if hook in _API_HOOKS and getattr(kw.get("call"), "aux_task", ""):
        return None  # hermes-agent 0.22 tells auxiliary calls apart (pre/post_auxiliary_call)
    if hook in DERIVED or hook == "on_stream_delta":
        derived = _derived_kwargs(hook, kernel_hook or hook, kw)
        return None if derived is None else {**derived, "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION}
    names = HERMES_KWARGS.get(hook) or tuple(a for a in spec_args if a != "agent")
    if hook in _API_HOOKS:
        kw = {**kw, **_api_kwargs(hook, kw)}
    kw = {**_newer_values(hook, kw), **kw}
    out = {name: kw[name] if name in kw else (_EMPTY[name]() if name in _EMPTY else None) for name in names}
    provider, model = out.get("provider"), out.get("model")
    if isinstance(provider, str) and model and provider.endswith(f":{model}"):
        out["provider"] = provider[: -len(model) - 1]  # hermes passes the provider's name, not "name:model"
    if "api_mode" in out:
        _fill_endpoint(out, kw.get("agent"))
    out["telemetry_schema_version"] = TELEMETRY_SCHEMA_VERSION
    return out


def _newer_values(hook: str, kw: dict) -> dict:
    """Values for 0.22's added keywords that the kernel knows (the rest are None)."""
    agent = kw.get("agent")
    if hook == "on_session_end":
        return {"failed": kw.get("exit_reason") == "error", "turn_exit_reason": kw.get("exit_reason")}
    if hook == "pre_llm_call":
        return {"parent_session_id": getattr(agent, "parent_session_id", None)}
    if hook == "transform_llm_output":
        return {"turn_id": getattr(getattr(agent, "turn", None), "turn_id", None)}
    if hook == "pre_api_request":
        first = (kw["call"].request.messages or [{}])[0]
        return {"retry_count": 0, "system_prompt": first.get("content") if first.get("role") == "system" else None}
    if hook == "post_api_request":
        return {"context_length": getattr(getattr(agent, "context_engine", None), "context_length", None)}
    return {}


def _fill_endpoint(out: dict, agent: Any) -> None:
    """hermes passes the API mode and base URL actually used; the kernel passes
    the configured ones, which may be empty (resolved later, or a hermes
    provider profile's own)."""
    from plugins.hermes_compat.host.providers import get_provider_profile

    profile = None
    for name in (out.get("api_mode"), out.get("provider")):
        if isinstance(name, str) and name:
            profile = get_provider_profile(name)
            if profile is not None:
                break
    if profile is not None:
        if not out.get("api_mode") or out["api_mode"] == profile.name:
            out["api_mode"] = getattr(profile, "api_mode", "") or "chat_completions"
        out["base_url"] = out.get("base_url") or getattr(profile, "base_url", "") or ""
        return
    if not out.get("api_mode") and agent is not None:
        try:
            out["api_mode"] = agent.hook.resolve_api_mode(config=agent.provider_config) or ""
        except Exception:  # an observer's keywords are not worth failing a model call
            pass


TOOL_HOOKS = ("pre_tool_call", "post_tool_call", "transform_tool_result")


def tool_kwargs(kw: dict) -> dict:
    """hermes-agent's loose keywords for a tool hook, from our ``ToolCall``
    (and, after the call, its ``ToolOutcome``)."""
    call, outcome = kw["call"], kw.get("outcome")
    out = dict(tool_name=call.name, args=call.args, task_id=call.task_id, session_id=call.session_id,
               tool_call_id=call.id, turn_id=call.turn_id, api_request_id=call.api_request_id)
    if outcome is not None:
        out.update(result=outcome.result, duration_ms=outcome.duration_ms, status=outcome.status,
                   error_type=outcome.error_type, error_message=outcome.error_message)
    return out
