"""The hook table of plugins/hermes_compat/README.md, from the code: which of
hermes-agent's hook names fire here, when, and with which keywords.

    python scripts/compat_hook_table.py   # prints it; a test checks the README holds it
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plugins.hermes_compat.bridge import kernel_spec  # noqa: E402
from plugins.hermes_compat.keywords import DERIVED, HERMES_KWARGS  # noqa: E402
from plugins.hermes_compat.context import HERMES_HOOKS  # noqa: E402

OF_019 = set(HERMES_HOOKS[:23])  # the rest came with 0.22
_STREAM = "turn_id, iteration, session_id, model, provider, surface"
# hooks fired from a kernel event of another name: (keywords, when)
DERIVED_ROWS = {
    "on_stream_start": (_STREAM, "a streamed model call starts (`pre_api_request` with streaming on)"),
    "on_stream_delta": (f"{_STREAM}, delta, kind", "each streamed piece of text (`on_stream_delta`); `kind` is `text`"),
    "on_stream_end": (f"{_STREAM}, final_text, finished, error",
                      "a streamed call ends (`post_api_request`, or `api_request_error` with `finished=False`)"),
    "agent_loop_stopped": ("session_key, platform, reason, invalidation_reason",
                           "a turn ends interrupted (`on_session_end` with `interrupted`)"),
    "on_session_reset": ("session_id, reason, platform, old_session_id, new_session_id",
                         "chat's `/new` (`on_session_finalize` with `reason=new_session`)"),
    "pre_command": ("surface, command, alias_used, args_raw, session_key, platform",
                    "a chat command, before it runs (`on_slash_command` of the terminal-ui plugin)"),
    "on_interim_message": (f"{_STREAM}, text, already_streamed",
                           "the model said something beside the tool calls it asked for (`on_step`)"),
    "pre_auxiliary_call": ("session_id, task_id, turn_id, platform, api_request_id, api_call_count, model, provider, "
                           "base_url, api_mode, started_at, message_count, aux_task, retry_count, streaming, "
                           "request_messages, tool_count, approx_input_tokens, request_char_count, max_tokens, request, "
                           "system_prompt",
                           "a call beside the conversation (compression, approval review: `pre_api_request` with "
                           "`ApiCall.aux_task`); hermes' `*_api_request` hooks no longer see those"),
    "post_auxiliary_call": ("the same, without the request fields, plus ended_at, api_duration, finish_reason, "
                            "response_model, usage, response, assistant_content_chars, assistant_tool_call_count, "
                            "error, error_type",
                            "its end (`post_api_request`, or `api_request_error` with `error`)"),
    "on_skill_lifecycle": ("action, skill_name, provenance, task_id, session_id, use_count, reused, "
                           "reuse_after_patch",
                           "a skill loaded, created, edited or deleted (`on_skill_event` of the skills plugin); the "
                           "usage counts are None"),
    "transform_api_error_classification": (
        "provider, model, status_code, error_type, error_code, error_message, error_body, error, approx_tokens, "
        "context_length, num_messages",
        "a model call failed, before the fallback policy decides (`on_provider_error`, tried first); the first valid "
        "answer reclassifies the error: `should_compress` compresses, `should_fallback` moves on, `retryable` retries"),
    "on_human_input_request": ("kind, request_id, session_id, session_key, platform, prompt",
                               "the approval or the clarify question is about to be asked (`on_approval_request`, "
                               "`on_clarify_request`); `prompt` is masked"),
    "on_human_input_resolved": ("kind, request_id, session_id, session_key, platform, prompt, outcome",
                                "it ended (`on_approval_response`, `on_clarify_response`); `outcome` is the "
                                "approval choice, or `answered`/`unanswered`"),
    "pre_approval_request": ("command, description, pattern_key, pattern_keys, session_key, surface",
                             "a flagged command is put to the person (`on_approval_request` of the approval plugin)"),
    "post_approval_response": ("command, description, pattern_key, pattern_keys, session_key, surface, choice",
                               "the answer, or `nobody` (`on_approval_response` of the approval plugin)"),
}
WHY_NOT = {
    "pre_verify": "no verify step in the kernel's loop",
    "pre_gateway_dispatch": "no gateway",
    "post_gateway_admission": "no gateway",
    "gateway_platform_event": "no gateway",
    "on_room_member_activity": "no hosted group chat",
    "pre_transcription": "no transcription",
}


def fires(hook: str) -> bool:
    return any(kernel_spec(k) is not None for k in DERIVED.get(hook, (hook,)))


def table() -> str:
    rows = ["| hook | since | fired here | when (kernel event) | keywords (plus `telemetry_schema_version`) |",
            "|---|---|---|---|---|"]
    for hook in HERMES_HOOKS:
        since = "0.19" if hook in OF_019 else "0.22"
        if fires(hook):
            keywords, when = DERIVED_ROWS.get(hook) or (", ".join(HERMES_KWARGS[hook]), f"`{hook}`")
            rows.append(f"| `{hook}` | {since} | yes | {when} | {keywords} |")
        else:
            why = "no kanban board" if "kanban" in hook else WHY_NOT[hook]
            rows.append(f"| `{hook}` | {since} | no | {why} | stored, never called |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(table(), end="")
