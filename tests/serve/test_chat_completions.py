"""`hermes serve`'s OpenAI-compatible chat completions, driven by the real openai SDK and plain HTTP."""

import json
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import openai
import pytest

from plugins_providers.testserver import reply
from tests.conftest import hermes_command


def post(served, path, body, headers=None, raw=False):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(served.url + path, data=data, method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return response.status, dict(response.headers), text if raw else json.loads(text)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read().decode())


def test_chat_completions_answer_as_openai_does_streamed_and_not(serve, wire_server):
    served = serve()
    client = served.client()
    wire_server.push(reply("Hello from hermes."))
    raw = client.chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
    completion = raw.parse()
    assert completion.choices[0].message.content == "Hello from hermes."
    assert completion.choices[0].finish_reason == "stop" and completion.object == "chat.completion"
    assert raw.headers["x-hermes-session-id"]
    sent = wire_server.requests[0].body["messages"]
    assert sent[0]["role"] == "system" and "Be brief." in sent[0]["content"] and sent[-1]["content"] == "hi"

    wire_server.push(reply("streamed answer"))
    stream = client.chat.completions.create(model="hermes-agent", stream=True,
                                            messages=[{"role": "user", "content": "stream it"}])
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed answer"
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_a_clients_temperature_top_p_and_token_limit_reach_the_model(serve, wire_server):
    """Clients set them (Open WebUI's sliders, an SDK's max_tokens); the server dropped them, and every answer came
    with the configured sampling."""
    served = serve()
    client = served.client()
    wire_server.push(reply("one"), reply("two"), reply("three"))
    client.chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": "hi"}],
                                   temperature=0.2, top_p=0.9, max_tokens=64)
    client.chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": "hi"}],
                                   max_completion_tokens=32)
    client.responses.create(model="hermes-agent", input="hi", temperature=1.5, max_output_tokens=16)
    sent = [r.body for r in wire_server.requests]
    assert (sent[0]["temperature"], sent[0]["top_p"], sent[0]["max_tokens"]) == (0.2, 0.9, 64)
    assert sent[1]["max_tokens"] == 32 and "temperature" not in sent[1]
    assert (sent[2]["temperature"], sent[2]["max_tokens"]) == (1.5, 16)


def test_a_clients_reasoning_effort_reaches_a_model_that_takes_it(serve, wire_server):
    """Open WebUI's "Reasoning Effort" and the SDKs send reasoning_effort (chat completions) or reasoning.effort
    (Responses); over agent.reasoning_effort, and said as the model's API says it (a model that takes none gets
    none)."""
    served = serve(config={"model": "o3", "agent": {"reasoning_effort": "medium"}})
    client = served.client()
    wire_server.push(reply("one"), reply("two"), reply("three"))
    client.chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": "hi"}],
                                   reasoning_effort="high")
    client.responses.create(model="hermes-agent", input="hi", reasoning={"effort": "minimal"})
    client.chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": "hi"}])
    assert [r.body["reasoning_effort"] for r in wire_server.requests] == ["high", "low", "medium"]
    wire_server.push(reply("four"))
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}],
                                   reasoning_effort="high")  # the client's model, which takes no effort
    assert "reasoning_effort" not in wire_server.requests[-1].body


def test_a_clients_image_reaches_the_model_in_its_apis_shape_or_is_kept_for_one_that_does_not_see(serve, wire_server,
                                                                                                  hermes_home):
    """Open WebUI, LibreChat and the SDKs send a pasted image as an image_url part; the server kept the text parts
    and dropped the image without a word."""
    import base64

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
                           "rkJggg==")
    data = base64.b64encode(png).decode()
    asked = [{"type": "text", "text": "what is this?"},
             {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}", "detail": "low"}}]
    served = serve(config={"model": "claude-sonnet-4-5", "base_url": wire_server.url, "api_mode": "anthropic_messages"},
                   env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    client = served.client()
    wire_server.push(reply("A dot."), reply("Still a dot."))
    assert client.chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": asked}]) \
        .choices[0].message.content == "A dot."
    assert wire_server.requests[0].body["messages"][-1]["content"] == [  # its type told by its bytes: a PNG
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]
    client.responses.create(model="hermes-agent", input=[{"role": "user", "content": [
        {"type": "input_text", "text": "and now?"}, {"type": "input_image", "image_url": "https://example.com/a.png"}]}])
    assert wire_server.requests[1].body["messages"][-1]["content"] == [
        {"type": "text", "text": "and now?"}, {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]
    served.process.terminate()
    served.process.wait(timeout=30)
    # a model not known to see: the image is kept in the data folder and the model told where, for vision_analyze
    served = serve()
    wire_server.push(reply("I see a path."))
    served.client().chat.completions.create(model="hermes-agent", messages=[
        {"role": "user", "content": [asked[1]]}])  # an image alone is a message
    kept = next((hermes_home / "images").iterdir())
    assert kept.read_bytes() == png
    assert wire_server.requests[2].body["messages"][-1]["content"] == \
        f"[an image the user attached: {kept} (the vision_analyze tool shows it to a model that sees)]"
    status, _, said = post(served, "/v1/chat/completions", {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}]}]})
    assert status == 400 and said["error"]["message"] == \
        "messages[0].content: part 1: its data: URL is not an image a model takes (PNG, JPEG, GIF or WebP)"
    assert len(wire_server.requests) == 3


