"""OpenAI's Responses API over the agent: ``POST /v1/responses`` (streamed or not, chained with
``previous_response_id`` or by a name, hermes-agent's ``conversation``; or the client's own
``conversation_history``), ``GET`` and ``DELETE /v1/responses/{id}``.

Each stored response keeps the whole conversation up to it (tool calls and
results included), as hermes-agent's ``response_store.db`` does, so a response
can be continued from any earlier one (branches too) and by any ``hermes serve``
process on the same data folder. A chain is one stored session (``hermes sessions``,
``/api/sessions``): a response that continues its session's latest goes on in it;
one that branches from an earlier response starts a session of its own. The store
keeps the latest :data:`MAX_STORED` responses; the file is the owner's alone.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Optional

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from kernel.messages import text_of
from plugins.images import client_content, has_content
from plugins.serve.app import SESSION_HEADER, _this_turn, _usage, error, sampling
from plugins.serve.once import HEADER
from plugins.serve.turns import Sink, TurnRequest

MAX_STORED = 1000


class ResponseStore:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self._lock = path, threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (id TEXT PRIMARY KEY, data TEXT NOT NULL, "
                         "accessed_at REAL NOT NULL)")
        # each session's latest response: continuing that one goes on in the session, any other branches off
        self._db.execute("CREATE TABLE IF NOT EXISTS tips (session_id TEXT PRIMARY KEY, response_id TEXT NOT NULL)")
        # hermes-agent's named conversations (``conversation``): each name's latest response
        self._db.execute("CREATE TABLE IF NOT EXISTS conversations (name TEXT PRIMARY KEY, response_id TEXT NOT NULL)")
        os.chmod(path, 0o600)

    def get(self, response_id: str) -> Optional[dict]:
        with self._lock:
            row = self._db.execute("SELECT data FROM responses WHERE id = ?", (response_id,)).fetchone()
            if row is not None:
                self._db.execute("UPDATE responses SET accessed_at = ? WHERE id = ?", (time.time(), response_id))
        return json.loads(row[0]) if row else None

    def put(self, response_id: str, data: Optional[dict], session_id: str, conversation: str = "") -> None:
        """Store a response (``data`` None: one the client asked not to store) as its session's latest, and its
        named conversation's."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            if data is not None:
                self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
                                 (response_id, json.dumps(data, ensure_ascii=False), time.time()))
                self._db.execute("DELETE FROM responses WHERE id NOT IN (SELECT id FROM responses ORDER BY "
                                 "accessed_at DESC LIMIT ?)", (MAX_STORED,))
                if conversation:
                    self._db.execute("INSERT OR REPLACE INTO conversations VALUES (?, ?)", (conversation, response_id))
            self._db.execute("INSERT OR REPLACE INTO tips VALUES (?, ?)", (session_id, response_id))
            for table in ("tips", "conversations"):  # of responses no longer stored: a name starts anew
                self._db.execute(f"DELETE FROM {table} WHERE response_id NOT IN (SELECT id FROM responses)")
            self._db.execute("COMMIT")

    def latest_of(self, conversation: str) -> Optional[str]:
        """The latest stored response of a named conversation (None: a new one)."""
        with self._lock:
            row = self._db.execute("SELECT response_id FROM conversations WHERE name = ?", (conversation,)).fetchone()
        return row[0] if row else None

    def claim(self, session_id: str, latest: str, response_id: str) -> bool:
        """Whether ``latest`` is the session's latest response, making ``response_id`` (to come) its latest if so:
        of two requests continuing the same response at once, one goes on in the session, the other branches."""
        with self._lock:
            return self._db.execute("UPDATE tips SET response_id = ? WHERE session_id = ? AND response_id = ?",
                                    (response_id, session_id, latest)).rowcount == 1

    def delete(self, response_id: str) -> bool:
        with self._lock:
            self._db.execute("DELETE FROM conversations WHERE response_id = ?", (response_id,))  # it starts anew
            return self._db.execute("DELETE FROM responses WHERE id = ?", (response_id,)).rowcount > 0


def input_messages(value: Any) -> Optional[list]:
    """The request's ``input`` as chat messages (a string is one user message; a user's images are kept as parts);
    ``None`` when it is neither; ValueError for an image that is none."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if not isinstance(value, list):
        return None
    messages = []
    for item in value:
        if isinstance(item, str):
            messages.append({"role": "user", "content": item})
        elif isinstance(item, dict) and item.get("role") in ("user", "assistant", "system", "developer"):
            content = client_content(item.get("content"))
            if content is None:
                return None
            role = "system" if item["role"] == "developer" else item["role"]
            messages.append({"role": role, "content": content if role == "user" else text_of(content)})
        elif isinstance(item, dict) and item.get("type") in ("function_call", "function_call_output"):
            continue  # the agent ran its own tools: a client's record of them adds nothing
        else:
            return None
    return messages


def output_items(messages: list, final: Optional[str], failure: Optional[str]) -> list:
    """This turn's messages as Responses output items: its tool calls and their results, then the answer."""
    items = []
    for message in messages:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                function = call.get("function") or {}
                items.append({"type": "function_call", "id": f"fc_{call.get('id', '')}", "call_id": call.get("id", ""),
                              "name": function.get("name", ""), "arguments": function.get("arguments", ""),
                              "status": "completed"})
        elif message.get("role") == "tool":
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id", ""),
                          "output": message.get("content", "")})
    items.append({"type": "message", "id": f"msg_{uuid.uuid4().hex}", "status": "completed", "role": "assistant",
                  "content": [{"type": "output_text", "text": final or failure or "(no answer)", "annotations": []}]})
    return items


