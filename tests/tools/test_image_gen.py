"""The image-gen plugin through `hermes run`: the real openai SDK asks the wire-protocol server's images endpoint
(image_gen.base_url) for a picture, which is kept in the data folder; an endpoint's refusal is the tool's one-line
error; without the key the tool is not offered."""

from __future__ import annotations

import base64
import json

from plugins_providers.testserver import error, reply
from tests.providers.test_images import PNG


def calls(hermes, tmp_path, steps, env):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*steps, "done"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "draw", env=env)
    assert out.returncode == 0, out.stderr
    return [m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]


def test_a_picture_is_made_kept_and_its_path_returned(hermes, hermes_home, wire_server, tmp_path):
    (hermes_home / "config.yaml").write_text(f"image_gen:\n  base_url: {wire_server.openai_url}\n")
    wire_server.push(reply(base64.b64encode(PNG).decode()), error(400, message="Your request was rejected by the "
                                                                               "safety system."))
    env = {"OPENAI_API_KEY": "sk-images-test"}
    made, refused = calls(hermes, tmp_path, [
        {"tool_calls": [["image_generate", {"prompt": "A red fox in the snow", "aspect_ratio": "landscape"}]]},
        {"tool_calls": [["image_generate", {"prompt": "something refused"}]]}], env)
    made = json.loads(made)
    assert made["model"] == "gpt-image-1" and made["size"] == "1536x1024" and made["bytes"] == len(PNG)
    assert made["path"].startswith(str(hermes_home / "generated_images")) and made["path"].endswith("-a-red-fox-in-the-snow.png")
    assert open(made["path"], "rb").read() == PNG
    [asked, _] = wire_server.requests
    assert asked.path == "/v1/images/generations" and asked.headers["authorization"] == "Bearer sk-images-test"
    assert {k: asked.body[k] for k in ("model", "prompt", "size", "n")} == {
        "model": "gpt-image-1", "prompt": "A red fox in the snow", "size": "1536x1024", "n": 1}
    assert json.loads(refused)["error"] == ("image_generate: the images endpoint said 400: Your request was rejected "
                                            "by the safety system.")


def test_without_its_key_the_tool_is_not_offered(hermes):
    listed = json.loads(hermes("tools", "list", "--json", env={"OPENAI_API_KEY": ""}).stdout)
    rows = listed if isinstance(listed, list) else listed["tools"]
    [row] = [r for r in rows if r["name"] == "image_generate"]
    assert row["offered"] is False