def test_a_clients_image_detail_reaches_an_openai_model(serve, wire_server):
    served = serve(config={"model": "gpt-4o"})
    wire_server.push(reply("A dot."))
    image = {"url": "https://example.com/dot.png", "detail": "low"}
    served.client().chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": [
        {"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": image}]}])
    assert wire_server.requests[0].body["messages"][-1]["content"] == [
        {"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": image}]


def test_a_stateless_request_brings_its_history_and_a_session_goes_on_with_the_header(serve, wire_server):
    served = serve(key="k" * 32)
    client = served.client()
    wire_server.push(reply("Paris."), reply("About 2 million."), reply("Still Paris."), reply("Now too."))
    history = [{"role": "user", "content": "Capital of France?"}, {"role": "assistant", "content": "Paris."},
               {"role": "user", "content": "Its population?"}]
    client.chat.completions.create(model="hermes-agent", messages=history[:1])
    client.chat.completions.create(model="hermes-agent", messages=history)
    assert [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] != "system"] == \
        ["Capital of France?", "Paris.", "Its population?"]
    first = client.chat.completions.with_raw_response.create(model="hermes-agent", messages=history[:1])
    session = first.headers["x-hermes-session-id"]
    again = client.chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "user", "content": "And now?"}],
        extra_headers={"X-Hermes-Session-Id": session})
    assert again.headers["x-hermes-session-id"] == session
    assert [m["content"] for m in wire_server.requests[3].body["messages"] if m["role"] != "system"] == \
        ["Capital of France?", "Still Paris.", "And now?"]  # the stored session's history, not the body's


def test_the_key_and_openai_shaped_errors(serve, wire_server):
    served = serve(key="s3cret-key-of-some-length")
    with pytest.raises(openai.AuthenticationError) as caught:
        served.client(api_key="wrong").chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body["type"] == "authentication_error"
    auth = {"Authorization": f"Bearer {served.key}"}
    status, _, body = post(served, "/v1/chat/completions", b"{not json", auth)
    assert status == 400 and body["error"]["type"] == "invalid_request_error" and "not JSON" in body["error"]["message"]
    for path, text in (("/v1/chat/completions", b'{"messages": [{"role": "user", "content": "hi \\ud800"}]}'),
                       ("/v1/responses", b'{"input": "x\\udfff"}')):  # was 500s: the store's or the server's
        status, _, body = post(served, path, text, auth)
        assert status == 400 and "lone surrogate escape" in body["error"]["message"], body
    status, _, body = post(served, "/v1/chat/completions", {"messages": [{"role": "user", "content": "\U0001f600"}]},
                           auth)  # a surrogate pair, as json.dumps escapes an emoji, is text
    assert status == 200, body
    for path, text, param in (("/v1/chat/completions", {"model": 5, "messages": [{"role": "user", "content": "hi"}]},
                                "model"), ("/v1/responses", {"model": ["gpt"], "input": "hi"}, "model"),
                               ("/v1/responses", {"instructions": 5, "input": "hi"}, "instructions")):  # was echoed
        status, _, body = post(served, path, text, auth)
        assert status == 400 and body["error"]["param"] == param and "must be a string" in body["error"]["message"]
    status, _, body = post(served, "/v1/chat/completions", {"messages": []}, auth)
    assert status == 400 and body["error"]["param"] == "messages"
    status, _, body = post(served, "/v1/chat/completions", {"messages": [{"role": "assistant", "content": "x"}]}, auth)
    assert status == 400 and "the last message must be the user's" in body["error"]["message"]
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:  # refused before it is sent
        sock.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {served.key}\r\n"
                     "Content-Type: application/json\r\nContent-Length: 2000000\r\n\r\n".encode())
        answer = b""
        while b"bytes" not in answer:
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
        answer = answer.decode()
    assert answer.startswith("HTTP/1.1 413") and "the request body is over 1000000 bytes" in answer
    status, _, body = post(served, "/v1/nope", {}, auth)
    assert status == 404 and body["error"]["code"] == "not_found"
    models = served.client().models.list()
    assert [m.id for m in models.data] == ["hermes-agent"]
    caps = json.loads(urllib.request.urlopen(urllib.request.Request(served.url + "/v1/capabilities",
                                                                    headers=auth)).read())
    assert caps["auth"]["required"] is True and caps["features"]["chat_completions_streaming"] is True
    assert json.loads(urllib.request.urlopen(served.url + "/health").read())["status"] == "ok"  # open


