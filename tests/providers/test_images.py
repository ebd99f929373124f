"""Images in the user's message (`hermes run --image`, plugins.images) through the real SDKs over the wire: a model
known to see gets the pixels in its API's own shape; another gets where the image is kept, for vision_analyze."""

from __future__ import annotations

import base64
import json

import pytest

from plugins_providers.testserver import error, reply
from tests.conftest import ROOT
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


@pytest.mark.parametrize("api_mode, model", [("chat_completions", "gpt-4o-mini"), ("codex_responses", "gpt-5.1"),
                                             ("anthropic_messages", "claude-sonnet-4-5")])
def test_a_model_that_sees_gets_the_image_in_its_apis_shape(hermes, wire_server, cli_env, hermes_home, tmp_path,
                                                            api_mode, model):  # noqa: F811
    (tmp_path / "dot.jpg").write_bytes(PNG)  # a PNG whatever its name says
    url = wire_server.url if api_mode == "anthropic_messages" else wire_server.openai_url
    wire_server.push(reply("A red dot."))
    out = hermes("run", "--base-url", url, "--api-mode", api_mode, "-m", model, "--image", tmp_path / "dot.jpg",
                 "what is this?", env={**cli_env, **KEYS})
    assert out.returncode == 0 and out.stdout == "A red dot.\n", out.stderr
    (request,) = wire_server.requests
    data = base64.b64encode(PNG).decode()
    sent = (request.body.get("messages") or request.body.get("input"))[-1]
    assert sent["role"] == "user"
    if api_mode == "chat_completions":
        assert sent["content"] == [{"type": "text", "text": "what is this?"},
                                   {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}]
    elif api_mode == "codex_responses":
        assert sent["content"] == [{"type": "input_text", "text": "what is this?"},
                                   {"type": "input_image", "image_url": f"data:image/png;base64,{data}"}]
    else:
        assert sent["content"] == [{"type": "text", "text": "what is this?"},
                                   {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                "data": data}}]
    # stored as sent: a resumed conversation shows the model the image again
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    [stored] = [m for m in json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"]
                if m["role"] == "user"]
    assert stored["content"][1]["image_url"]["url"] == f"data:image/png;base64,{data}"
    exported = hermes("sessions", "export", session).stdout
    assert "### You\n\nwhat is this?\n\n*(an image: image/png, 70 bytes)*\n" in exported


def test_a_model_not_known_to_see_gets_where_the_image_is_kept_unless_config_says_native(
        hermes, wire_server, cli_env, hermes_home, tmp_path):  # noqa: F811
    (tmp_path / "dot.png").write_bytes(PNG)
    run = ("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "llama3.1:8b",
           "--image", tmp_path / "dot.png", "--image", tmp_path / "dot.png", "what is this?")
    wire_server.push(reply("I cannot see it."), reply("A dot."))
    out = hermes(*run, env={**cli_env, **KEYS})
    assert out.returncode == 0, out.stderr
    kept = next((hermes_home / "images").iterdir())
    assert kept.read_bytes() == PNG and kept.suffix == ".png" and kept.stat().st_mode & 0o777 == 0o600
    where = f"[an image the user attached: {kept} (the vision_analyze tool shows it to a model that sees)]"
    assert wire_server.requests[0].body["messages"][-1]["content"] == f"what is this?\n\n{where}\n\n{where}"
    (hermes_home / "config.yaml").write_text("agent:\n  image_input_mode: native\n")  # hermes-agent's key
    assert hermes(*run, env={**cli_env, **KEYS}).returncode == 0
    assert [part["type"] for part in wire_server.requests[1].body["messages"][-1]["content"]] == [
        "text", "image_url", "image_url"]
    # a data folder where the image cannot be kept: the turn goes on, the model told
    (hermes_home / "config.yaml").write_text("agent:\n  image_input_mode: text\n")
    (hermes_home / "images").rename(tmp_path / "kept")
    (hermes_home / "images").write_text("a file where the folder goes")
    wire_server.push(reply("Noted."))
    assert hermes(*run, env={**cli_env, **KEYS}).returncode == 0
    assert wire_server.requests[2].body["messages"][-1]["content"].endswith(
        "[an image the user attached could not be kept here: File exists]")


