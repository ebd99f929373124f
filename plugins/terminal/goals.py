"""chat's ``/goal`` (hermes-agent's standing goal): the chat keeps working on a goal until a judge finds it done.

``/goal TEXT`` sends TEXT; after each answer a model call beside the conversation (``auxiliary.goal_judge``, else
the chat's model) judges whether the answer shows the goal done. Not yet, the chat sends a message asking the model
to take the next step, at most ``goals.max_turns`` times; then the goal pauses until ``/goal resume``. Ctrl+C, a
failed turn, a line typed during a turn (it goes first) and a judge that cannot answer three times in a row pause it
too. The continuation messages are ordinary user messages: stored, resumable, nothing in the system prompt changes.
A goal not done is kept with its session (``goals/SESSION.json`` in the data folder): a chat resuming that session
finds it paused, and ``/goal resume`` goes on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

STATE = "terminal-ui.goal"  # agent.state: this chat's Goal
MAX_TURNS, JUDGE = "goals.max_turns", "auxiliary.goal_judge"
JUDGE_FAILURES = 3  # in a row, then the goal pauses (a judge that never answers would spend every turn)
SHOWN = 4000  # characters of the answer the judge reads

CONTINUE = ("[Still working toward the goal you were given]\nGoal: {goal}\n\nTake the next concrete step toward it. "
            "When it is done, say so plainly and stop; when you are blocked or need the user, say what is needed and "
            "stop.")
ASK_JUDGE = ("You check whether an agent has reached a goal a user set, from the agent's latest answer. The goal is "
             "done when the answer shows it achieved (the result given, the work confirmed), or says it cannot be "
             "achieved or needs the user. Otherwise it is not done: the agent has a next step to take. Answer with "
             'one line of JSON and nothing else: {"done": true or false, "reason": "one sentence"}')


@dataclass
class Goal:
    text: str
    turns: int = 0  # continuation messages sent since it was set or resumed
    paused: str = ""  # why it waits for /goal resume ("" while pursued)
    misses: int = 0  # judge calls in a row that gave no verdict
    subgoals: list = field(default_factory=list)  # criteria the user added (/subgoal): the judge weighs them too

    def described(self) -> str:
        """The goal as the judge and the next step's message say it: with its subgoals."""
        also = "".join(f"\n{n}. {text}" for n, text in enumerate(self.subgoals, 1))
        return f"{self.text}\nAlso required:{also}" if also else self.text


def _file(agent: Any, session_id: str):
    import re

    return agent.config.data_dir / "goals" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', session_id)}.json"


def keep(agent: Any, kept_as: str = "") -> None:
    """The chat's goal with its session now (and not under ``kept_as``, a session it went on from); none: forgotten."""
    from dataclasses import asdict

    from hermes.host.files import atomic_write

    goal: Optional[Goal] = agent.state.get(STATE)
    for session_id in {kept_as, agent.session_id} - {""}:
        if goal is None or session_id != agent.session_id:
            _file(agent, session_id).unlink(missing_ok=True)
    if goal is not None:
        try:
            _file(agent, agent.session_id).parent.mkdir(parents=True, exist_ok=True)
            atomic_write(_file(agent, agent.session_id), json.dumps(asdict(goal)))
        except OSError:  # the goal goes on in this chat; a resumed one would not find it
            pass


def restore(chat: Any) -> None:
    """A resumed session's goal, paused (nobody saw its last turns), said once."""
    chat.goal_session = chat.agent.session_id
    try:
        kept = json.loads(_file(chat.agent, chat.agent.session_id).read_text(encoding="utf-8"))
        goal = Goal(**{k: v for k, v in kept.items() if k in Goal.__dataclass_fields__})
    except (OSError, ValueError, TypeError, AttributeError):  # none kept (or not readable): the chat has none now
        chat.agent.state.pop(STATE, None)
        return
    goal.paused = goal.paused or "the chat ended"
    chat.agent.state[STATE] = goal
    chat.say(f"this session's goal, paused ({goal.paused}): {goal.text}; /goal resume goes on, /goal clear drops it",
             "status")


def command(chat: Any, args: str) -> Optional[str]:
    """``/goal TEXT | status | pause | resume | clear``."""
    try:
        return _command(chat, args)
    finally:
        keep(chat.agent, chat.goal_session)
        chat.goal_session = chat.agent.session_id


def _command(chat: Any, args: str) -> Optional[str]:
    state, word = chat.agent.state, args.strip().lower()
    goal: Optional[Goal] = state.get(STATE)
    if word in ("", "status"):
        if goal is None:
            return "no goal: /goal TEXT sets one (the chat works on it until a judge finds it done)"
        return f"goal: {goal.described()}\n" + (f"paused ({goal.paused}): /goal resume goes on" if goal.paused else "")
    if word == "clear":
        state.pop(STATE, None)
        return "goal cleared" if goal else "no goal to clear"
    if word == "pause":  # between turns a goal is paused already unless it is done: say where it stands
        return "no goal to pause" if goal is None else f"goal paused: {goal.text} (/goal resume goes on)"
    if word == "resume":
        if goal is None:
            return "no goal to resume: /goal TEXT sets one"
        goal.turns, goal.paused, goal.misses = 0, "", 0
        chat.say(f"goal resumed ({_most(chat)} more turns at most): {goal.text}", "status")
        return pursue(chat, goal, CONTINUE.format(goal=goal.described()))
    goal = state[STATE] = Goal(args.strip())
    chat.say(f"goal set ({_most(chat)} turns at most; a judge checks each answer): {goal.text}", "status")
    return pursue(chat, goal, goal.text)


