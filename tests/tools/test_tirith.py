"""tirith, the command scanner, asked about each terminal command when it is installed (the real binary, fetched by
the test setup script from the npm registry): a command it flags is asked about (nobody answers in hermes run: not
run), its rule key in command_allowlist lets it run, an unflagged one runs; a tirith missing or hanging lets commands
run unless security.tirith_fail_open is false; hermes doctor says which."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

TIRITH = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hermes-tests/tirith-0.4.2/package/bin/tirith"
FLAGGED = "echo http://xn--pple-43d.com"  # a punycode domain dressed as apple.com; echoing it does nothing


def results(hermes, tmp_path, config: dict, *commands: str) -> list:
    (Path(os.environ["HERMES_HOME"]) / "config.yaml").write_text(yaml.safe_dump(config))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["terminal", {"command": c}] for c in commands]}, "done"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "-t", "terminal", "--json", "go")
    assert out.returncode == 0, out.stderr
    return [m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]


@pytest.mark.skipif(not TIRITH.exists(), reason="tirith was not fetched (the test setup script)")
def test_a_command_tirith_flags_is_asked_about_and_its_rule_key_lets_it_run(hermes, tmp_path):
    flagged, plain = results(hermes, tmp_path, {"security": {"tirith_path": str(TIRITH)}}, FLAGGED, "echo fine")
    assert "tirith: Punycode domain detected (high)" in flagged and "xn--pple-43d" not in json.loads(plain)["output"]
    assert "http://xn--pple-43d.com\n" not in flagged  # not run: nobody was there to say yes
    assert json.loads(plain)["output"] == "fine\n"
    allowed, = results(hermes, tmp_path, {"security": {"tirith_path": str(TIRITH)},
                                          "command_allowlist": ["tirith:punycode_domain"]}, FLAGGED)
    assert json.loads(allowed)["output"] == "http://xn--pple-43d.com\n"
    assert f"ok    tirith    {TIRITH} scans each terminal command" in hermes("doctor", "--offline").stdout
    off, = results(hermes, tmp_path, {"security": {"tirith_path": str(TIRITH), "tirith_enabled": False}}, FLAGGED)
    assert json.loads(off)["output"] == "http://xn--pple-43d.com\n"


def test_a_missing_or_hanging_tirith_fails_open_unless_told_otherwise(hermes, tmp_path):
    hanging = tmp_path / "tirith"
    hanging.write_text("#!/bin/sh\nsleep 30\n")
    hanging.chmod(0o755)
    ran, = results(hermes, tmp_path, {"security": {"tirith_path": str(hanging), "tirith_timeout": 0.5}}, "echo a")
    assert json.loads(ran)["output"] == "a\n"
    asked, = results(hermes, tmp_path, {"security": {"tirith_path": str(hanging), "tirith_timeout": 0.5,
                                                     "tirith_fail_open": False}}, "echo a")
    assert "tirith did not answer within 0.5 s and security.tirith_fail_open is false" in asked
    asked, = results(hermes, tmp_path, {"security": {"tirith_path": str(tmp_path / "nowhere"),
                                                     "tirith_fail_open": False}}, "echo a")
    assert "tirith, the command scanner, is not installed" in asked
    assert "is not found and security.tirith_fail_open is false: every terminal command is asked about" in hermes(
        "doctor", "--offline").stdout
