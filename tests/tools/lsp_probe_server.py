"""A language server for tests: it tries to write the file named by its argument (outside the workspace), then
answers every text it is shown with two errors: whether that write went through, and the text."""

import json
import sys


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    sys.stdout.buffer.flush()


try:
    with open(sys.argv[1], "w") as out:
        out.write("written by the language server")
    wrote = "went through"
except OSError as exc:
    wrote = f"refused ({exc.strerror})"
while True:
    length = None
    while (line := sys.stdin.buffer.readline()) not in (b"\r\n", b"\n"):
        if not line:
            sys.exit(0)
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message = json.loads(sys.stdin.buffer.read(length))
    method = message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
    elif method in ("textDocument/didOpen", "textDocument/didChange"):
        params = message["params"]
        document = params["textDocument"]
        text = document.get("text") or params.get("contentChanges", [{}])[0].get("text", "")
        send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {
            "uri": document["uri"], "version": document.get("version"),
            "diagnostics": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                             "severity": 1, "message": f"the write outside the workspace {wrote}"},
                            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                             "severity": 1, "message": f"the text: {text.strip()}"}]}})
