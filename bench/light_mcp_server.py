"""A minimal MCP server on the standard library alone (stdio, newline-delimited JSON-RPC), for bench_mcp.py:
it starts in milliseconds, so a start-up measured with it is the client's and the waiting's, not the CPU of
importing an SDK. ``python light_mcp_server.py [WAIT_SECONDS]`` waits that long before it answers anything.
It answers initialize, tools/list (one tool, echo) and tools/call; notifications get no answer."""

import json
import sys
import time

if len(sys.argv) > 1:
    time.sleep(float(sys.argv[1]))
TOOL = {"name": "echo", "description": "Say the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, result = message.get("method"), {}
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "light", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = message["params"].get("arguments", {}).get("text", "")
        result = {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