def test_a_file_that_is_no_image_is_said_before_any_request(hermes, wire_server, cli_env, tmp_path):  # noqa: F811
    (tmp_path / "notes.png").write_text("just text")
    with open(tmp_path / "huge.png", "wb") as huge:
        huge.truncate(21 * 2**20)
    run = ("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "gpt-4o", "hi")
    for image, said in (("gone.png", "gone.png: No such file or directory"),
                        ("notes.png", "notes.png: not an image a model takes (PNG, JPEG, GIF or WebP)"),
                        ("huge.png", "huge.png: 21.0 MB; an image may have at most 20 MB")):
        out = hermes(*run, "--image", tmp_path / image, env={**cli_env, **KEYS})
        assert out.returncode == 2 and said in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert wire_server.requests == []


def test_a_model_that_refuses_images_says_what_to_set(hermes, wire_server, cli_env, tmp_path):  # noqa: F811
    (tmp_path / "dot.png").write_bytes(PNG)
    wire_server.push(error(400, message="Invalid content type. image_url is only supported by certain models."))
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "gpt-4o",
                 "--image", tmp_path / "dot.png", "what is this?", env={**cli_env, **KEYS})
    assert out.returncode == 1 and "image_url is only supported by certain models. (for a model that takes no " \
        "images: agent.image_input_mode: text gives it where they are kept, for vision_analyze)" in out.stderr, \
        out.stderr


def test_a_prompt_of_bytes_that_are_not_utf8_goes_with_an_image_as_text_too(hermes, wire_server, cli_env,
                                                                            tmp_path):  # noqa: F811
    """argv's bytes that are not UTF-8 reach Python as lone surrogates: the kernel cleans a string message, but a
    message of parts stopped the turn at the store (SQLite takes no lone surrogate)."""
    import os

    (tmp_path / "dot.png").write_bytes(PNG)
    wire_server.push(reply("A dot."))
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "gpt-4o",
                 "--image", tmp_path / "dot.png", os.fsdecode(b"caf\xe9?"), env={**cli_env, **KEYS})
    assert out.returncode == 0 and out.stdout == "A dot.\n", out.stderr
    assert wire_server.requests[0].body["messages"][-1]["content"][0] == {"type": "text", "text": "caf\ufffd?"}


def test_an_images_url_is_the_providers_to_fetch_or_vision_analyzes(hermes, wire_server, cli_env):  # noqa: F811
    url = "https://example.com/cat.png"
    wire_server.push(reply("A cat."), reply("I read where it is."))
    out = hermes("run", "--base-url", wire_server.url, "--api-mode", "anthropic_messages", "-m", "claude-haiku-4-5",
                 "--image", url, "what is this?", env={**cli_env, **KEYS})
    assert out.returncode == 0, out.stderr
    assert wire_server.requests[0].body["messages"][-1]["content"][1] == {"type": "image", "source": {"type": "url",
                                                                                                     "url": url}}
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "llama3.1:8b",
                 "--image", url, "what is this?", env={**cli_env, **KEYS})
    assert out.returncode == 0, out.stderr
    assert wire_server.requests[1].body["messages"][-1]["content"] == \
        f"what is this?\n\n[an image the user attached: {url} (the vision_analyze tool shows it to a model that sees)]"


def without_pillow(tmp_path, env: dict) -> dict:
    """``env`` with a PIL first on the path that cannot be imported, as when Pillow is not installed."""
    import os

    shadow = tmp_path / "no-pillow" / "PIL"
    shadow.mkdir(parents=True, exist_ok=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'PIL'\", name='PIL')\n")
    paths = [str(shadow.parent), env.get("PYTHONPATH") or os.environ.get("PYTHONPATH", ""), str(ROOT)]
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, paths))}


