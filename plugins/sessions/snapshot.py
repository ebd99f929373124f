"""``sessions.write_json_snapshots`` (hermes-agent's): after each turn, the session whole as
``sessions/session_ID.json`` in the data folder, for tools that read hermes-agent's files. The store stays the
record; this file is rewritten whole (through a temporary file) each time."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path


def write(agent, session_id: str) -> Path:
    from hermes.host.files import atomic_write

    config = agent.provider_config
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                               "parameters": t.parameters}} for t in (agent.tools or {}).values()]
    entry = {"session_id": session_id, "model": config.model, "base_url": config.base_url, "platform": agent.platform,
             "last_updated": time.strftime("%Y-%m-%dT%H:%M:%S"), "tools": tools,
             "message_count": len(agent.messages), "messages": agent.messages}
    name = re.sub(r"[^\w.-]", "_", session_id).lstrip(".")  # an id a client sent (serve's) stays in the folder
    path = Path(agent.config.data_dir) / "sessions" / f"session_{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(entry, indent=2, ensure_ascii=False, default=str))
    return path
