"""hermes-agent's memory.write_approval and skills.write_approval through the real Agent loop (scripted provider):
what the agent would keep for later sessions is asked about first; denied, nothing is written; the session's "yes"
and command_allowlist stand, and approvals off does not skip it (the key is the user's word about writes)."""

import json

from kernel import hookimpl
from plugins import approval, skills as skills_plugin
from plugins_memory import manager


class Approver:
    def __init__(self, *answers):
        self.answers, self.asked = list(answers), []

    @hookimpl
    def approve_tool_call(self, tool_name, args, message, rule_key, agent):
        self.asked.append((tool_name, rule_key, message))
        return self.answers.pop(0)


def _results(agent):
    return [json.loads(m["content"]) for m in agent.messages if m["role"] == "tool"]


ADD = ("memory", {"action": "add", "target": "memory", "content": "The deploy key lives in vault/prod."})
CREATE = ("skill_manage", {"action": "create", "name": "deploy", "description": "Ship it", "body": "make deploy"})


def test_memory_and_skill_writes_are_asked_about_when_config_says_so(make_agent, hermes_home):
    config = {"memory": {"write_approval": True}, "skills": {"write_approval": True}, "approvals": {"mode": "off"}}
    person = Approver("deny", "deny", "session")
    agent = make_agent(approval, manager, skills_plugin, person, config=config, callbacks=[person], script=[
        {"tool_calls": [ADD, CREATE]}, {"tool_calls": [("memory", {**ADD[1], "content": "Second note."})]},
        {"tool_calls": [("memory", {**ADD[1], "content": "Third note."})]},
        {"tool_calls": [("memory", {"action": "read", "target": "memory"})]}, "ok"])
    agent.chat("remember the deploy key and make a skill")
    denied_note, denied_skill, second, third, read = _results(agent)
    assert "not run" in denied_note["error"] and "not run" in denied_skill["error"]
    assert [(tool, rule) for tool, rule, _ in person.asked] == [
        ("memory", "memory_write"), ("skill_manage", "skill_manage_write"), ("memory", "memory_write")]
    assert "change its memory, which later sessions read (memory.write_approval)" in person.asked[0][2]
    assert "vault/prod" in person.asked[0][2]
    assert not (hermes_home / "skills" / "deploy").exists()
    notes = (hermes_home / "memories" / "MEMORY.md").read_text() if (hermes_home / "memories").exists() else ""
    assert "vault/prod" not in notes and "Second note." in notes
    assert "Third note." in notes  # "session": not asked again
    assert "error" in read  # not a write: not asked (the tool itself refuses the action)


def test_off_by_default_and_the_allowlist_lets_a_rule_through(make_agent, hermes_home):
    person = Approver()
    agent = make_agent(approval, manager, skills_plugin, person, callbacks=[person],
                       config={"skills": {"write_approval": True}, "command_allowlist": ["skill_manage_write"]},
                       script=[{"tool_calls": [ADD, CREATE]}, "ok"])
    agent.chat("go")
    assert person.asked == [] and all("error" not in r for r in _results(agent))
    assert (hermes_home / "skills" / "deploy" / "SKILL.md").exists()
