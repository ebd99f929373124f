"""`hermes serve` as a subprocess on 127.0.0.1, its agent's model the wire-protocol test server."""

import os
import subprocess
import time
import urllib.request

import pytest
import yaml

from tests.conftest import ROOT, free_port, hermes_command


class Served:
    def __init__(self, process, port, key):
        self.process, self.port, self.key = process, port, key
        self.url = f"http://127.0.0.1:{port}"

    def wait_healthy(self, timeout: float = 30) -> "Served":
        """Wait until it answers /health (its process ending first is the test's failure)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited: {self.process.stderr.read() if self.process.stderr else ''}")
            try:
                urllib.request.urlopen(f"{self.url}/health", timeout=1).read()
                return self
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the server did not answer /health")

    def client(self, **kwargs):
        from openai import OpenAI

        kwargs.setdefault("api_key", self.key or "none")
        return OpenAI(base_url=f"{self.url}/v1", max_retries=0, **kwargs)


@pytest.fixture
def serve(hermes_home, wire_server):
    """``serve(key="", config={}, env={})``: a running ``hermes serve``; stopped after the test."""
    started = []

    def start(key: str = "", config: dict = None, env: dict = None, args=()):
        settings = {"model": "gpt-test", "base_url": wire_server.openai_url, "api_mode": "chat_completions",
                    **(config or {})}
        (hermes_home / "config.yaml").write_text(yaml.safe_dump(settings))
        port = free_port()
        full_env = {**os.environ, "HERMES_HOME": str(hermes_home), **(env or {}),
                    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
        full_env.pop("API_SERVER_KEY", None)
        if key:
            full_env["API_SERVER_KEY"] = key
        process = subprocess.Popen(hermes_command() + ["serve", "--port", str(port), *args], env=full_env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        served = Served(process, port, key)
        started.append(served)
        return served.wait_healthy()

    yield start
    for served in started:
        served.process.terminate()
        try:
            served.process.wait(10)
        except subprocess.TimeoutExpired:
            served.process.kill()
