"""Built-in plugin skills: instructions the agent loads when a task calls for them.

They are in the agentskills.io ``SKILL.md`` format; see :mod:`plugins.skills.catalog`
for where they are found.

Progressive disclosure: only the index (names and one-line descriptions)
goes into the system prompt (a ``prompt_layer``, after the memory block);
the tools ``skills_list``, ``skill_view`` and ``skill_manage`` load the rest
and let the agent keep what it learns in ``$HERMES_HOME/skills``. In chat,
``/skill-name`` loads a skill into the next message (``/skill-name task``
sends the task with it); a skill bundle's ``/NAME`` loads several
(:mod:`plugins.skills.bundles`). ``hermes skills list|show|install|remove``
and ``hermes bundles`` manage them from the shell; ``hermes curator`` looks
after the skills the agent wrote (:mod:`plugins.skills.curator`). Plugins
ship skills with ``register_skills``; hermes-compat's
``ctx.register_skill`` feeds it.

Skills outlive a session and their descriptions enter every later prompt,
so the prompt plugin's injection scan guards both ways in: ``skill_manage``
refuses a skill that reads like an instruction to the agent itself, and the
index names (does not quote) such a description from any source.
"""

from __future__ import annotations

import logging

from kernel import hookimpl
from plugins.skills.hookspecs import SKILLS

log = logging.getLogger(__name__)
PENDING = "skills.pending"  # agent.state: skills /name loaded for the next message
PRELOAD = "skills.preload"
OWN = ("skills", "reload-skills", "learn", "bundles")  # this plugin's commands beside the skills' and bundles'
NOTES = "skills.pending_notes"  # agent.state: a bundle's instruction for the next message
# chat's own commands and the built-in plugins': a skill of the same name is not a command
RESERVED = {"help", "new", "resume", "retry", "undo", "model", "tools", "usage", "exit", "quit", "compress",
            "context", "memory", "search", "title", "skills", "history", "reasoning", "fast", "busy", "personality",
            "image", "paste", "prompt", "copy", "yolo", "clear", "version", "branch", "fork", "queue", "q", "steer",
            "stop", "goal", "agents", "tasks", "reload", "background", "bg",
            "verbose", "timestamps", "status", "subgoal", "reload-skills", "learn", "sessions", "export",
            "cron", "moa", "reload-mcp", "rollback", "insights", "toolsets", "bundles", "browser", "profile"}


def skills_of(agent_or_config, host=None, cwd=None) -> dict:
    """Every skill this agent (or config and host) can use, by name."""
    from plugins.skills import catalog

    config = getattr(agent_or_config, "config", agent_or_config)
    host = host or getattr(agent_or_config, "host", None)
    registered = []
    for name, entry in (host.registry[SKILLS] if host is not None else {}).items():
        skill = catalog.load(entry.value, entry.plugin, name)
        if skill is not None:
            skill.description = entry.description or skill.description
            registered.append(skill)
    return catalog.find(config, registered, cwd)


@hookimpl
def register_hookspecs(add):
    from plugins.skills import hookspecs

    add(hookspecs)


@hookimpl
def register_config(declare):
    declare("skills.paths", list[str], [], "more folders of skills (each holding <name>/SKILL.md)")
    declare("skills.template_vars", bool, True, "fill in ${HERMES_SKILL_DIR} and ${HERMES_SESSION_ID} in a skill's "
            "instructions (hermes-agent's)")
    declare("skills.inline_shell", bool, False, "run a skill's !`command` snippets and put their output in its place "
            "(hermes-agent's; the user's own skills only, never a project's)")
    declare("skills.inline_shell_timeout", (int, float), 10, "seconds one inline command may run", minimum=1)
    declare(PRELOAD, list[str], [], "skills whose instructions hold for the whole session, in the system prompt "
            "(chat's -s NAME, as hermes-agent's `hermes -s`)")
    declare("curator.enabled", bool, True, "mark the agent's own skills stale when unused, archive them later "
            "(hermes-agent's curator; `hermes curator`)")
    declare("curator.interval_hours", (int, float), 168, "hours between the curator's passes (at a session's start)",
            minimum=1)
    declare("curator.stale_after_days", (int, float), 30, "days unused before the agent's skill is marked stale",
            minimum=1)
    declare("curator.archive_after_days", (int, float), 90, "days unused before it moves to skills/.archive",
            minimum=1)
    declare("curator.backup.enabled", bool, True, "snapshot the skills folder before a pass archives any")
    declare("curator.backup.keep", int, 5, "how many snapshots to keep", minimum=1)


@hookimpl
def register_tools(register, config):
    from plugins.skills.tools import TOOLS

    for tool in TOOLS:
        register(tool)


@hookimpl
def register_toolsets(register):
    register("skills", ["skills_list", "skill_view", "skill_manage"], description="Find, read and write skills")


