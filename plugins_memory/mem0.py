"""Memory backend mem0: hermes-agent's Mem0 memory provider (``memory.provider: mem0``).

Each finished turn is sent to Mem0, which extracts the facts worth keeping, the memories relevant to each message are
recalled before the model call, and the model has ``mem0_search``, ``mem0_add``, ``mem0_update`` and ``mem0_delete``.
hermes-agent's settings: ``MEM0_API_KEY``; ``MEM0_HOST`` for a Mem0 server of your own (its ``/memories`` and
``/search`` routes, the key as ``X-API-Key``), else the Mem0 Platform (api.mem0.ai, its v3 routes, the key as
``Token``); ``MEM0_USER_ID`` (``hermes-user``: whose memories, read and written), ``MEM0_AGENT_ID`` (``hermes``: which
agent wrote them); the data folder's ``mem0.json`` holds the same keys in lower case and wins. Its in-process ``oss``
mode is not here. Mem0 speaks HTTP with a few routes: no SDK is needed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kernel import hookimpl
from kernel.types import Tool, ToolError
from plugins_memory.base import MemoryBackend, backend_proxy_tools

NAME = "mem0"
PLATFORM = "https://api.mem0.ai"
requires_plugins = ["memory"]  # a backend of its memory_backends: without it, not loaded (and listed so)


def settings(data_dir: Any) -> dict:
    """hermes-agent's settings: its variables, then the data folder's ``mem0.json`` over them."""
    found = {key: os.environ.get(f"MEM0_{key.upper()}", "").strip() for key in ("api_key", "host", "user_id",
                                                                                "agent_id", "mode")}
    try:
        kept = json.loads((Path(data_dir) / "mem0.json").read_text(encoding="utf-8"))
        found.update({k: str(v) for k, v in kept.items() if k in found and v not in (None, "")})
    except (OSError, ValueError, AttributeError):
        pass
    return found


class Mem0(MemoryBackend):
    """Memories kept by Mem0, on its platform or a server of your own."""

    name = NAME
    needs = "MEM0_API_KEY (in the data folder's .env), or MEM0_HOST for a Mem0 server of your own"

    def __init__(self, config: Any = None):
        found = settings(config.data_dir) if config is not None else {}
        self.key, self.host = found.get("api_key", ""), (found.get("host") or "").rstrip("/")
        self.user = found.get("user_id") or "hermes-user"
        self.agent_id = found.get("agent_id") or "hermes"
        self.base = self.host or str((config.get("mem0.api_url") if config is not None else "") or PLATFORM)
        self.mode, self.platform, self.client = found.get("mode", ""), "cli", None

    def is_available(self) -> bool:
        return bool(self.key or self.host) and self.mode != "oss"  # a server of one's own may need no key

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        import httpx2 as httpx

        self.platform = str(kwargs.get("platform") or "cli")
        auth = ({"X-API-Key": self.key} if self.key else {}) if self.host else {"Authorization": f"Token {self.key}"}
        self.client = httpx.Client(base_url=self.base.rstrip("/"), headers=auth, timeout=30)

    def _call(self, method: str, platform_path: str, own_path: str, **kwargs: Any) -> Any:
        """A request to the platform's route or to a server's own; ToolError (one line) when it fails."""
        import httpx2 as httpx

        try:
            answer = self.client.request(method, own_path if self.host else platform_path, **kwargs)
        except httpx.HTTPError as exc:
            raise ToolError(f"mem0: cannot reach {self.base} ({exc or type(exc).__name__})") from None
        if not answer.is_success:
            try:
                said = answer.json().get("detail") or answer.json().get("error") or answer.reason_phrase
            except (ValueError, AttributeError):
                said = answer.reason_phrase
            raise ToolError(f"mem0: {said} ({answer.status_code})")
        return answer.json() if answer.content else {}

    def search(self, query: str, top_k: int = 10, rerank: bool = False) -> list:
        body = {"query": query, "filters": {"user_id": self.user}, "top_k": top_k, **({"rerank": True} if rerank
                                                                                          else {})}
        found = self._call("POST", "/v3/memories/search/", "/search", json=body)
        found = found.get("results", found.get("memories", [])) if isinstance(found, dict) else found
        return [r for r in found or [] if isinstance(r, dict)]

    def add(self, messages: list, infer: bool) -> Any:
        return self._call("POST", "/v3/memories/add/", "/memories", json={
            "messages": messages, "user_id": self.user, "agent_id": self.agent_id, "infer": infer,
            "metadata": {"channel": self.platform}})

    # -- the lifecycle
    def system_prompt_block(self) -> str:
        return (f"# Mem0 memory\nYou remember this user ({self.user}) across conversations: call mem0_search before "
                "answering anything that may depend on what you know of them (preferences, facts, people, projects, "
                "earlier decisions), more than once for a question of several parts; mem0_add keeps a lasting fact "
                "the moment it is said, mem0_update and mem0_delete change or drop one by its id.")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        lines = [str(r.get("memory") or "") for r in self.search(query) if r.get("memory")] if query.strip() else []
        return "## Mem0 memory\n" + "\n".join(f"- {line}" for line in lines) if lines else ""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "", messages=None) -> None:
        if user_content.strip() and assistant_content.strip():  # Mem0 extracts the facts
            self.add([{"role": "user", "content": user_content}, {"role": "assistant", "content": assistant_content}],
                     infer=True)

    def shutdown(self) -> None:
        if self.client is not None:
            self.client.close()

    # -- the tools
    def _search(self, args: dict, ctx: Any) -> dict:
        query = str(args.get("query") or "").strip()
        if not query:
            raise ToolError("mem0_search: query is empty")
        found = self.search(query, max(1, min(int(args.get("top_k") or 10), 50)), bool(args.get("rerank")))
        return {"results": [{"id": r.get("id"), "memory": r.get("memory", ""), "score": r.get("score")}
                            for r in found], "count": len(found)}

    def _add(self, args: dict, ctx: Any) -> dict:
        content = str(args.get("content") or "").strip()
        if not content:
            raise ToolError("mem0_add: content is empty")
        self.add([{"role": "user", "content": content}], infer=False)  # kept as said
        return {"result": "stored" if self.host else "queued for storage (Mem0 stores it in a moment)"}

    def _update(self, args: dict, ctx: Any) -> dict:
        memory, text = str(args.get("memory_id") or ""), str(args.get("text") or "").strip()
        if not memory or not text:
            raise ToolError("mem0_update: memory_id and text are needed")
        self._call("PUT", f"/v1/memories/{memory}/", f"/memories/{memory}", json={"text": text})
        return {"result": "updated", "memory_id": memory}

    def _delete(self, args: dict, ctx: Any) -> dict:
        memory = str(args.get("memory_id") or "")
        if not memory:
            raise ToolError("mem0_delete: memory_id is needed")
        self._call("DELETE", f"/v1/memories/{memory}/", f"/memories/{memory}")
        return {"result": "deleted", "memory_id": memory}

    def tools(self) -> list[Tool]:
        def tool(name: str, description: str, properties: dict, required: list, handler) -> Tool:
            return Tool(name=name, description=description, handler=handler, toolset="memory",
                        parameters={"type": "object", "properties": properties, "required": required})

        memory_id = {"memory_id": {"type": "string", "description": "the memory's id (from mem0_search)"}}
        return [
            tool("mem0_search", "Search what you remember of the user by meaning, the most relevant first. Use it "
                 "before answering anything that may depend on it; for a question of several parts, search again "
                 "with other words.", {"query": {"type": "string", "description": "what to look for"},
                                       "top_k": {"type": "integer", "description": "at most this many (10; 50)"},
                                       "rerank": {"type": "boolean", "description": "rerank for relevance (the "
                                                  "platform's)"}}, ["query"], self._search),
            tool("mem0_add", "Keep a lasting fact about the user, as said (a preference, a correction, a decision), "
                 "the moment it is said; not chit-chat, not a fact kept already.",
                 {"content": {"type": "string", "description": "the fact"}}, ["content"], self._add),
            tool("mem0_update", "Replace what a memory says (its id from mem0_search): a fact that changed or was "
                 "wrong.", {**memory_id, "text": {"type": "string", "description": "what it says now"}},
                 ["memory_id", "text"], self._update),
            tool("mem0_delete", "Forget a memory by its id (from mem0_search): obsolete, or the user asks.",
                 memory_id, ["memory_id"], self._delete),
        ]


@hookimpl
def register_config(declare):
    declare("mem0.api_url", str, "", "another Mem0 Platform API (empty: api.mem0.ai; a test's)")


@hookimpl
def register_memory_backends(register, config):
    register(NAME, Mem0, description="Mem0: facts it extracts from each turn, recalled by meaning (hermes-agent's)")


@hookimpl
def register_tools(register, config):
    if config.get("memory.provider") != NAME:  # only when selected: the proxies find the agent's backend at call time
        return
    for tool in backend_proxy_tools(NAME, Mem0().tools()):
        register(tool)