def test_a_session_header_without_a_key_is_refused_and_no_key_means_loopback_only(serve, wire_server, hermes_home):
    served = serve()
    status, _, body = post(served, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]},
                           {"X-Hermes-Session-Id": "abc"})
    assert status == 403 and "API_SERVER_KEY" in body["error"]["message"]
    out = subprocess.run(hermes_command() + ["serve", "--host", "0.0.0.0", "--port", "0"], capture_output=True,
                         text=True, timeout=60, env={**__import__("os").environ, "HERMES_HOME": str(hermes_home)})
    assert out.returncode == 2 and out.stderr.startswith("hermes: error: refusing to listen on 0.0.0.0 without a key")


def test_tool_calls_stream_as_progress_events_and_run_on_the_server(serve, wire_server, tmp_path):
    note = tmp_path / "note.txt"
    note.write_text("the secret word is tangerine\n")
    served = serve()
    wire_server.push(reply(tool_calls=[("read_file", {"path": str(note)})]), reply("It says tangerine."))
    status, headers, text = post(served, "/v1/chat/completions",
                                 {"stream": True, "messages": [{"role": "user", "content": "read it"}]}, raw=True)
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = [block for block in text.split("\n\n") if block.strip()]
    progress = [json.loads(b.split("data: ", 1)[1]) for b in events if b.startswith("event: hermes.tool.progress")]
    assert [(p["tool"], p["status"]) for p in progress] == [("read_file", "running"), ("read_file", "completed")]
    assert events[-1] == "data: [DONE]"
    tool_result = [m for m in wire_server.requests[1].body["messages"] if m["role"] == "tool"][0]["content"]
    assert "tangerine" in tool_result


@pytest.mark.parametrize("limit", [{"api_server": {"max_concurrent_runs": 4}},
                                   {"gateway": {"api_server": {"max_concurrent_runs": 4}}}])  # hermes-agent's name
def test_conversations_run_side_by_side_and_past_the_limit_is_429(serve, wire_server, limit):
    served = serve(config=limit)
    for _ in range(4):
        wire_server.push(reply("slow answer", delay=1.0))
    client = served.client()
    answers, errors = [], []

    def ask():
        try:
            answers.append(client.chat.completions.create(
                model="hermes-agent", messages=[{"role": "user", "content": "hi"}]).choices[0].message.content)
        except openai.APIStatusError as exc:
            errors.append(exc.status_code)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    started = time.monotonic()
    for t in threads:
        t.start()
    deadline = time.monotonic() + 20
    while len(wire_server.requests) < 4 and time.monotonic() < deadline:  # all four are with the model
        time.sleep(0.02)
    status, _, body = post(served, "/v1/chat/completions", {"messages": [{"role": "user", "content": "one more"}]})
    for t in threads:
        t.join(30)
    assert answers == ["slow answer"] * 4 and not errors
    assert time.monotonic() - started < 3.5  # side by side: about one model delay, not four
    assert status == 429 and body["error"]["code"] == "too_many_runs"


def test_a_client_that_goes_away_mid_stream_interrupts_its_agent(serve, wire_server):
    served = serve()
    wire_server.push(reply(tool_calls=[("terminal", {"command": "sleep 3"})]), reply("never read"))
    request = urllib.request.Request(served.url + "/v1/chat/completions", method="POST",
                                     data=json.dumps({"stream": True, "messages": [
                                         {"role": "user", "content": "wait"}]}).encode(),
                                     headers={"Content-Type": "application/json"})
    response = urllib.request.urlopen(request, timeout=30)
    response.readline()  # the role chunk: the turn is running
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(wire_server.requests) < 1:
        time.sleep(0.05)
    time.sleep(1.0)  # the tool is running
    response.close()
    time.sleep(5.0)  # past the tool's 3 s: a turn still running would have called the model again
    assert len(wire_server.requests) == 1  # interrupted: no second model call after the tool


