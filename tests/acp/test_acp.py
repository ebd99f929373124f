"""``hermes acp``: the Agent Client Protocol SDK's own client starts ``hermes acp`` as an editor would and speaks to
it over stdio; the model is the scripted provider (a file of steps)."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

acp = pytest.importorskip("acp")

from tests.conftest import ROOT, hermes_command  # noqa: E402


class Editor:
    """The client side: records every update, answers permission requests with ``answer``."""

    def __init__(self, answer: str = "once"):
        self.updates: list = []
        self.asked: list = []
        self.answer = answer

    def on_connect(self, conn):
        self.conn = conn

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        self.asked.append((tool_call.title, [o.option_id for o in options]))
        if self.answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    def kinds(self) -> list:
        return [u.session_update for u in self.updates]

    def said(self) -> str:
        return "".join(u.content.text for u in self.updates if u.session_update == "agent_message_chunk")


async def settled(ready, within: float = 10) -> None:
    """Wait until ``ready()``: the SDK's client handles each notification in a task of its own, so one sent before
    a response may be handled just after it."""
    deadline = time.monotonic() + within
    while not ready() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


@pytest.fixture
def editor_session(hermes_home, tmp_path):
    """``editor_session(steps, editor, body)``: ``hermes acp`` on a scripted model, ``body(conn, session_id)`` run
    against it in a new session in ``tmp_path/project``."""
    project = tmp_path / "project"
    project.mkdir()

    def start(steps, editor, body, config=""):
        script = tmp_path / "script.json"
        script.write_text(json.dumps(steps))
        (hermes_home / "config.yaml").write_text(f"api_mode: scripted\nbase_url: {script}\nmodel: m\n{config}")
        env = {**os.environ, "HERMES_HOME": str(hermes_home), "PYTHONPATH": str(ROOT)}
        command = hermes_command()

        async def main():
            async with acp.spawn_agent_process(editor, command[0], *command[1:], "acp", env=env,
                                               cwd=str(project)) as (conn, process):
                started = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
                assert started.agent_info.name == "hermes" and started.agent_capabilities.load_session
                assert started.agent_capabilities.prompt_capabilities.image  # a pasted screenshot is sent
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                return await body(conn, session.session_id)

        return asyncio.run(asyncio.wait_for(main(), 90))

    return start, project


def test_a_prompt_streams_tool_calls_and_the_answer(editor_session, hermes, tmp_path):
    start, project = editor_session
    (project / "notes.txt").write_text("the code word is fig\n")
    editor = Editor()

    async def body(conn, session_id):
        from acp import text_block
        from acp.schema import ResourceContentBlock

        link = ResourceContentBlock(type="resource_link", name="notes.txt", uri=f"file://{project}/notes.txt")
        first = await conn.prompt(session_id=session_id, prompt=[text_block("read it"), link])
        second = await conn.prompt(session_id=session_id, prompt=[text_block("and again")])
        await settled(lambda: editor.said().endswith("Still fig."))
        return session_id, first, second

    steps = [{"tool_calls": [["terminal", {"command": "pwd; echo from the tool"}]]}, "Done: fig.", "Still fig."]
    # the editor's folder, not config.yaml's terminal.cwd, is where the tools work
    session_id, first, second = start(steps, editor, body, f"sandbox:\n  mode: off\nterminal:\n  cwd: {tmp_path}\n")
    assert first.stop_reason == second.stop_reason == "end_turn"
    [started] = [u for u in editor.updates if u.session_update == "tool_call"]
    assert started.title == "terminal: pwd; echo from the tool" and started.kind == "execute"
    [ended] = [u for u in editor.updates if u.session_update == "tool_call_update"]
    assert ended.tool_call_id == started.tool_call_id and ended.status == "completed"
    assert json.loads(ended.content[0].content.text)["output"] == f"{project.resolve()}\nfrom the tool\n"
    assert editor.said() == "Done: fig.Still fig."
    # one stored session, on platform acp, holding both turns and the linked file's text
    shown = json.loads(hermes("sessions", "show", session_id, "--json").stdout)
    assert shown["session"]["platform"] == "acp"
    assert "the code word is fig" in json.dumps(shown["messages"]) and "and again" in json.dumps(shown["messages"])


def test_an_image_the_editor_sends_is_kept_for_the_vision_tool(editor_session, hermes, hermes_home):
    """Images were not offered (`image: false`): a pasted screenshot could not reach the model at all."""
    import base64
    import hashlib

    start, _ = editor_session
    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
                           "rkJggg==")
    editor = Editor()

    async def body(conn, session_id):
        from acp import image_block, text_block

        done = await conn.prompt(session_id=session_id, prompt=[
            text_block("what is on it?"), image_block(base64.b64encode(png).decode(), "image/png"),
            image_block("not base64 at all!", "image/png")])
        return session_id, done

    session_id, done = start(["A dot."], editor, body)
    assert done.stop_reason == "end_turn"
    kept = hermes_home / "images" / f"{hashlib.sha256(png).hexdigest()[:16]}.png"
    assert kept.read_bytes() == png and kept.stat().st_mode & 0o777 == 0o600
    shown = json.loads(hermes("sessions", "show", session_id, "--json").stdout)
    [said] = [m["content"] for m in shown["messages"] if m["role"] == "user"]
    assert said == ("what is on it?\n\n[an image the editor sent could not be read]\n\n[an image the user attached: "
                    f"{kept} (the vision_analyze tool shows it to a model that sees)]")


def test_an_image_reaches_a_model_that_sees_in_the_message(editor_session, hermes, hermes_home):
    """agent.image_input_mode: native (auto for a model known to see): the image is a part of the user's message."""
    import base64

    start, _ = editor_session
    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
                           "rkJggg==")

    async def body(conn, session_id):
        from acp import image_block

        return session_id, await conn.prompt(session_id=session_id, prompt=[
            image_block(base64.b64encode(png).decode(), "image/jpeg")])  # its type is told by its bytes

    session_id, done = start(["A dot."], Editor(), body, config="agent:\n  image_input_mode: native\n")
    assert done.stop_reason == "end_turn"
    shown = json.loads(hermes("sessions", "show", session_id, "--json").stdout)
    [said] = [m["content"] for m in shown["messages"] if m["role"] == "user"]
    assert said == [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}}]
    assert not (hermes_home / "images").exists()
    replayed = Editor()  # session/load shows the image again (a message of parts was not shown at all)

    async def load(conn, _new_session):
        await conn.load_session(cwd=str(hermes_home), session_id=session_id, mcp_servers=[])
        await settled(lambda: len(replayed.updates) >= 2)
        return replayed.kinds()

    assert start(["unused"], replayed, load) == ["user_message_chunk", "agent_message_chunk"]
    image, answer = (update.content for update in replayed.updates)
    assert (image.type, image.mime_type, image.data) == ("image", "image/png", base64.b64encode(png).decode())
    assert answer.text == "A dot."


