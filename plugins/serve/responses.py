"""OpenAI's Responses API over the agent: ``POST /v1/responses`` (chained with
``previous_response_id``), ``GET`` and ``DELETE /v1/responses/{id}``.

Each stored response keeps the whole conversation up to it (tool calls and
results included), as hermes-agent's ``response_store.db`` does, so a response
can be continued from any earlier one (branches too) and by any ``hermes serve``
process on the same data folder. The store keeps the latest
:data:`MAX_STORED` responses; the file is the owner's alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Optional

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from plugins.serve.app import SESSION_HEADER, _this_turn, _usage, error
from plugins.serve.turns import TurnRequest

MAX_STORED = 1000


class ResponseStore:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self._lock = path, threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (id TEXT PRIMARY KEY, data TEXT NOT NULL, "
                         "accessed_at REAL NOT NULL)")
        os.chmod(path, 0o600)

    def get(self, response_id: str) -> Optional[dict]:
        with self._lock:
            row = self._db.execute("SELECT data FROM responses WHERE id = ?", (response_id,)).fetchone()
            if row is not None:
                self._db.execute("UPDATE responses SET accessed_at = ? WHERE id = ?", (time.time(), response_id))
        return json.loads(row[0]) if row else None

    def put(self, response_id: str, data: dict) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
                             (response_id, json.dumps(data, ensure_ascii=False), time.time()))
            self._db.execute("DELETE FROM responses WHERE id NOT IN (SELECT id FROM responses ORDER BY "
                             "accessed_at DESC LIMIT ?)", (MAX_STORED,))
            self._db.execute("COMMIT")

    def delete(self, response_id: str) -> bool:
        with self._lock:
            return self._db.execute("DELETE FROM responses WHERE id = ?", (response_id,)).rowcount > 0


def input_messages(value: Any) -> Optional[list]:
    """The request's ``input`` as chat messages (a string is one user message); ``None`` when it is neither."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if not isinstance(value, list):
        return None
    messages = []
    for item in value:
        if isinstance(item, str):
            messages.append({"role": "user", "content": item})
        elif isinstance(item, dict) and item.get("role") in ("user", "assistant", "system", "developer"):
            content = item.get("content")
            if isinstance(content, list):
                content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            if not isinstance(content, str):
                return None
            role = "system" if item["role"] == "developer" else item["role"]
            messages.append({"role": role, "content": content})
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
    messages = input_messages(body.get("input"))
    if not messages:
        return error(400, "'input' must be text or a list of messages", param="input")
    if body.get("stream"):
        return error(400, "streamed responses are not served yet: leave 'stream' out, or use "
                          "/v1/chat/completions with stream", param="stream", code="unsupported")
    history, instructions = [], body.get("instructions")
    previous = body.get("previous_response_id")
    if previous is not None:
        stored = await asyncio.to_thread(store(server).get, str(previous)) if isinstance(previous, str) else None
        if stored is None:
            return error(404, f"no stored response '{previous}'", param="previous_response_id", code="not_found")
        history, instructions = list(stored["conversation_history"]), instructions or stored.get("instructions")
    system = [m["content"] for m in messages if m["role"] == "system"]
    messages = [m for m in messages if m["role"] != "system"]
    if not messages or messages[-1]["role"] != "user" or not messages[-1]["content"].strip():
        return error(400, "the input must end with the user's message, with text", param="input")
    if system:
        instructions = "\n".join(([instructions] if isinstance(instructions, str) else []) + system)
    if server.slots.locked():
        return error(429, "too many conversations at once (api_server.max_concurrent_runs); try again",
                     kind="rate_limit_error", code="too_many_runs")
    model = body.get("model")
    history += messages[:-1]
    turn = TurnRequest(user_message=messages[-1]["content"], history=history,
                       system_message=instructions if isinstance(instructions, str) else None,
                       model=model if isinstance(model, str) and model != server.model_name else "")
    async with server.slots:
        outcome = await server._run(request, turn, None)
    if isinstance(outcome, Response):
        return outcome
    _, result = outcome
    status = "completed" if result.exit_reason == "completed" else \
        "incomplete" if result.exit_reason in ("budget_exhausted", "interrupted_by_user") else "failed"
    usage = _usage(result)
    data = {"id": f"resp_{uuid.uuid4().hex}", "object": "response", "created_at": int(time.time()),
            "status": status, "model": str(model or server.model_name), "previous_response_id": previous,
            "instructions": instructions, "output": output_items(_this_turn(result.messages),
                                                                  result.final_response, result.error),
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "error": None if status != "failed" else {"code": "server_error", "message": result.error or ""},
            "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                      "total_tokens": usage["total_tokens"]}}
    if body.get("store", True) is not False:
        await asyncio.to_thread(store(server).put, data["id"], {
            "response": data, "conversation_history": result.messages, "instructions": instructions,
            "session_id": result.session_id})
    return JSONResponse(data, headers={SESSION_HEADER: result.session_id})


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