def test_responses_chain_with_previous_response_id_and_are_kept_for_get_and_delete(serve, wire_server, tmp_path):
    note = tmp_path / "note.txt"
    note.write_text("blue\n")
    served = serve()
    client = served.client()
    wire_server.push(reply(tool_calls=[("read_file", {"path": str(note)})]), reply("The note says blue."),
                     reply("You asked about the note."), reply("A branch."))
    first = client.responses.create(model="hermes-agent", input="What does the note say?", instructions="Be terse.")
    assert first.output_text == "The note says blue." and first.status == "completed"
    kinds = [item.type for item in first.output]
    assert kinds == ["function_call", "function_call_output", "message"]
    assert first.output[0].name == "read_file" and "blue" in first.output[1].output
    raw = client.responses.with_raw_response.create(model="hermes-agent", input="What did I ask?",
                                                    previous_response_id=first.id)
    second, session = raw.parse(), raw.headers["x-hermes-session-id"]
    assert second.output_text == "You asked about the note." and second.previous_response_id == first.id
    sent = wire_server.requests[2].body["messages"]
    assert sent[0]["role"] == "system" and "Be terse." in sent[0]["content"]  # the instructions carry on
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "assistant", "user"]
    raw = client.responses.with_raw_response.create(model="hermes-agent", input="Again?", previous_response_id=first.id)
    branch = raw.parse()
    assert [m["content"] for m in wire_server.requests[3].body["messages"] if m["role"] == "user"] == \
        ["What does the note say?", "Again?"]  # a branch from the first, without the second
    # the chain is one stored session, each message once; the branch a session of its own
    with urllib.request.urlopen(f"{served.url}/api/sessions/{session}/messages", timeout=30) as answer:
        stored = json.loads(answer.read())["data"]
    assert [m["content"] for m in stored if m["role"] == "user"] == ["What does the note say?", "What did I ask?"]
    assert raw.headers["x-hermes-session-id"] != session
    # a chain whose session was deleted goes on from the response's own history
    urllib.request.urlopen(urllib.request.Request(f"{served.url}/api/sessions/{session}", method="DELETE"), timeout=30)
    wire_server.push(reply("Still here."))
    assert client.responses.create(model="hermes-agent", input="And now?", previous_response_id=second.id).output_text \
        == "Still here."
    assert [m["content"] for m in wire_server.requests[4].body["messages"] if m["role"] == "user"] == \
        ["What does the note say?", "What did I ask?", "And now?"]
    assert client.responses.retrieve(second.id).output_text == "You asked about the note."
    client.responses.delete(branch.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(branch.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="hermes-agent", input="x", previous_response_id="resp_nope")
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="hermes-agent", input=42)


def test_a_named_conversation_goes_on_from_its_latest_response(serve, wire_server):
    """hermes-agent's `conversation` (a name; OpenAI's SDK sends {"id": ...} too): each response continues the name's
    latest; a new name starts anew; a deleted latest starts it anew; with previous_response_id it is a 400. And its
    conversation_history, the history a stateless client sends."""
    served = serve()
    wire_server.push(reply("Hello Ada."), reply("Your name is Ada."), reply("Who?"), reply("Fresh start."))
    first = post(served, "/v1/responses", {"input": "My name is Ada.", "conversation": "support-1"})[2]
    assert first["conversation"] == {"id": "support-1"} and first["previous_response_id"] is None
    second = post(served, "/v1/responses", {"input": "What is my name?", "conversation": {"id": "support-1"}})[2]
    assert second["previous_response_id"] == first["id"] and second["conversation"] == {"id": "support-1"}
    assert [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] == "user"] == \
        ["My name is Ada.", "What is my name?"]
    post(served, "/v1/responses", {"input": "And my name?", "conversation": "support-2"})
    assert [m["content"] for m in wire_server.requests[2].body["messages"] if m["role"] == "user"] == ["And my name?"]
    urllib.request.urlopen(urllib.request.Request(f"{served.url}/v1/responses/{second['id']}", method="DELETE"))
    fresh = post(served, "/v1/responses", {"input": "Hi again.", "conversation": "support-1"})[2]
    assert fresh["previous_response_id"] is None and len(wire_server.requests[3].body["messages"]) == 2
    wire_server.push(reply("Your name is Bo."))  # hermes-agent's conversation_history: the client keeps the history
    post(served, "/v1/responses", {"input": "My name?", "previous_response_id": first["id"], "conversation_history": [
        {"role": "user", "content": "I am Bo."}, {"role": "assistant", "content": "Hi Bo."}]})
    assert [(m["role"], m["content"]) for m in wire_server.requests[4].body["messages"][1:]] == [
        ("user", "I am Bo."), ("assistant", "Hi Bo."), ("user", "My name?")]  # over previous_response_id
    for body, said in (({"input": "x", "conversation": "support-1", "previous_response_id": first["id"]}, "send one"),
                       ({"input": "x", "conversation": 7}, "must be a conversation's name"),
                       ({"input": "x", "conversation_history": [{"role": "robot"}]}, "must be a list of messages")):
        status, _, refused = post(served, "/v1/responses", body)
        assert status == 400 and said in refused["error"]["message"]