@pytest.mark.parametrize("answer,ran", [("once", True), ("deny", False), ("cancelled", False)])
def test_the_approval_question_is_the_editors_permission_request(editor_session, answer, ran):
    start, project = editor_session
    marker = project / "ran.txt"
    command = f"python3 -c \"open('{marker}', 'w').write('ran')\""  # inline code: it needs approval
    editor = Editor(answer)

    async def body(conn, session_id):
        from acp import text_block

        return await conn.prompt(session_id=session_id, prompt=[text_block("do it")])

    done = start([{"tool_calls": [["terminal", {"command": command}]]}, "finished"], editor, body,
                 "sandbox:\n  mode: off\n")
    assert done.stop_reason == "end_turn"
    [(title, options)] = editor.asked
    assert "python3 -c" in title and options == ["once", "session", "deny"]
    assert marker.exists() == ran


def test_cancel_interrupts_the_turn_and_load_replays_the_session(editor_session, hermes_home):
    start, project = editor_session
    editor = Editor()

    async def body(conn, session_id):
        from acp import text_block

        asyncio.get_running_loop().call_later(1.5, lambda: asyncio.ensure_future(conn.cancel(session_id=session_id)))
        began = time.monotonic()
        stopped = await conn.prompt(session_id=session_id, prompt=[text_block("wait")])
        took = time.monotonic() - began
        unknown = None
        try:
            await conn.prompt(session_id="nope", prompt=[text_block("x")])
        except acp.RequestError as exc:
            unknown = exc
        return session_id, stopped, took, unknown

    session_id, stopped, took, unknown = start(
        [{"tool_calls": [["terminal", {"command": "sleep 30"}]]}, "never"], editor, body, "sandbox:\n  mode: off\n")
    assert stopped.stop_reason == "cancelled" and took < 15
    assert unknown is not None and "no session 'nope'" in str(unknown.data)

    replayed = Editor()

    async def load(conn, _new_session):
        await conn.load_session(cwd=str(project), session_id=session_id, mcp_servers=[])
        await settled(lambda: replayed.updates)
        return replayed.kinds()

    kinds = start(["unused"], replayed, load)
    assert kinds[0] == "user_message_chunk" and replayed.updates[0].content.text == "wait"


