"""One language server, spoken to over its stdin and stdout (JSON-RPC with ``Content-Length`` headers, the Language
Server Protocol's base): started, initialized, told of a file's text, and asked, by waiting, what it finds wrong."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Optional

log = logging.getLogger(__name__)
MAX_MESSAGE = 50_000_000  # bytes of one message a server may send before it is taken for broken
SETTLE = 0.3  # seconds without another publication of a file's diagnostics before the last is taken
START_WAIT = 15  # seconds a server may take to answer its start (a big repository's pyright takes some)


class ServerGone(Exception):
    """The server ended, or never answered its start."""


class Server:
    """A language server for one language in one folder (a git repository's root)."""

    def __init__(self, command: list, root: Path, language: str, env: Optional[dict] = None, options=None,
                 name: str = ""):
        self.root, self.language, self.name = root, language, name or os.path.basename(command[0])
        self.process = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        self._lock, self._changed = threading.Lock(), threading.Condition()
        self._next, self._answers = 0, {}
        self.diagnostics: dict = {}  # uri -> (how many times published, the last list)
        self.versions: dict = {}  # uri -> the version of the text the server has
        self.texts: dict = {}  # uri -> that text
        self.last_used = time.monotonic()
        threading.Thread(target=self._read, name=f"lsp-{self.name}", daemon=True).start()
        try:
            self._start(options)
        except ServerGone:
            self.process.kill()
            self.process.wait()
            raise

    def _start(self, options) -> None:
        root = self.root
        self._request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "rootPath": str(root),
                                     "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                                     "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True},
                                                                       "synchronization": {"didSave": True}},
                                                      "workspace": {"configuration": True}},
                                     "initializationOptions": options or {}}, wait=START_WAIT)
        self._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def alive(self) -> bool:
        return self.process.poll() is None

    # ------------------------------------------------------------------ the wire
    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        with self._lock:
            try:
                self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                self.process.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                raise ServerGone(f"{self.name} ended") from None

    def _request(self, method: str, params: dict, wait: float) -> Optional[dict]:
        with self._changed:
            self._next += 1
            ident = self._next
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + wait
        with self._changed:
            while ident not in self._answers:
                if not self.alive() or not self._changed.wait(max(0.0, deadline - time.monotonic())) and \
                        time.monotonic() >= deadline:
                    raise ServerGone(f"{self.name} did not answer {method} within {wait:g}s")
            return self._answers.pop(ident)

    def _read(self) -> None:
        stream = self.process.stdout
        try:
            while True:
                length = None
                while (line := stream.readline()) not in (b"\r\n", b"\n"):
                    if not line:
                        return
                    name, _, value = line.decode("ascii", "replace").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None or length > MAX_MESSAGE:
                    return
                self._received(json.loads(stream.read(length)))
        except (OSError, ValueError) as exc:
            log.debug("lsp %s: %s", self.name, exc)
        finally:
            with self._changed:
                self._changed.notify_all()

    def _received(self, message: dict) -> None:
        method = message.get("method")
        if method == "textDocument/publishDiagnostics":
            params = message.get("params") or {}
            uri, version = params.get("uri"), params.get("version")
            if isinstance(version, int) and version < self.versions.get(uri, 0):
                return  # of a text since replaced
            with self._changed:
                count = self.diagnostics.get(uri, (0, []))[0]
                self.diagnostics[uri] = (count + 1, params.get("diagnostics") or [])
                self._changed.notify_all()
        elif method and "id" in message:  # the server asks: configuration, progress, registrations
            items = (message.get("params") or {}).get("items") or []
            self._send({"jsonrpc": "2.0", "id": message["id"],
                        "result": [None] * len(items) if method == "workspace/configuration" else None})
        elif "id" in message:
            with self._changed:
                self._answers[message["id"]] = message
                self._changed.notify_all()

    # ------------------------------------------------------------------ files
    def diagnose(self, path: Path, text: str, wait: float) -> Optional[list]:
        """The server told of ``path``'s text now, and what it then publishes for it; None when it says nothing
        within ``wait`` seconds."""
        uri = path.as_uri()
        with self._changed:
            seen = self.diagnostics.get(uri, (0, []))[0]
        version = self.versions.get(uri, 0) + 1
        if version == 1:
            self._send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": self.language, "version": version, "text": text}}})
        else:
            self._send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}})
        self._send({"jsonrpc": "2.0", "method": "textDocument/didSave",
                    "params": {"textDocument": {"uri": uri}, "text": text}})
        self.versions[uri], self.texts[uri], self.last_used = version, text, time.monotonic()
        deadline = time.monotonic() + wait
        with self._changed:
            while self.diagnostics.get(uri, (0, []))[0] == seen:
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    return None
                self._changed.wait(left)
            while True:  # a server may publish its quick checks first and the rest a moment later
                count = self.diagnostics[uri][0]
                self._changed.wait(max(0.0, min(SETTLE, deadline - time.monotonic())))
                if self.diagnostics[uri][0] == count or time.monotonic() >= deadline:
                    return self.diagnostics[uri][1]

    def close(self) -> None:
        try:
            self._request("shutdown", {}, wait=2)
            self._send({"jsonrpc": "2.0", "method": "exit"})
            self.process.wait(2)
        except (ServerGone, subprocess.TimeoutExpired):
            pass
        finally:
            if self.alive():
                self.process.kill()
                self.process.wait()
