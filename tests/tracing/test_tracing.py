"""The tracing plugin: ``hermes run`` as a subprocess sends its turn, model calls and tool calls as OpenTelemetry
spans over OTLP/HTTP to a loopback receiver, which decodes them with OpenTelemetry's own protobuf messages."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

SECRET = "sk-tracing-test-0123456789abcdef"


class Receiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1: every POST's path, headers and spans."""

    def __init__(self):
        self.posts: list = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.posts.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        found = []
        for _, _, body in self.posts:
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                service = {a.key: _value(a.value) for a in resource.resource.attributes}
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        found.append({"name": span.name, "trace": span.trace_id.hex(), "id": span.span_id.hex(),
                                      "parent": span.parent_span_id.hex(), "status": span.status.code,
                                      "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                                      "service": service, **{a.key: _value(a.value) for a in span.attributes}})
        return found


def _value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind)


@pytest.fixture
def receiver():
    found = Receiver()
    yield found
    found.server.shutdown()


def _run(hermes, hermes_home, tmp_path, script, config, env=None, prompt="read my notes"):
    (tmp_path / "script.json").write_text(json.dumps(script))
    (hermes_home / "config.yaml").write_text(yaml.safe_dump(config))
    return hermes("run", "--api-mode", "scripted", "--base-url", str(tmp_path / "script.json"), "-m", "scripted-1",
                  "--yolo", prompt, env={"MY_SERVICE_API_KEY": SECRET, **(env or {})})


def test_a_run_is_one_trace_of_its_turn_its_model_calls_and_its_tools(hermes, hermes_home, tmp_path, receiver):
    notes = tmp_path / "notes.txt"
    notes.write_text("buy milk\n")
    script = [{"tool_calls": [["read_file", {"path": str(notes)}], ["read_file", {"path": f"/nonexistent/{SECRET}"}]],
               "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100}},
              {"content": "You need milk.", "usage": {"input_tokens": 200, "output_tokens": 5}}]
    config = {"tracing": {"otlp_endpoint": receiver.url, "headers": {"Authorization": "Bearer t0ken"},
                          "capture_content": True}}
    started = time.time_ns()
    out = _run(hermes, hermes_home, tmp_path, script, config)
    assert out.returncode == 0 and out.stdout.strip() == "You need milk.", out.stderr
    assert "tracing" not in out.stderr
    assert {path for path, _, _ in receiver.posts} == {"/v1/traces"}  # the endpoint's path was added
    assert all(headers["authorization"] == "Bearer t0ken" for _, headers, _ in receiver.posts)
    every = receiver.spans()
    assert sorted(s["name"] for s in every) == ["chat scripted-1", "chat scripted-1", "execute_tool read_file",
                                                 "execute_tool read_file", "invoke_agent hermes"]
    turn = next(s for s in every if s["name"] == "invoke_agent hermes")
    read, failed = (next(s for s in every if s.get("hermes.tool.status") == status) for status in ("ok", "error"))
    assert turn["parent"] == "" and {s["trace"] for s in every} == {turn["trace"]}
    assert all(s["parent"] == turn["id"] for s in every if s is not turn)
    assert all(started <= s["start"] <= s["end"] for s in every)
    assert all(turn["start"] <= s["start"] and s["end"] <= turn["end"] for s in every)
    assert turn["service"]["service.name"] == "hermes" and turn["gen_ai.operation.name"] == "invoke_agent"
    assert turn["session.id"] == turn["gen_ai.conversation.id"] and turn["hermes.platform"] == "run"
    assert turn["input.value"] == "read my notes" and turn["output.value"] == "You need milk."
    assert turn["hermes.exit_reason"] == "completed" and turn["gen_ai.usage.output_tokens"] == 35
    calls = sorted((s for s in every if s["name"] == "chat scripted-1"), key=lambda s: s["start"])
    assert [c["gen_ai.usage.input_tokens"] for c in calls] == [220, 200]  # the cache's reads counted in, as said
    assert calls[0]["gen_ai.usage.cache_read.input_tokens"] == 100 and "gen_ai.usage.cache_read.input_tokens" \
        not in calls[1]
    assert calls[0]["gen_ai.provider.name"] == "scripted" and calls[0]["gen_ai.request.model"] == "scripted-1"
    assert calls[0]["hermes.tool_calls"] == ["read_file", "read_file"] and calls[1]["output.value"] == "You need milk."
    assert calls[0]["end"] <= min(s["start"] for s in every if s["name"].startswith("execute_tool"))
    assert read["gen_ai.tool.call.id"] and read["gen_ai.tool.name"] == "read_file" and read["status"] == 0
    assert "buy milk" in read["gen_ai.tool.call.result"] and json.loads(read["input.value"]) == {"path": str(notes)}
    assert failed["status"] == 2 and failed["error.type"]  # STATUS_CODE_ERROR
    assert SECRET not in json.dumps(every) and "MY_SERVICE_API_KEY" in failed["gen_ai.tool.call.arguments"]
    checked = {c["name"]: c for c in json.loads(hermes("doctor", "--json").stdout)}["tracing"]  # online: one export
    assert checked["status"] == "ok" and checked["detail"].endswith("/v1/traces (it answered)"), checked


def test_without_capture_content_no_text_leaves_and_langfuse_keys_send_there(hermes, hermes_home, tmp_path, receiver):
    """hermes-agent's Langfuse keys: the spans go to Langfuse's OpenTelemetry endpoint with its basic auth."""
    env = {"HERMES_LANGFUSE_PUBLIC_KEY": "pk-lf-1", "HERMES_LANGFUSE_SECRET_KEY": "sk-lf-2",
           "HERMES_LANGFUSE_BASE_URL": receiver.url + "/"}
    out = _run(hermes, hermes_home, tmp_path, ["secret plans"], {}, env=env, prompt="my plans")
    assert out.returncode == 0, out.stderr
    assert {path for path, _, _ in receiver.posts} == {"/api/public/otel/v1/traces"}
    assert {headers["authorization"] for _, headers, _ in receiver.posts} == {"Basic cGstbGYtMTpzay1sZi0y"}
    spans = receiver.spans()
    assert sorted(s["name"] for s in spans) == ["chat scripted-1", "invoke_agent hermes"]
    assert "plans" not in json.dumps(spans)  # neither the prompt nor the answer


def test_an_endpoint_nobody_answers_is_one_line_and_the_answer_is_still_given(hermes, hermes_home, tmp_path):
    from tests.conftest import free_port

    started = time.monotonic()
    nobody = {"tracing": {"otlp_endpoint": f"http://127.0.0.1:{free_port()}"}}
    out = _run(hermes, hermes_home, tmp_path, ["done"], nobody)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr
    said = [line for line in out.stderr.splitlines() if "tracing" in line]
    assert len(said) == 1 and said[0].startswith("hermes: ") and "spans not sent" in said[0], out.stderr
    assert "Traceback" not in out.stderr and time.monotonic() - started < 15
    doctor = hermes("doctor", "--json")
    checked = {c["name"]: c for c in json.loads(doctor.stdout)}["tracing"]
    assert checked["status"] == "fail" and checked["detail"].endswith("nothing listens there (connection refused)")
    assert "Traceback" not in doctor.stderr and "Transient" not in doctor.stderr
    assert "spans not sent" not in doctor.stderr


def test_without_the_sdk_a_configured_endpoint_is_one_line_and_a_doctor_failure(hermes, hermes_home, tmp_path):
    shadow = tmp_path / "shadow" / "opentelemetry" / "sdk"  # the namespace package's sdk portion, found first
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named opentelemetry.sdk')\n")
    import os

    from tests.conftest import ROOT

    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "shadow"), str(ROOT)])}
    out = _run(hermes, hermes_home, tmp_path, ["done"], {"tracing": {"otlp_endpoint": "http://127.0.0.1:9"}}, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr
    said = [line for line in out.stderr.splitlines() if "tracing" in line]
    assert said == ["hermes: WARNING: tracing: no spans are sent (No module named opentelemetry.sdk): "
                    "pip install 'hermes-kernel[tracing]'"], out.stderr
    doctor = hermes("doctor", "--offline", "--json", env=env)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert checks["tracing"]["status"] == "fail"
    assert "pip install 'hermes-kernel[tracing]'" in checks["tracing"]["detail"]


def test_a_delegated_task_is_in_its_parents_trace(hermes, hermes_home, tmp_path, receiver):
    script = [{"tool_calls": [["delegate_task", {"goal": "count the files"}]]}, "three files"]  # each agent's own
    out = _run(hermes, hermes_home, tmp_path, script, {"tracing": {"otlp_endpoint": receiver.url}}, prompt="count")
    assert out.returncode == 0, out.stderr
    every = receiver.spans()
    parent = next(s for s in every if s["name"] == "invoke_agent hermes" and s["parent"] == "")
    child = next(s for s in every if s["name"] == "invoke_agent hermes" and s is not parent)
    assert child["parent"] == parent["id"] and child["session.id"] != parent["session.id"]
    assert {s["trace"] for s in every} == {parent["trace"]} and len(every) == 8
    assert sum(s["parent"] == child["id"] for s in every) == 3  # its two model calls and its (refused) delegation