def test_bad_sessions_are_one_line_errors_and_the_editors_mcp_servers_join(editor_session, hermes_home, tmp_path):
    from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

    from plugins.acp.server import mcp_servers

    assert mcp_servers([McpServerStdio(name="t", command="uvx", args=["x"], env=[EnvVariable(name="A", value="1")]),
                        HttpMcpServer(type="http", name="h", url="https://e.example/mcp",
                                      headers=[HttpHeader(name="X", value="y")])]) == {
        "t": {"command": "uvx", "args": ["x"], "env": {"A": "1"}},
        "h": {"url": "https://e.example/mcp", "headers": {"X": "y"}}}
    start, project = editor_session
    errors = []

    async def body(conn, _session_id):
        for call in (conn.new_session(cwd=str(tmp_path / "nowhere"), mcp_servers=[]),
                     conn.load_session(cwd=str(project), session_id="20990101_000000_nosuch", mcp_servers=[])):
            try:
                await call
            except acp.RequestError as exc:
                errors.append(str(exc.data))

    start(["unused"], Editor(), body)
    assert "not a folder" in errors[0] and "no session '20990101_000000_nosuch'" in errors[1]


def test_what_plugin_code_prints_stays_out_of_the_protocol(editor_session, hermes_home, caplog):
    folder = hermes_home / "plugins" / "printer"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("def register(ctx):\n    ctx.register_hook('pre_llm_call', lambda **kw: "
                                        "print('NOISE on stdout', flush=True))\n")
    start, _project = editor_session
    editor = Editor()

    async def body(conn, session_id):
        from acp import text_block

        done = await conn.prompt(session_id=session_id, prompt=[text_block("hi")])
        await settled(lambda: editor.said() == "clean answer")
        return done

    assert start(["clean answer"], editor, body, "plugins:\n  enabled: [printer]\n").stop_reason == "end_turn"
    assert editor.said() == "clean answer"
    assert "Error parsing JSON-RPC message" not in caplog.text  # the SDK's client says so of a line not its own


def test_the_editor_chooses_how_hard_the_model_thinks(hermes_home, tmp_path, wire_server):
    """ACP's config options: the session offers "Reasoning effort" (category thought_level, which Zed shows as its
    thinking selector); the editor's choice reaches the model in its API's words, "default" goes back to config's."""
    from plugins_providers.testserver import reply

    project = tmp_path / "project"
    project.mkdir()
    (hermes_home / "config.yaml").write_text(f"api_mode: chat_completions\nbase_url: {wire_server.openai_url}\n"
                                             "model: o3\nagent:\n  reasoning_effort: low\n")
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-test"}
    command = hermes_command()
    wire_server.push(reply("one"), reply("two"), reply("three"))

    async def main():
        async with acp.spawn_agent_process(Editor(), command[0], *command[1:], "acp", env=env,
                                           cwd=str(project)) as (conn, process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            [offered] = session.config_options
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("first")])
            chosen = await conn.set_config_option(config_id="reasoning_effort", session_id=session.session_id,
                                                  value="high")
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("second")])
            await conn.set_config_option(config_id="reasoning_effort", session_id=session.session_id,
                                         value="default")
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("third")])
            wrong = []
            for config_id, value in (("reasoning_effort", "loud"), ("temperature", "high")):
                try:
                    await conn.set_config_option(config_id=config_id, session_id=session.session_id, value=value)
                except acp.RequestError as exc:
                    wrong.append(json.dumps(exc.data))
            return offered, chosen, wrong

    offered, chosen, wrong = asyncio.run(asyncio.wait_for(main(), 90))
    assert (offered.id, offered.category, offered.current_value) == ("reasoning_effort", "thought_level", "default")
    assert [o.value for o in offered.options] == ["default", "none", "minimal", "low", "medium", "high", "xhigh", "max"]
    assert offered.options[0].name == "As configured (low)"
    assert chosen.config_options[0].current_value == "high"
    assert [r.body["reasoning_effort"] for r in wire_server.requests] == ["low", "high", "low"]
    assert "'loud' is none of default, none, minimal" in wrong[0] and "no option 'temperature'" in wrong[1]
