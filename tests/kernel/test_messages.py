import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.messages import (
    CORRUPT_ARGUMENTS_MARKER,
    MISSING_RESULT,
    MessageSchemaError,
    append_user,
    problems,
    repair,
    validate,
)
import pytest


def call(cid, name="t", args='{"a": 1}'):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def asst(content="ok", calls=None, **extra):
    msg = {"role": "assistant", "content": content, **extra}
    if calls:
        msg["tool_calls"] = calls
    return msg


def tool(cid, content="r"):
    return {"role": "tool", "tool_call_id": cid, "content": content}


def user(text="hi"):
    return {"role": "user", "content": text}


VALID = [
    {"role": "system", "content": "sys"},
    user(),
    asst(None, [call("a"), call("b")]),
    tool("a"),
    tool("b"),
    asst("done", reasoning="thought about it"),
    user("more"),
]


def test_valid_history_passes_and_repair_keeps_it():
    validate(VALID)
    assert repair(VALID) == VALID
    assert repair(VALID)[5]["reasoning"] == "thought about it"


@pytest.mark.parametrize(
    "history, fragment",
    [
        ([user(), user()], "two user messages in a row"),
        ([user(), asst(), asst()], "two assistant messages in a row"),
        ([asst()], "must start with a user message"),
        ([user(), asst(None, [call("a")]), user()], "have no result"),
        ([user(), asst(None, [call("a")])], "have no result"),
        ([user(), tool("zz")], "answers no open tool call"),
        ([user(), {"role": "system", "content": "x"}], "only allowed first"),
        ([user(), {"role": "robot", "content": "x"}], "unknown role"),
        ([user(), asst(None, [call("a"), call("a")]), tool("a"), tool("a")], "duplicate tool call id"),
        ([user(), asst(None, [call("a", args={"x": 1})]), tool("a")], "must be a JSON string"),
    ],
)
def test_validator_finds_each_rule(history, fragment):
    found = problems(history)
    assert any(fragment in p for p in found), found
    with pytest.raises(MessageSchemaError):
        validate(history)


def test_repair_merges_users_adds_missing_results_drops_orphans():
    broken = [
        user("a"),
        user("b"),
        asst(None, [call("x"), call("y")]),
        tool("x"),
        tool("nobody"),
        user("c"),
    ]
    fixed = repair(broken)
    validate(fixed)
    assert fixed[0]["content"] == "a\n\nb"
    results = {m["tool_call_id"]: m["content"] for m in fixed if m["role"] == "tool"}
    assert results["x"] == "r"
    assert MISSING_RESULT in results["y"]
    assert "nobody" not in results
    assert fixed[-1] == user("c")


def test_repair_marks_unreadable_arguments_instead_of_crashing():
    fixed = repair([user(), asst(None, [call("x", args="{not json")]), tool("x")])
    validate(fixed)
    args = json.loads(fixed[1]["tool_calls"][0]["function"]["arguments"])
    assert args == {"_invalid_arguments": CORRUPT_ARGUMENTS_MARKER}


def test_repair_does_not_mutate_input_and_keeps_leading_system():
    broken = [{"role": "system", "content": "s"}, asst("hello")]
    snapshot = json.dumps(broken)
    fixed = repair(broken)
    assert json.dumps(broken) == snapshot
    validate(fixed)
    assert fixed[0]["role"] == "system" and fixed[1]["role"] == "user" and fixed[2]["content"] == "hello"


def test_append_user_merges_into_trailing_user():
    history = [user("a")]
    append_user(history, "b")
    assert history == [user("a\n\nb")]
    history.append(asst())
    append_user(history, "c")
    assert history[-1] == user("c")


# ---- property-based: whatever is on disk, repair gives a valid history

ids = st.sampled_from(["a", "b", "c", "d"])
raw_call = st.fixed_dictionaries(
    {"id": ids, "type": st.just("function"),
     "function": st.fixed_dictionaries({"name": st.sampled_from(["t", "u"]),
                                        "arguments": st.one_of(st.just('{"k": 1}'), st.just("{bad"), st.just("[]"))})}
)
message = st.one_of(
    st.builds(lambda c: {"role": "user", "content": c}, st.text(max_size=5)),
    st.builds(lambda c, calls: {"role": "assistant", "content": c, **({"tool_calls": calls} if calls else {})},
              st.one_of(st.none(), st.text(max_size=5)), st.lists(raw_call, max_size=3)),
    st.builds(lambda i, c: {"role": "tool", "tool_call_id": i, "content": c}, ids, st.text(max_size=5)),
    st.builds(lambda c: {"role": "system", "content": c}, st.text(max_size=5)),
    st.just({"role": "weird"}),
    st.just("not a dict"),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(message, max_size=12))
def test_repair_always_yields_valid_and_is_idempotent(history):
    fixed = repair(history)
    assert problems(fixed) == []
    assert repair(fixed) == fixed


@settings(max_examples=200, deadline=None)
@given(st.lists(message, max_size=12))
def test_repair_keeps_every_user_text(history):
    fixed = repair(history)
    kept = "".join(m["content"] or "" for m in fixed if m["role"] == "user" and isinstance(m["content"], str))
    for m in history:
        if isinstance(m, dict) and m.get("role") == "user" and m["content"]:
            assert m["content"] in kept


def test_repair_is_linear_in_the_history():
    """repair rebuilt the list of speakers for every message: quadratic (here
    10,000 messages took 2.8 s, 20,000 took 9.4 s); one flag does (60,000: 0.2 s)."""
    import time

    from kernel.messages import repair

    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(60_000)]
    started = time.perf_counter()
    assert len(repair(history)) == 60_000
    assert time.perf_counter() - started < 5
