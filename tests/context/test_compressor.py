"""The ``compressor`` context engine, called directly."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.host.config import Config, ConfigError
from kernel.messages import validate
from plugins.compressor import (
    SUMMARY_PREFIX,
    Compressor,
    context_window,
    estimate_tokens,
    plan,
)


def call(cid, name="read_file", args=None):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args or {})}}


def user(text):
    return {"role": "user", "content": text}


def assistant(text, *calls):
    msg = {"role": "assistant", "content": text}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def tool(cid, text):
    return {"role": "tool", "tool_call_id": cid, "content": text}


def engine(summary="SUMMARY", **compression):
    cfg = Config({"compression": compression} if compression else {})
    return Compressor(cfg, model="gpt-4o", summarize=(lambda text: summary) if isinstance(summary, str) else summary)


def long_history(turns=12, size=100):
    msgs = []
    for t in range(turns):
        msgs.append(user(f"question {t} " + "q" * size))
        msgs.append(assistant(f"looking {t}", call(f"c{t}a"), call(f"c{t}b", "grep")))
        msgs.append(tool(f"c{t}a", f"result a{t} " + "r" * size))
        msgs.append(tool(f"c{t}b", f"result b{t}"))
        msgs.append(assistant(f"answer {t} " + "x" * size))
    return msgs


# ---------------------------------------------------------------- boundaries


def test_plan_moves_boundaries_around_tool_groups():
    msgs = long_history(3)  # u a(2 calls) t t a | u a t t a | u a t t a
    # head of 2 ends on the calling assistant: both results join the head
    assert plan(msgs, 2, 3)[0] == 4
    # a tail of 3 would start on a tool result: it grows back to the calling assistant
    head_end, tail_start = plan(msgs, 2, 3)
    assert msgs[tail_start]["role"] == "assistant" and msgs[tail_start].get("tool_calls")
    assert tail_start == 11
    assert plan(msgs, 10, 10) is None  # nothing left between head and tail


def test_compress_keeps_head_tail_and_pairs():
    msgs = long_history(12)
    eng = engine(protect_first_n=3, protect_last_n=6)
    out = eng.compress(msgs, reason="preflight")
    validate(out)
    assert out[:3] == msgs[:3] or out[:4] == msgs[:4]
    assert out[-6:] == msgs[-6:]
    summaries = [m for m in out if SUMMARY_PREFIX in str(m.get("content"))]
    assert len(summaries) == 1 and summaries[0]["role"] == "user" and "SUMMARY" in summaries[0]["content"]
    assert eng.compression_count == 1 and len(out) < len(msgs)


def test_defaults_half_the_window_first_3_last_20():
    eng = engine()
    assert (eng.threshold_percent, eng.protect_first_n, eng.protect_last_n) == (0.5, 3, 20)
    assert eng.threshold_tokens == 64_000  # gpt-4o: 128,000 tokens
    msgs = long_history(12)  # 60 messages; message 3 is a tool result, so the head takes its sibling too
    out = eng.compress(msgs)
    validate(out)
    assert out[:4] == msgs[:4] and out[-19:] == msgs[-19:] and len(out) == 4 + 20
    # the tail's first message is a user message: the summary goes in front of it (no two users in a row)
    assert out[4]["content"].startswith(SUMMARY_PREFIX) and out[4]["content"].endswith(msgs[-20]["content"])


def test_summary_merges_with_neighbouring_user_messages():
    msgs = [user("first"), assistant("a1"), user("second"), assistant("a2"), user("third"), assistant("a3"), user("now")]
    out = engine(protect_first_n=1, protect_last_n=1).compress(msgs)
    validate(out)
    assert len(out) == 1 and out[0]["role"] == "user"  # first + summary + now, one user message
    assert out[0]["content"].startswith("first") and out[0]["content"].endswith("now")
    out = engine(protect_first_n=2, protect_last_n=2).compress(msgs)
    validate(out)
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant", "user"]
    assert out[2]["content"].startswith(SUMMARY_PREFIX)


def test_system_message_is_kept_outside_the_head():
    msgs = [{"role": "system", "content": "sys"}] + long_history(6)
    out = engine(protect_first_n=1, protect_last_n=2).compress(msgs)
    assert out[0] == msgs[0] and out[1]["content"].startswith(msgs[1]["content"])
    validate(out)


def test_preflight_with_nothing_to_compress_returns_the_input():
    msgs = long_history(2)
    eng = engine(protect_first_n=3, protect_last_n=20)
    assert eng.compress(msgs) == msgs and eng.compression_count == 0


def test_forced_compression_shrinks_the_tail_when_needed():
    msgs = long_history(4)  # 20 messages, all protected at 3 + 20
    out = engine(protect_first_n=3, protect_last_n=20).compress(msgs, reason="overflow")
    validate(out)
    assert len(out) < len(msgs) and out[-1] == msgs[-1]


# ---------------------------------------------------------------- the summary


def test_summary_prompt_holds_the_middle_and_memory_notes():
    prompts = []
    eng = engine(summary=lambda text: prompts.append(text) or "SUM", protect_first_n=1, protect_last_n=2)

    eng.compress(long_history(4), agent=None, reason="preflight", notes=["user is called Ada"])
    (prompt,) = prompts
    assert "question 1" in prompt and "calls grep(" in prompt and "[tool result of read_file]" in prompt
    assert "user is called Ada" in prompt


@pytest.mark.parametrize("failure", [RuntimeError("model down"), ""])
def test_fallback_summary_when_the_summary_call_fails(failure):
    def summarize(text):
        if isinstance(failure, Exception):
            raise failure
        return failure

    eng = engine(summary=summarize, protect_first_n=1, protect_last_n=2)
    out = eng.compress(long_history(4))
    validate(out)
    summary = next(m["content"] for m in out if SUMMARY_PREFIX in str(m.get("content")))
    assert "unavailable" in summary
    assert "- assistant: looking 1 (called read_file, grep)" in summary
    assert "- tool grep returned: result b1" in summary
    assert "- user: question 2" in summary
    assert eng.fallback_count == 1 and eng.compression_count == 1


def test_fallback_without_any_summariser():
    eng = Compressor(Config({}), model="m")  # no agent, no injected callable
    out = eng.compress(long_history(10))
    assert "unavailable" in next(m["content"] for m in out if SUMMARY_PREFIX in str(m.get("content")))


# ---------------------------------------------------------------- the trigger


def test_should_compress_uses_estimate_or_real_prompt_tokens():
    eng = Compressor(Config({"model_context_length": 10_000}), summarize=lambda t: "S")
    assert eng.threshold_tokens == 5_000
    small = long_history(12, size=10)
    assert estimate_tokens(small) < 5_000
    assert not eng.should_compress(small)
    eng.update_from_response({"prompt_tokens": 6_000, "output_tokens": 10})
    assert eng.should_compress(small)  # the provider's real count passed the threshold
    eng.compress(small)
    assert eng.last_prompt_tokens == 0 and not eng.should_compress(eng.compress(small))
    big = long_history(12, size=2_000)
    assert estimate_tokens(big) > 5_000 and Compressor(Config({"model_context_length": 10_000})).should_compress(big)


def test_should_compress_is_false_when_disabled_or_nothing_to_compress():
    big = long_history(12, size=2_000)
    assert not Compressor(Config({"compression": {"enabled": False}, "model_context_length": 2_000})).should_compress(big)
    assert not Compressor(Config({"model_context_length": 2_000})).should_compress(big[:5])


def test_context_windows_and_override():
    assert context_window("claude-sonnet-4-5") == 200_000
    assert context_window("openai/gpt-4.1-mini") == 1_047_576
    assert context_window("gpt-4o-mini") == 128_000
    assert context_window("gpt-4") == 8_192
    assert context_window("some-local-model") == 128_000
    assert Compressor(Config({"model_context_length": 32_000}), model="claude-x").context_length == 32_000


@pytest.mark.parametrize(
    "data, key",
    [
        ({"compression": {"threshold": 1.5}}, "compression.threshold"),
        ({"compression": {"threshold": 0}}, "compression.threshold"),
        ({"compression": {"protect_last_n": -1}}, "compression.protect_last_n"),
        ({"model_context_length": "big"}, "model_context_length"),
        ({"auxiliary": {"compression": "cheap-model"}}, "auxiliary.compression"),
        ({"auxiliary": {"compression": {"model": 3}}}, "auxiliary.compression.model"),
        ({"auxiliary": {"compression": {"model": "m", "timeout": 0}}}, "auxiliary.compression.timeout"),
    ],
)
def test_bad_config_is_a_clear_error(data, key):
    with pytest.raises(ConfigError, match=key):
        Compressor(Config(data))


# ---------------------------------------------------------------- property: random valid histories


@st.composite
def histories(draw):
    msgs, n = [], 0
    text = st.text(alphabet="abc xyz", min_size=0, max_size=40)
    for _ in range(draw(st.integers(1, 8))):
        msgs.append(user("u" + draw(text)))
        for _ in range(draw(st.integers(0, 3))):
            ids = [f"c{n + i}" for i in range(draw(st.integers(1, 3)))]
            n += len(ids)
            msgs.append(assistant(draw(st.one_of(st.none(), text)), *[call(i, draw(st.sampled_from(["a", "b"]))) for i in ids]))
            msgs.extend(tool(i, "r" + draw(text)) for i in ids)
        msgs.append(assistant("a" + draw(text)))
    # cut the last turn where a history can end: after its user message or after a tool group
    ends = [i + 1 for i, m in enumerate(msgs) if m["role"] == "user" or (m["role"] == "tool" and (i + 1 == len(msgs) or msgs[i + 1]["role"] != "tool"))]
    ends.append(len(msgs))
    return msgs[: draw(st.sampled_from(ends))]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(0, 5), st.integers(0, 8), st.sampled_from(["preflight", "overflow"]))
def test_property_pairs_head_and_tail_survive(msgs, first_n, last_n, reason):
    validate(msgs)
    out = Compressor(Config({"compression": {"protect_first_n": first_n, "protect_last_n": last_n}}),
                     summarize=lambda t: "SUMMARY").compress(msgs, reason=reason)
    validate(out)  # every tool call still has its results right after it; roles alternate
    originals = {json.dumps(m, sort_keys=True) for m in msgs}
    for m in out:
        if m["role"] in ("tool",) or m.get("tool_calls"):
            assert json.dumps(m, sort_keys=True) in originals  # tool messages are never rewritten
    if out == msgs:
        return
    assert len(out) <= len(msgs)
    assert sum(SUMMARY_PREFIX in str(m.get("content")) for m in out) == 1
    if reason != "preflight":
        return
    for i in range(min(first_n, len(msgs))):  # the protected head, in place
        if out[i] != msgs[i]:
            assert out[i]["role"] == "user" and out[i]["content"].startswith(msgs[i]["content"])
    for j in range(1, min(last_n, len(msgs)) + 1):  # the protected tail, in place
        if out[-j] != msgs[-j]:
            assert out[-j]["role"] == "user" and out[-j]["content"].endswith(msgs[-j]["content"])


def test_repeated_compression_folds_earlier_summaries():
    prompts = []
    eng = engine(summary=lambda text: prompts.append(text) or f"S{len(prompts)}:", protect_first_n=1, protect_last_n=2)
    msgs = long_history(4)
    for round_ in range(1, 5):
        more = [m for m in long_history(3) if m["role"] != "tool" and not m.get("tool_calls")]  # u a u a u a
        msgs = eng.compress(msgs) + more
        validate(msgs)
        text = json.dumps(msgs)
        assert text.count(SUMMARY_PREFIX) == 1, round_  # never stacked in the protected head
        assert f"S{round_}:" in text and f"S{round_ - 1}:" not in text
        if round_ > 1:
            assert f"S{round_ - 1}:" in prompts[-1]  # the earlier summary was folded into the new one
    assert eng.compression_count == 4
    assert msgs[0]["content"].startswith("question 0") and len(msgs[0]["content"]) < 500


def test_images_count_in_the_estimate():
    text_only = [user("look")]
    with_image = [{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:"}}]}]
    assert estimate_tokens(with_image) - estimate_tokens(text_only) >= 1_600


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), histories(), st.integers(0, 4), st.integers(0, 6))
def test_property_compressing_a_compressed_history(first, more, first_n, last_n):
    eng = Compressor(Config({"compression": {"protect_first_n": first_n, "protect_last_n": last_n}}),
                     summarize=lambda t: "SUMMARY")
    out = eng.compress(first, reason="overflow")
    # continue the conversation validly, then compress again
    if out[-1]["role"] != "assistant" or out[-1].get("tool_calls"):
        out.append(assistant("done"))
    out = eng.compress(out + more, reason="overflow")
    validate(out)
    assert json.dumps(out).count(SUMMARY_PREFIX) <= 2


def test_summary_prompt_fits_the_window():
    prompts = []
    eng = Compressor(Config({"model_context_length": 2_000, "compression": {"protect_first_n": 1, "protect_last_n": 2}}),
                     summarize=lambda t: prompts.append(t) or "S")
    eng.compress(long_history(40, size=3_000))
    assert len(prompts[0]) <= 2_000 * 4 // 2 + 200
    assert "question 1" in prompts[0]


def test_multimodal_user_messages_merge_and_lift():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    first = {"role": "user", "content": [{"type": "text", "text": "see this"}, image]}
    msgs = [first, assistant("a1"), user("u2"), assistant("a2"), user("u3"), assistant("a3"), user("u4")]
    eng = engine(protect_first_n=1, protect_last_n=1)
    out = eng.compress(msgs)
    validate(out)
    assert len(out) == 1 and out[0]["content"][:2] == first["content"]  # the image stays in the head
    assert out[0]["content"][2]["text"].startswith(SUMMARY_PREFIX) and out[0]["content"][-1]["text"] == "u4"
    again = eng.compress(out + [assistant("a4"), user("u5"), assistant("a5"), user("u6")])
    validate(again)
    assert json.dumps(again).count(SUMMARY_PREFIX) == 1 and again[0]["content"][:2] == first["content"]


def test_forced_compression_shrinks_a_tail_too_big_for_the_window():
    msgs = long_history(8, size=1_500)  # 40 messages, ~150 tokens each message with a result
    config = {"protect_first_n": 1, "protect_last_n": 20, "target_ratio": 1}
    roomy = Compressor(Config({"model_context_length": 16_000, "compression": config}), summarize=lambda t: "S")
    preflight = roomy.compress(msgs)
    assert preflight[-19:] == msgs[-19:]  # pre-flight keeps the configured tail (its first user message takes the summary)
    eng = Compressor(Config({"model_context_length": 4_000, "compression": config}), summarize=lambda t: "S")
    out = eng.compress(msgs, reason="overflow")
    validate(out)
    tail = out[next(i for i, m in enumerate(out) if SUMMARY_PREFIX in str(m.get("content"))) + 1 :]
    assert estimate_tokens(tail) <= 1_000 and tail == msgs[len(msgs) - len(tail):]


def test_preflight_keeps_fewer_recent_messages_when_they_alone_pass_the_target_ratio():
    """hermes-agent's compression.target_ratio: 20 recent messages of big tool results kept whole would leave the
    history over the threshold after every compression (ineffective, then never again until the window overflows).
    The tail is halved while it takes more than target_ratio of the threshold; small messages keep all 20."""
    msgs = long_history(8, size=1_500)  # 40 messages, ~150 tokens each message with a result
    eng = Compressor(Config({"model_context_length": 8_000, "compression": {"protect_first_n": 1}}),
                     summarize=lambda t: "S")
    assert eng.threshold_tokens == 4_000 and estimate_tokens(msgs[-20:]) > 800 and eng.should_compress(msgs)
    out = eng.compress(msgs)
    validate(out)
    tail = out[next(i for i, m in enumerate(out) if SUMMARY_PREFIX in str(m.get("content"))) + 1 :]
    assert estimate_tokens(tail) <= 800 and tail == msgs[len(msgs) - len(tail):] and len(tail) >= 2
    assert estimate_tokens(out) < eng.threshold_tokens  # the next turn does not compress again
    # the tail cut short left the request in hand to the summary: it stays word for word
    assert not any(m["role"] == "user" for m in tail)
    summary = next(m["content"] for m in out if SUMMARY_PREFIX in str(m.get("content")))
    assert f"The user's latest message, word for word (the task in hand):\nquestion 7 {'q' * 1_500}\n" in summary
    small = long_history(8)
    kept = Compressor(Config({"model_context_length": 8_000, "compression": {"protect_first_n": 1}}),
                      summarize=lambda t: "S").compress(small)
    assert kept[-19:] == small[-19:]
    assert "word for word" not in next(m["content"] for m in kept if SUMMARY_PREFIX in str(m.get("content")))
