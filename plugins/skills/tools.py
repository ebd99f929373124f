"""The skills tools the model calls: ``skills_list``, ``skill_view``, ``skill_manage``."""

from __future__ import annotations

from kernel.types import Tool, ToolError


def _skills(ctx) -> dict:
    from plugins.skills import skills_of

    return skills_of(ctx.agent)


def skills_list(args, ctx):
    return {"skills": [{"name": s.name, "description": s.description, "source": s.source}
                       for s in sorted(_skills(ctx).values(), key=lambda s: s.name)]}


def _event(ctx, action: str, name: str, source: str) -> None:
    ctx.agent.emit("on_skill_event", action=action, name=name, source=source)


def skill_view(args, ctx):
    from plugins.skills import catalog

    name = args.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ToolError("skill_view: give the skill's 'name' (see skills_list)")
    try:
        skill = catalog.lookup(_skills(ctx), name.strip())
        wanted = args.get("file")
        if wanted:
            path = (skill.folder / str(wanted)).resolve()
            if not path.is_relative_to(skill.folder.resolve()) or not path.is_file():
                raise ToolError(f"skill_view: {skill.name} has no file {wanted!r}; it has: "
                                f"{', '.join(skill.files()) or 'none'}")
            return {"name": skill.name, "file": str(wanted), "content": catalog.read_text(path)[:catalog.MAX_BODY_CHARS]}
        _event(ctx, "loaded", skill.name, skill.source)
        from plugins.skills.prepare import prepared

        return {"name": skill.name, "description": skill.description, "source": skill.source,
                "body": prepared(skill, ctx.agent)[:catalog.MAX_BODY_CHARS], "files": skill.files()}
    except catalog.SkillError as exc:
        raise ToolError(f"skill_view: {exc}") from None


def refuse_takeover(text: str) -> None:
    """A skill the model writes outlives the session, and its description
    enters every later system prompt (the index): text that reads like an
    attempt to take over the agent (the scan of the project's context files)
    is refused, so an instruction injected into one session cannot settle in."""
    from plugins.prompt.project import scan

    findings = scan(text)
    if findings:
        raise ToolError(f"skill_manage: refused: the skill reads like an instruction to the agent itself "
                        f"({', '.join(findings)}); a skill says how to do a task")


CURATING = "skills.curating"  # agent.state: the skills a curator's consolidation may change (removed: archived)


def skill_manage(args, ctx):
    from plugins.skills import catalog

    action, name = args.get("action"), str(args.get("name") or "").strip()
    curating = ctx.agent.state.get(CURATING)
    if curating is not None and action in ("edit", "delete") and name not in curating:
        raise ToolError(f"skill_manage: {name!r} is not one of the skills to consolidate; leave it as it is")
    if curating is not None and action == "delete":  # the curator archives: `hermes curator restore` undoes it
        from plugins.skills.curator import CuratorError, archive

        try:
            return {"ok": True, "action": "delete", "name": name, "archived": str(archive(name))}
        except (CuratorError, OSError) as exc:
            raise ToolError(f"skill_manage: {exc}") from None
    try:
        if action in ("create", "edit"):
            description, body = str(args.get("description") or ""), str(args.get("body") or "")
            refuse_takeover(f"{description}\n{body}")
            skill = catalog.write(name, description, body, replace=action == "edit")
            _event(ctx, "created" if action == "create" else "edited", skill.name, "user")
            return {"ok": True, "action": action, "name": skill.name, "path": str(skill.path),
                    "note": "the skills index lists it from the next session on"}
        if action == "delete":
            removed = catalog.remove(name)
            _event(ctx, "deleted", name, "user")
            return {"ok": True, "action": "delete", "name": name, "removed": str(removed)}
    except catalog.SkillError as exc:
        raise ToolError(f"skill_manage: {exc}") from None
    raise ToolError("skill_manage: 'action' is create, edit or delete")


TOOLS = [
    Tool(name="skills_list", description="List the skills: name, one-line description, where it comes from.",
         parameters={"type": "object", "properties": {}}, handler=skills_list, toolset="skills", parallel_safe=True),
    Tool(name="skill_view",
         description="Load a skill's instructions by name, and the list of its other files; with 'file', read "
                     "one of those files instead.",
         parameters={"type": "object", "properties": {"name": {"type": "string"}, "file": {"type": "string"}},
                     "required": ["name"]},
         handler=skill_view, toolset="skills", parallel_safe=True),
    Tool(name="skill_manage",
         description="Keep what you learned as a skill in the user's skills folder: action 'create' (name, "
                     "one-line description, body of instructions), 'edit' (the same, replacing it) or 'delete'.",
         parameters={"type": "object", "properties": {
             "action": {"type": "string", "enum": ["create", "edit", "delete"]},
             "name": {"type": "string"}, "description": {"type": "string"}, "body": {"type": "string"}},
             "required": ["action", "name"]},
         handler=skill_manage, toolset="skills"),
]