def subgoal(chat: Any, args: str) -> str:
    """``/subgoal [TEXT | remove N | clear]`` (hermes-agent's): criteria the goal must meet too, read by the judge and
    the next step's message from the next turn on."""
    try:
        return _subgoal(chat, args)
    finally:
        keep(chat.agent)


def _subgoal(chat: Any, args: str) -> str:
    goal: Optional[Goal] = chat.agent.state.get(STATE)
    if goal is None:
        return "no goal: /goal TEXT sets one, then /subgoal TEXT adds to it"
    verb, _, rest = args.strip().partition(" ")
    if not args.strip():
        return "\n".join(f"{n}. {text}" for n, text in enumerate(goal.subgoals, 1)) or \
            "no subgoals: /subgoal TEXT adds one"
    if verb.lower() == "clear":
        count, goal.subgoals = len(goal.subgoals), []
        return f"cleared {count} subgoal(s)"
    if verb.lower() == "remove":
        if not rest.strip().isdigit() or not 1 <= int(rest) <= len(goal.subgoals):
            return f"usage: /subgoal remove N (1 to {len(goal.subgoals)})" if goal.subgoals else "no subgoals"
        return f"removed subgoal {rest.strip()}: {goal.subgoals.pop(int(rest) - 1)}"
    goal.subgoals.append(" ".join(args.split()))
    return f"subgoal {len(goal.subgoals)} added: the judge weighs it from the next answer on" + \
        (" (/goal resume goes on)" if goal.paused else "")


def pursue(chat: Any, goal: Goal, message: str) -> None:
    """Send ``message``, then the next step's, until the goal is done or has to pause."""
    most = _most(chat)
    while True:
        keep(chat.agent)  # with its session now: a chat killed mid-way leaves it to resume
        result = chat.turn(message)
        if result is None or result.interrupted or result.exit_reason == "error" or not result.final_response:
            return _pause(chat, goal, "the turn was interrupted or failed")
        if chat.typed:
            return _pause(chat, goal, "you wrote during the turn: your message goes first")
        try:
            done, reason = judge(chat.agent, goal.described(), result.final_response)
        except KeyboardInterrupt:  # Ctrl+C while the judge thinks: the chat goes on, the goal waits
            return _pause(chat, goal, "interrupted while the judge read the answer")
        if done:
            chat.agent.state.pop(STATE, None)
            return chat.say(f"goal done: {reason}", "ok")
        goal.misses = goal.misses + 1 if done is None else 0
        if goal.misses >= JUDGE_FAILURES:
            return _pause(chat, goal, f"the judge gave no verdict {JUDGE_FAILURES} times ({reason}); check {JUDGE}")
        if goal.turns >= most:
            return _pause(chat, goal, f"{most} turns ({MAX_TURNS}) went by without it done")
        goal.turns += 1
        chat.say(f"goal: not done yet ({reason}); next step {goal.turns} of {most}", "status")
        message = CONTINUE.format(goal=goal.described())


def judge(agent: Any, goal: str, answer: str) -> tuple:
    """``(done, reason)``: ``done`` is None when the judge gave no verdict (its call failed or its answer was no
    JSON verdict); the loop then goes on, as a judge that cannot tell must not stop the work."""
    from plugins.auxiliary import caller, provider_config

    try:
        call = caller(agent, provider_config(agent.config, "goal_judge"), task="goal_judge")
        said = call([{"role": "system", "content": ASK_JUDGE},
                     {"role": "user", "content": f"Goal:\n{goal}\n\nThe agent's latest answer:\n{answer[-SHOWN:]}"}],
                    max_tokens=1024)
    except Exception as exc:  # noqa: BLE001 - the provider's, config's or a hook's failure: no verdict this time
        return None, f"the judge's call failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    found = re.search(r"\{.*\}", re.sub(r"<think>.*?</think>", "", said or "", flags=re.S), re.S)
    try:
        verdict = json.loads(found.group()) if found else None
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict) or not isinstance(verdict.get("done"), bool):
        return None, f"the judge answered no verdict: {' '.join((said or '').split())[:80]!r}"
    return verdict["done"], " ".join(str(verdict.get("reason") or "no reason given").split())[:300]


def _pause(chat: Any, goal: Goal, why: str) -> None:
    goal.paused = why
    chat.say(f"goal paused: {why}; /goal resume goes on, /goal clear drops it", "status")


def _most(chat: Any) -> int:
    from plugins.tool_args import setting

    return setting(chat.agent.config, MAX_TURNS, 20, int, 0)