def test_an_image_over_claudes_limit_is_left_out_with_a_note_not_sent_to_fail_every_turn(hermes, wire_server, cli_env,
                                                                                        tmp_path):  # noqa: F811
    """Without Pillow nothing can shrink it, and the Messages API refuses an image whose base64 is over 5 MB, in this
    request and every later one of the conversation (the history keeps it): Claude is told it was left out; the
    next turn goes through too."""
    big = tmp_path / "photo.png"
    big.write_bytes(PNG + b"\0" * (4 * 2**20))  # a 4 MB file: 5.3 MB as base64
    wire_server.push(reply("It was too big."), reply("Still here."))
    args = ("--base-url", wire_server.url, "--api-mode", "anthropic_messages", "-m", "claude-sonnet-4-5")
    out = hermes("run", *args, "--image", big, "what is this?", env=without_pillow(tmp_path, {**cli_env, **KEYS}))
    assert out.returncode == 0 and out.stdout == "It was too big.\n", out.stderr
    assert out.stderr.count("is not sent to the Messages API, which takes 5 MB at most") == 1
    later = hermes("run", *args, "-c", "and now?", env=without_pillow(tmp_path, {**cli_env, **KEYS}))
    assert later.returncode == 0 and later.stdout == "Still here.\n", later.stderr
    for request in wire_server.requests:
        sent = request.body["messages"][0]["content"]
        assert [block["type"] for block in sent] == ["text", "text"]
        assert sent[1]["text"] == "[an image the user attached was left out: 5.3 MB as base64, over the 5 MB this " \
                                  "API takes; ask for a smaller one]"


def test_a_photo_too_large_for_claude_is_shrunk_to_fit_with_pillow(hermes, wire_server, cli_env, tmp_path):  # noqa: F811
    """With Pillow (`hermes-kernel[images]`), an image over Claude's 5 MB or 8000 pixels is sent as a JPEG of at most
    2048 pixels a side, turned as the photo's EXIF says; an image that fits goes as it is."""
    import io
    import random

    from PIL import Image

    noise = random.Random(7).randbytes(2400 * 1800 * 3)  # incompressible: about 13 MB as PNG
    photo = Image.frombytes("RGB", (2400, 1800), noise)
    exif = photo.getexif()
    exif[0x0112] = 6  # taken turned: shown 90 degrees round
    photo.save(tmp_path / "photo.png", exif=exif)
    assert (tmp_path / "photo.png").stat().st_size > 5 * 2**20
    wire_server.push(reply("A noisy photo."), reply("A dot."))
    args = ("--base-url", wire_server.url, "--api-mode", "anthropic_messages", "-m", "claude-sonnet-4-5")
    for image in (tmp_path / "photo.png", tmp_path / "dot.png"):
        (tmp_path / "dot.png").write_bytes(PNG)
        out = hermes("run", *args, "--image", image, "what is this?", env={**cli_env, **KEYS})
        assert out.returncode == 0 and not out.stderr, out.stderr
    shrunk, small = (r.body["messages"][0]["content"][1]["source"] for r in wire_server.requests)
    assert shrunk["media_type"] == "image/jpeg" and len(shrunk["data"]) <= 5 * 2**20
    assert Image.open(io.BytesIO(base64.b64decode(shrunk["data"]))).size == (1536, 2048)  # upright, long side 2048
    assert small == {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}


def test_an_api_clients_image_too_large_is_shrunk_as_it_arrives():
    """hermes serve's and the editors' images (plugins.images.client_content) fit the same way as a file's."""
    import io
    import random

    from PIL import Image

    from plugins.images import client_content

    big = io.BytesIO()
    Image.frombytes("RGB", (9000, 300), random.Random(3).randbytes(9000 * 300 * 3)).save(big, "PNG")  # over 8000 wide
    url = f"data:image/png;base64,{base64.b64encode(big.getvalue()).decode()}"
    parts = client_content([{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": url}}])
    sent = parts[1]["image_url"]["url"]
    assert sent.startswith("data:image/jpeg;base64,")
    assert Image.open(io.BytesIO(base64.b64decode(sent.partition(",")[2]))).size == (2048, 68)
    small = f"data:image/png;base64,{base64.b64encode(PNG).decode()}"
    assert client_content([{"type": "image_url", "image_url": small}])[0]["image_url"]["url"] == small
