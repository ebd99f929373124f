"""OpenAI's Responses API over the agent: ``POST /v1/responses`` (chained with
``previous_response_id``), ``GET`` and ``DELETE /v1/responses/{id}``.

Each stored response keeps the whole conversation up to it (tool calls and
results included), as hermes-agent's ``response_store.db`` does, so a response
can be continued from any earlier one (branches too) and by any ``hermes serve``
process on the same data folder. The store keeps the latest
:data:`MAX_STORED` responses; the file is the owner's alone.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Optional

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


def output_items(messages: list, final: Optional[str], error: Optional[str]) -> list:
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
                  "content": [{"type": "output_text", "text": final or error or "(no answer)", "annotations": []}]})
    return items