def _indexed(skill) -> str:
    """A skill's description as the index shows it. Skills also come from a
    cloned project's folders: one whose description reads like an injected
    instruction is named, not quoted (the same scan as the context files)."""
    from plugins.prompt.project import scan

    findings = scan(skill.description or "")
    if findings:
        return f"(description withheld: it reads like an instruction to the agent: {', '.join(findings)})"
    return skill.description or "(no description)"


@hookimpl(optionalhook=True)  # brought by the prompt plugin
def prompt_layer(agent):
    indexed = "skill_view" in (getattr(agent, "tools", None) or {})  # an index the model cannot open is noise
    if not indexed and not agent.config.get(PRELOAD):
        return None
    skills = skills_of(agent)
    lines = _preloaded(agent, skills)
    if skills and indexed:
        lines += ["# Skills", "", "Instructions for particular tasks. When one fits, load it with skill_view "
                  "before you start; skill_manage keeps what you learn as a new skill.", ""]
        lines += [f"- {s.name}: {_indexed(s)}" for s in sorted(skills.values(), key=lambda s: s.name)]
    return {"name": "skills", "text": "\n".join(lines), "source": f"{len(skills)} skills", "after": "plugins"} \
        if lines else None


def _preloaded(agent, skills: dict) -> list:
    """The instructions of ``skills.preload``'s skills, which hold for the session; one that is gone is a warning."""
    from plugins.skills import catalog
    from plugins.skills.prepare import prepared

    lines = []
    for name in dict.fromkeys(agent.config.get(PRELOAD) or []):
        try:
            skill = catalog.lookup(skills, name)
        except catalog.SkillError as exc:
            log.warning("skills.preload: %s", exc)
            continue
        agent.emit("on_skill_event", action="loaded", name=skill.name, source=skill.source)
        lines += [f"# The skill {skill.name}, preloaded", "", "The user started this session with this skill "
                  "preloaded: its instructions hold for the whole session unless the user overrides them.", "",
                  prepared(skill, agent), ""]
    return lines


@hookimpl
def register_slash_commands(register, config):
    from pathlib import Path

    register(OWN[0], _slash_skills, "the skills: /NAME loads one into your next message (hermes-agent's /skills)")
    register(OWN[1], _slash_reload, "look for skills installed or removed since the chat started "
             "(hermes-agent's)")
    register(OWN[3], _slash_bundles, "the skill bundles: /NAME loads a bundle's skills (hermes-agent's /bundles)")
    register(OWN[2], _slash_learn, "/learn WHAT: the agent makes a skill of it: this chat's work, a folder, a URL, "
             "notes (hermes-agent's)")
    for name, load, description in _commands(skills_of(config, cwd=Path.cwd())):
        register(name, load, description)


def _commands(skills: dict) -> list:
    """``(name, handler, description)`` of the ``/NAME`` command of each skill a command can be named after, and of
    each skill bundle (which wins over a skill of its name)."""
    from plugins.skills.bundles import bundles

    def loader(name, names, instruction=""):
        what = f"skill {name}" if names == [name] and not instruction else f"bundle {name} ({', '.join(names)})"

        def load(raw_args, agent):
            agent.state.setdefault(PENDING, []).extend(names)
            if instruction:
                agent.state.setdefault(NOTES, []).append(f"The user loaded the skill bundle {name}: {instruction}")
            if raw_args.strip():  # /name do this: the skill and its task in one message
                return {"reply": f"{what} loaded", "send": raw_args.strip()}
            return f"{what} loaded: it goes with your next message"
        return load

    found = {name: (loader(name, [name]), f"skill: {skill.description[:60] or '(no description in its SKILL.md)'}")
             for name, skill in skills.items() if ":" not in name}
    found.update({name: (loader(name, b["skills"], b["instruction"]), f"bundle: {b['description'][:60]}")
                  for name, b in bundles().items()})
    return [(name, load, said) for name, (load, said) in sorted(found.items()) if name not in RESERVED]


LEARN = """Make a reusable skill of this, with skill_manage (action "create"): {what}

First gather it with the tools you have: read the files or folder named, fetch a URL, or go back over this \
conversation when it means what was done here. Then write one skill:
- name: lowercase words joined by hyphens, naming the task (not a tool);
- description: one sentence of at most 60 characters saying when to use it (the index shows no more);
- body, in Markdown: when to use it; what is needed first; the steps, with the exact commands or calls that \
worked here; how to check the result; the mistakes to avoid.
Write only commands and facts you saw work or read in the sources; no names, paths or keys of this machine or \
user that another would not have. Say the skill's name when it is saved."""


def _slash_learn(raw_args: str, agent):
    """``/learn WHAT`` (hermes-agent's): a turn asking the agent to make a skill of what the user points at."""
    if not raw_args.strip():
        return "usage: /learn WHAT (what we just did, a folder, a URL, notes): the agent writes a skill of it"
    if "skill_manage" not in (getattr(agent, "tools", None) or {}):
        return "/learn needs the skill_manage tool, which this chat does not offer (see -t)"
    return {"reply": "learning: the agent writes a skill of it", "send": LEARN.format(what=raw_args.strip())}


