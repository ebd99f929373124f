"""``hermes mcp serve``: hermes as an MCP server on stdio, so an MCP client (Claude Code, Cursor, Codex, another
hermes) can hand it work with its own tools, memory and skills.

One tool, ``ask``: a prompt runs as a turn of hermes' configured agent (platform ``mcp``), in a new stored session
or, given ``session_id``, going on in that one; the answer comes back with the session's id. A question of hermes'
approval check goes to the client's user (MCP elicitation); a client that cannot ask, or a user who declines,
denies the call, as with nobody to ask. A cancelled request interrupts the turn. While it serves, what plugin code
prints goes to stderr (the SDK points fd 1 there), never into the protocol.
"""
# no `from __future__ import annotations`: the SDK reads the ask tool's annotations, Context among them

import logging
from functools import partial
from typing import Any, Optional

from kernel import hookimpl

log = logging.getLogger("hermes.mcp")


class Asker:
    """The agent's approval question, put to the MCP client's user from the turn's worker thread."""

    __name__ = "mcp-client-approval"

    def __init__(self, ctx):
        self.ctx = ctx

    @hookimpl
    def approve_tool_call(self, tool_name, args, message):
        import anyio.from_thread
        from pydantic import BaseModel, Field

        class Approval(BaseModel):
            run_it: bool = Field(description="Run it")
            rest_of_task: bool = Field(default=False, description="And do not ask again for this rule in this task")

        try:
            answer = anyio.from_thread.run(self.ctx.elicit, f"hermes asks before it runs {tool_name}:\n{message}",
                                           Approval)
        except Exception as exc:  # noqa: BLE001 - a client without elicitation: nobody to ask
            log.info("the MCP client could not be asked (%s): denied", exc)
            return None
        if answer.action != "accept" or not answer.data.run_it:
            return "deny"
        return "session" if answer.data.rest_of_task else "once"


def _agent(app, opts: dict, session_id: str, asker: Asker):
    from plugins.front import build_agent, check_session

    session_id = check_session(app, session_id) if session_id else None  # a unique prefix too; an unknown one: Fail
    return build_agent(app, dict(opts), asker, session_id=session_id, platform="mcp")


def _turn(agent, prompt: str) -> dict:
    try:
        result = agent.run_conversation(prompt)
    finally:
        agent.close()
    if result.exit_reason == "error":
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError(result.error or "the turn failed")  # the client reads it (another exception: only a name)
    return {"answer": result.final_response or "", "session_id": result.session_id, "exit_reason": result.exit_reason}


def build(app, opts: dict):
    """The MCP server: hermes' ``ask`` tool on the app's configuration (``opts``: the command's model and toolsets)."""
    import anyio
    from mcp.server.mcpserver import Context, MCPServer

    server = MCPServer("hermes", instructions="hermes: an agent with its own tools, memory and skills. Give it a "
                                              "task with ask; pass back session_id to go on in the same conversation.",
                       log_level="WARNING")

    @server.tool(description="Ask hermes (an agent with its own tools, memory and skills) to do a task or answer a "
                             "question; it works until it has an answer. session_id (from an earlier answer) goes on in "
                             "that conversation; none starts a new one.")
    async def ask(prompt: str, session_id: str = "", ctx: Optional[Context] = None) -> dict[str, Any]:
        from mcp.server.mcpserver.exceptions import ToolError

        from hermes.cli.app import Fail

        if not prompt.strip():
            raise ToolError("the prompt is empty")
        try:
            agent = await anyio.to_thread.run_sync(partial(_agent, app, opts, session_id.strip(), Asker(ctx)))
        except Fail as exc:  # no model, an unknown session ...
            raise ToolError(exc.message) from None
        try:
            return await anyio.to_thread.run_sync(partial(_turn, agent, prompt), abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            agent.interrupt()  # the abandoned thread ends the turn and closes the agent
            raise

    return server


def serve(app, opts: dict) -> None:
    import anyio

    anyio.run(build(app, opts).run_stdio_async)