def store(server) -> ResponseStore:
    """The server's response store, opened by the first use."""
    if server._responses is None:
        from hermes.host.config import data_dir

        server._responses = ResponseStore(data_dir() / "response_store.db")
    return server._responses


async def create_response(server, request: Request) -> Response:
    body = await server.body(request)
    if isinstance(body, Response):
        return body
    try:
        messages = input_messages(body.get("input"))
    except ValueError as exc:
        return error(400, f"'input': {exc}", param="input")
    if not messages:
        return error(400, "'input' must be text or a list of messages", param="input")
    if not isinstance(body.get("stream", False), bool):
        return error(400, "'stream' must be true or false", param="stream")
    history, instructions, session = [], body.get("instructions"), None
    previous, response_id = body.get("previous_response_id"), f"resp_{uuid.uuid4().hex}"
    conversation = body.get("conversation")  # hermes-agent's: a name (OpenAI's API: {"id": ...})
    conversation = conversation.get("id") if isinstance(conversation, dict) else conversation
    if conversation is not None and (not isinstance(conversation, str) or not conversation.strip()):
        return error(400, "'conversation' must be a conversation's name", param="conversation")
    if conversation and previous is not None:
        return error(400, "'conversation' and 'previous_response_id' both say what this continues: send one",
                     param="conversation")
    if conversation:
        previous = await asyncio.to_thread(store(server).latest_of, conversation)
    if (given := body.get("conversation_history")) is not None:  # hermes-agent's: a stateless client's history
        try:
            earlier = input_messages(given) if isinstance(given, list) else None
        except ValueError as exc:
            return error(400, f"'conversation_history': {exc}", param="conversation_history")
        if earlier is None:
            return error(400, "'conversation_history' must be a list of messages ({role, content})",
                         param="conversation_history")
        messages, previous = earlier + messages, None  # over previous_response_id, as in hermes-agent
    if previous is not None:
        stored = await asyncio.to_thread(store(server).get, str(previous)) if isinstance(previous, str) else None
        if stored is None:
            return error(404, f"no stored response '{previous}'", param="previous_response_id", code="not_found")
        history, instructions = list(stored["conversation_history"]), instructions or stored.get("instructions")
        # its session's latest, and the session stored: go on in it (the store holds the same history)
        if len(messages) == 1 and stored.get("session_id") and server.host.pm.hook.load_session.get_hookimpls() and \
                await asyncio.to_thread(store(server).claim, stored["session_id"], previous, response_id):
            session = stored["session_id"]
    system = [m["content"] for m in messages if m["role"] == "system"]
    messages = [m for m in messages if m["role"] != "system"]
    if not messages or messages[-1]["role"] != "user" or not has_content(messages[-1]["content"]):
        return error(400, "the input must end with the user's message, with text or an image", param="input")
    if system:
        instructions = "\n".join(([instructions] if isinstance(instructions, str) else []) + system)
    options = sampling(body, ("max_output_tokens",))
    if isinstance(options, Response):
        return options
    model = body.get("model")
    history += messages[:-1]
    turn = TurnRequest(user_message=messages[-1]["content"], history=history, session_id=session,
                       system_message=instructions if isinstance(instructions, str) else None,
                       model=model if isinstance(model, str) and model != server.model_name else "", options=options)
    skeleton = {"id": response_id, "object": "response", "created_at": int(time.time()),
                "status": "in_progress", "model": str(model or server.model_name), "previous_response_id": previous,
                "instructions": instructions, "output": [], "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "error": None, "usage": None, **({"conversation": {"id": conversation}} if conversation
                                                              else {})}
    keep = body.get("store", True) is not False
    if body.get("stream") is True:
        if (busy := server.busy()) is not None:
            return busy
        turn.stream, sink = True, Sink(asyncio.get_running_loop())
        agent = await server._build(turn, sink)
        if isinstance(agent, Response):
            return agent
        return StreamingResponse(_stream(server, request, turn, sink, skeleton, keep), media_type="text/event-stream",
                                 headers={SESSION_HEADER: agent.session_id, "Cache-Control": "no-cache"})

    async def answer(detached: bool = False) -> Response:
        if (busy := server.busy()) is not None:
            return busy
        async with server.slots:
            outcome = await server._run(request, turn, None, detached=detached)
        if isinstance(outcome, Response):
            return outcome
        data = await _finished(server, skeleton, outcome[1], keep)
        return JSONResponse(data, headers={SESSION_HEADER: outcome[1].session_id})

    if key := request.headers.get(HEADER, "").strip():  # a retry gets the first's answer (hermes-agent's header)
        return await server.once.answer(key, body, lambda: answer(detached=True))
    return await answer()