def _slash_reload(raw_args: str, agent) -> str:
    """``/reload-skills``: the skills' commands as the skill folders hold them now (the chat's registry changed in
    place: they were registered as the chat started)."""
    from hermes.host.registry import Entry
    from plugins.commands.hookspecs import SLASH_COMMANDS

    table = agent.host.registry[SLASH_COMMANDS]
    mine = table["reload-skills"].plugin
    before = {name for name, entry in table.items() if entry.plugin == mine and name not in OWN}
    now = {name: (load, description) for name, load, description in _commands(skills_of(agent))}
    for name in before - set(now):
        del table[name]
    for name, (load, description) in now.items():
        if name in before or name not in table:  # a plugin's own command of the name stays
            table[name] = Entry(name=name, value=load, description=description, plugin=mine)
    added, removed = sorted(set(now) - before), sorted(before - set(now))
    said = [f"{verb} {', '.join('/' + n for n in names)}" for verb, names in (("added", added), ("removed", removed))
            if names]
    return f"skills: {'; '.join(said)}" if said else f"skills: no change ({len(now)} skill commands)"


def _slash_bundles(raw_args: str, agent) -> str:
    from plugins.skills.bundles import bundles

    found = bundles()
    return "\n".join(f"/{name}  {', '.join(b['skills'])}  {b['description']}" for name, b in found.items()) or \
        "no skill bundles yet: `hermes bundles create NAME --skill A --skill B`"


def _slash_skills(raw_args: str, agent) -> str:
    """``/skills [WORDS]``: the skills (those whose name or description holds every word), each as its command."""
    words = raw_args.lower().split()
    found = [s for name, s in sorted(skills_of(agent).items())
             if all(w in f"{name} {s.description}".lower() for w in words)]
    if not found:
        return ("no skill holds " + " ".join(words)) if words else \
            "no skills yet: `hermes skills install PATH`, or ask the agent to write one"
    width = max(len(s.name) for s in found) + 1
    return "\n".join(f"{'/' + s.name if s.name not in RESERVED and ':' not in s.name else s.name:<{width}}  "
                     f"{s.description[:90] or '(no description in its SKILL.md)'}" for s in found)


@hookimpl
def pre_llm_call(agent):
    from plugins.skills import catalog
    from plugins.skills.prepare import prepared

    names, notes = agent.state.pop(PENDING, None), agent.state.pop(NOTES, None)
    if not names and not notes:
        return None
    skills = skills_of(agent)
    parts = list(notes or [])
    for name in dict.fromkeys(names or []):
        try:
            skill = catalog.lookup(skills, name)
            parts.append(f"The user loaded the skill {skill.name} for this message:\n\n{prepared(skill, agent)}")
            agent.emit("on_skill_event", action="loaded", name=skill.name, source=skill.source)
        except catalog.SkillError as exc:
            parts.append(f"(the skill {name} could not be loaded: {exc})")
    return {"context": "\n\n".join(parts)}


@hookimpl
def on_skill_event(action, name):
    from plugins.skills import curator

    curator.note(action, name)


@hookimpl
def on_session_start(agent):
    """A curator pass when one is due, before the session's first call (not a subagent's: its parent's start was)."""
    from plugins.skills.catalog import user_dir

    if agent.parent_session_id is None and agent.config.get("curator.enabled") and \
            (user_dir() / ".usage.json").exists():  # no skill ever used or made: nothing to look after, no file made
        from plugins.skills import curator

        curator.maybe_run(agent)


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """The skills there are, a bundle naming one that is not, a bundle file left out, and the curator's state."""
    import glob
    import os

    from plugins.doctor.hookspecs import OK, WARN, Check
    from plugins.skills import curator
    from plugins.skills.bundles import bundles, folder

    found, made = skills_of(agent), bundles()
    problems = [f"bundle {name} names no skill {', '.join(missing)}" for name, b in made.items()
                if (missing := [n for n in b["skills"] if n not in found])]
    files = glob.glob(os.path.join(folder(), "*.yaml")) + glob.glob(os.path.join(folder(), "*.yml"))
    problems += [f"{len(files) - len(made)} bundle file(s) in {folder()} left out (`hermes logs` says why)"] \
        if len(files) > len(made) else []
    state = curator.state() if (curator.root() / ".curator_state").exists() else {}
    said = "curator paused" if state.get("paused") else \
        f"curator's last pass {str(state.get('last_run_at'))[:10]}" if state.get("last_run_at") else ""
    text = "; ".join([f"{len(found)} skills, {len(made)} bundles" + (f"; {said}" if said else ""), *problems])
    return [Check("skills", WARN if problems else OK, text)]


@hookimpl
def register_commands(cli, config):
    from plugins.skills.command import bundles, curator, skills

    cli.add_command(skills)
    cli.add_command(bundles)
    cli.add_command(curator)