def test_answers_on_a_kept_alive_connection_do_not_wait_for_a_delayed_ack(serve, wire_server):
    import http.client

    served = serve()
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    took = []
    for _ in range(6):
        started = time.perf_counter()
        connection.request("GET", "/v1/models")
        response = connection.getresponse()
        response.read()
        took.append(time.perf_counter() - started)
    connection.close()
    assert sorted(took[1:])[2] < 0.03, took  # 40 ms each when the listening socket did not say it was TCP


def test_a_streamed_response_gives_its_text_tool_calls_and_the_whole_response(serve, wire_server):
    served = serve()
    client = served.client()
    wire_server.push(reply("Let me look. ", tool_calls=[("terminal", {"command": "echo fig"})]), reply("It is fig."),
                     reply("Still fig."))
    events = list(client.responses.create(model="hermes-agent", input="what fruit?", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Let me look. It is fig."
    added = [e.item.type for e in events if e.type == "response.output_item.added"]
    assert added == ["message", "function_call", "function_call_output", "message"]
    final = events[-1].response
    assert final.output_text == "It is fig." and final.status == "completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    follow = client.responses.create(model="hermes-agent", input="again?", previous_response_id=final.id)
    assert follow.output_text == "Still fig."  # a streamed response is stored and continued like any other


def test_the_api_embeds_in_any_asgi_server_without_the_command_line(hermes_home, wire_server):
    import os
    import subprocess
    import sys

    import yaml

    from tests.conftest import ROOT
    from tests.conftest import free_port

    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"model": "gpt-test", "base_url": wire_server.openai_url,
                                                             "api_mode": "chat_completions"}))
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "PYTHONPATH": str(ROOT)}
    check = subprocess.run([sys.executable, "-c", "import sys; from plugins.serve.app import create_app; create_app(); "
                            "print('click' in sys.modules)"], capture_output=True, text=True, env=env, timeout=60)
    assert check.stdout.strip() == "False", check.stderr  # the host and the app, no command line
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "plugins.serve.app:create_app",
                               "--port", str(port), "--log-level", "warning"], env=env)
    try:
        from tests.serve.conftest import Served

        served = Served(server, port, "").wait_healthy()
        wire_server.push(reply("embedded"))
        answer = served.client().chat.completions.create(model="hermes-agent",
                                                         messages=[{"role": "user", "content": "hi"}])
        assert answer.choices[0].message.content == "embedded"
    finally:
        server.terminate()
        server.wait(10)


def test_only_a_servers_agents_call_its_event_hooks(hermes_home):
    from hermes.host.config import load_config
    from hermes.host.plugins import PluginHost
    from plugins.serve.app import Server

    host = PluginHost.discover(load_config())
    owners = lambda: {impl.plugin_name for impl in host.pm.hook.on_stream_delta.get_hookimpls()}  # noqa: E731
    assert "serve-events" not in owners()  # hermes run and chat: a delta under --json is still shown to nobody
    Server(host)
    assert "serve-events" in owners()


def test_pages_of_the_configured_origins_may_call_it_and_others_may_not(serve, wire_server):
    served = serve(key="k" * 32, config={"api_server": {"cors_origins": ["https://chat.example"]}})

    def preflight(origin):
        request = urllib.request.Request(served.url + "/v1/chat/completions", method="OPTIONS", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers)

    status, headers = preflight("https://chat.example")
    assert status == 200 and headers["access-control-allow-origin"] == "https://chat.example"
    status, headers = preflight("https://evil.example")
    assert status == 400 and "access-control-allow-origin" not in {k.lower() for k in headers}
    wire_server.push(reply("hi"))
    answer = served.client(default_headers={"Origin": "https://chat.example"}).chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "user", "content": "hi"}])
    assert answer.headers["access-control-allow-origin"] == "https://chat.example"
    assert "x-hermes-session-id" in answer.headers["access-control-expose-headers"].lower()