async def _finished(server, skeleton: dict, result, keep: bool, text_id: str = "") -> dict:
    """The response as it ended (stored when ``keep``: with the whole conversation, for ``previous_response_id``)."""
    status = "completed" if result.exit_reason == "completed" else \
        "incomplete" if result.exit_reason in ("budget_exhausted", "interrupted_by_user") else "failed"
    usage = _usage(result)
    output = output_items(_this_turn(result.messages), result.final_response, result.error)
    if text_id:
        output[-1]["id"] = text_id  # the message item the stream announced
    data = {**skeleton, "status": status, "output": output,
            "error": None if status != "failed" else {"code": "server_error", "message": result.error or ""},
            "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                      "total_tokens": usage["total_tokens"]}}
    record = {"response": data, "conversation_history": result.messages, "instructions": data["instructions"],
              "session_id": result.session_id} if keep else None
    await asyncio.to_thread(store(server).put, data["id"], record, result.session_id,
                            (data.get("conversation") or {}).get("id", ""))
    return data


async def _stream(server, request: Request, turn: TurnRequest, sink: Sink, skeleton: dict, keep: bool):
    """The Responses API's server-sent events: the response created, its items as they come (text deltas; each
    tool call and its output), then ``response.completed`` (or ``failed``/``incomplete``) with the whole response."""
    numbers = itertools.count()

    def event(kind: str, **data) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': next(numbers), **data})}\n\n"

    yield event("response.created", response=skeleton)
    yield event("response.in_progress", response=skeleton)
    index, text, text_id, calls = 0, None, "", {}

    def close_text():
        nonlocal index, text
        part = {"type": "output_text", "text": text, "annotations": []}
        item = {"id": text_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]}
        done = [event("response.output_text.done", item_id=text_id, output_index=index, content_index=0, text=text),
                event("response.content_part.done", item_id=text_id, output_index=index, content_index=0, part=part),
                event("response.output_item.done", output_index=index, item=item)]
        index, text = index + 1, None
        return done

    async with server.slots:
        task = asyncio.ensure_future(server._run(request, turn, sink, sink.agent))
        async for item in sink.until(task):
            if item.kind == "delta":
                if text is None:
                    text, text_id = "", f"msg_{uuid.uuid4().hex}"
                    yield event("response.output_item.added", output_index=index, item={
                        "id": text_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []})
                    yield event("response.content_part.added", item_id=text_id, output_index=index, content_index=0,
                                part={"type": "output_text", "text": "", "annotations": []})
                text += item.data["text"]
                yield event("response.output_text.delta", item_id=text_id, output_index=index, content_index=0,
                            delta=item.data["text"])
            elif item.kind == "tool_start":
                for line in close_text() if text is not None else ():
                    yield line
                call_id = item.data["toolCallId"]
                calls[call_id] = {"id": f"fc_{call_id}", "type": "function_call", "call_id": call_id,
                                  "name": item.data["tool"], "status": "in_progress",
                                  "arguments": json.dumps(item.data.get("args") or {}, ensure_ascii=False)}
                yield event("response.output_item.added", output_index=index, item=calls[call_id])
            elif item.kind == "tool_complete" and item.data["toolCallId"] in calls:
                call = {**calls.pop(item.data["toolCallId"]), "status": "completed"}
                yield event("response.output_item.done", output_index=index, item=call)
                output = {"type": "function_call_output", "call_id": call["call_id"], "output": item.data["result"]}
                yield event("response.output_item.added", output_index=index + 1, item=output)
                yield event("response.output_item.done", output_index=index + 1, item=output)
                index += 2
        for line in close_text() if text is not None else ():
            yield line
        outcome = task.result()
    if isinstance(outcome, Response):
        failed = {**skeleton, "status": "failed", "error": json.loads(outcome.body)["error"]}
        yield event("response.failed", response=failed)
        return
    data = await _finished(server, skeleton, outcome[1], keep, text_id)
    yield event(f"response.{data['status']}", response=data)


async def get_response(server, request: Request) -> Response:
    response_id = request.path_params["response_id"]
    stored = await asyncio.to_thread(store(server).get, response_id)
    if stored is None:
        return error(404, f"no stored response '{response_id}'", code="not_found")
    return JSONResponse(stored["response"])


async def delete_response(server, request: Request) -> Response:
    response_id = request.path_params["response_id"]
    if not await asyncio.to_thread(store(server).delete, response_id):
        return error(404, f"no stored response '{response_id}'", code="not_found")
    return JSONResponse({"id": response_id, "object": "response", "deleted": True})
