"""The tts plugin's ``text_to_speech`` through `hermes run`: the real openai SDK asks the wire-protocol server's
speech endpoint (tts.openai.base_url) and the audio is kept; a command of the user's speaks through ``sh`` with the
text in a file and its placeholders quoted for where they stand; a refusal, a failing or hanging command and a text
over the limit are each one line; the tool is not offered while tts.provider names a backend not here."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

from plugins.tts.command import render
from plugins_providers.testserver import error, reply

TRICKY = "it's \"quoted\" $HOME `x` \\ and a space"


def results(hermes, tmp_path, calls, env=None):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*({"tool_calls": [["text_to_speech", args]]} for args in calls), "done"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "speak", env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]


def test_the_openai_endpoint_speaks_and_the_audio_is_kept(hermes, hermes_home, wire_server, tmp_path):
    (hermes_home / "config.yaml").write_text(f"tts:\n  provider: openai\n  speed: 1.5\n  openai:\n"
                                             f"    base_url: {wire_server.openai_url}\n    voice: nova\n")
    wire_server.push(reply(base64.b64encode(b"ID3 mp3 bytes").decode()), reply(),
                     error(400, message="Input is not valid for this voice."))
    made, chosen, refused = results(hermes, tmp_path, [{"text": "Hello there, friend"},
                                                       {"text": "Again", "output_path": "out/greeting.wav"},
                                                       {"text": "refused"}], {"OPENAI_API_KEY": "sk-tts-test"})
    assert made["path"].startswith(str(hermes_home / "audio_cache")) and made["path"].endswith("-hello-there-friend.mp3")
    assert open(made["path"], "rb").read() == b"ID3 mp3 bytes" and made["provider"] == "openai"
    assert chosen["path"] == str(tmp_path / "out" / "greeting.wav") and chosen["format"] == "wav"
    assert open(chosen["path"], "rb").read(4) == b"RIFF"  # the server's silent WAV
    first, second, _ = wire_server.requests
    assert first.path == "/v1/audio/speech" and first.headers["authorization"] == "Bearer sk-tts-test"
    assert first.body == {"model": "gpt-4o-mini-tts", "voice": "nova", "input": "Hello there, friend",
                          "response_format": "mp3", "speed": 1.5}
    assert second.body["response_format"] == "wav"
    assert refused["error"] == "text_to_speech: the speech endpoint said 400: Input is not valid for this voice."


def test_a_command_of_the_users_speaks_and_its_failures_are_one_line(hermes, hermes_home, tmp_path):
    speaker = tmp_path / "speak.py"
    speaker.write_text("import sys, time\ntext = open(sys.argv[1], encoding='utf-8').read()\n"
                       "if text.startswith('fail'): sys.exit('no such voice: ' + sys.argv[3])\n"
                       "if text.startswith('hang'): time.sleep(60)\n"
                       "open(sys.argv[2], 'wb').write(b'RIFF' + (sys.argv[3] + '|' + text).encode())\n")
    (hermes_home / "config.yaml").write_text(json.dumps({"tts": {"provider": "mine", "providers": {"mine": {
        "command": f"{sys.executable} {speaker} {{input_path}} \"{{output_path}}\" '{{voice}}'",
        "output_format": "wav", "voice": TRICKY, "timeout": 2, "max_text_length": 50}}}}))
    spoken, long, failed, hung = results(hermes, tmp_path, [
        {"text": TRICKY}, {"text": "x" * 60}, {"text": "fail please"}, {"text": "hang on"}])
    assert spoken["path"].endswith(".wav") and spoken["format"] == "wav" and "note" not in spoken
    assert open(spoken["path"], "rb").read().decode() == f"RIFF{TRICKY}|{TRICKY}"
    assert open(long["path"], "rb").read().decode().endswith("|" + "x" * 50)
    assert long["note"] == "only the first 50 of 60 characters were spoken (the mine backend's limit)"
    assert failed["error"] == f"text_to_speech: the command of tts.providers.mine exited with 1: no such voice: {TRICKY}"
    assert hung["error"] == "text_to_speech: the command of tts.providers.mine took over 2 s and was stopped"


def test_placeholders_reach_the_program_whole_in_every_quoting():
    template = "printf '%s\\n' {voice} '{voice}' \"{voice}\" \"${voice}\" {{voice}}"
    shown = subprocess.run(render(template, {"voice": TRICKY}), shell=True, capture_output=True, text=True,
                           env={"voice": "the shell's"})
    assert shown.stdout.splitlines() == [TRICKY, TRICKY, TRICKY, "the shell's", "{voice}"]


def test_not_offered_while_its_backend_is_not_here(hermes, hermes_home):
    def offered(env=None):
        listed = json.loads(hermes("tools", "list", "--json", env=env).stdout)
        rows = listed if isinstance(listed, list) else listed["tools"]
        return [r["offered"] for r in rows if r["name"] == "text_to_speech"][0]

    assert offered({"OPENAI_API_KEY": ""}) is True  # hermes-agent's default, edge (its package is in the tests')
    (hermes_home / "config.yaml").write_text("tts:\n  provider: elevenlabs\n")
    assert offered({"OPENAI_API_KEY": "sk-x"}) is False  # one of hermes-agent's that are not here
    (hermes_home / "config.yaml").write_text("tts:\n  provider: openai\n")
    assert offered({"OPENAI_API_KEY": "", "VOICE_TOOLS_OPENAI_KEY": ""}) is False
    assert offered({"OPENAI_API_KEY": "", "VOICE_TOOLS_OPENAI_KEY": "sk-voice"}) is True


def test_a_plugins_backend_through_tts_backends_and_an_unknown_name_lists_those_there(make_agent, tmp_path):
    import plugins.tts as tts
    from kernel import hookimpl

    class Bell:
        @hookimpl
        def tts_backends(self, agent):
            def speak(text, path):
                path.write_text(f"{agent.config.get('tts.voice')}: {text}")
                return path
            return {"bell": speak}

    steps = [{"tool_calls": [["text_to_speech", {"text": "ding", "output_path": str(tmp_path / "ding")}]]}, "done"]
    agent = make_agent(tts, Bell(), config={"tts": {"provider": "bell", "voice": "brass"}}, script=steps)
    [made] = [json.loads(m["content"]) for m in agent.run_conversation("ring")["messages"] if m["role"] == "tool"]
    assert made["path"] == str(tmp_path / "ding.mp3") and (tmp_path / "ding.mp3").read_text() == "brass: ding"
    agent = make_agent(tts, Bell(), config={"tts": {"provider": "gong"}}, script=steps)
    [unknown] = [json.loads(m["content"]) for m in agent.run_conversation("ring")["messages"] if m["role"] == "tool"]
    assert unknown["error"] == "text_to_speech: no backend named 'gong' (tts.provider); there are: bell, edge, openai"


def test_edge_hermes_agents_default_voice_speaks_with_no_key(hermes, hermes_home, tmp_path):
    """tts.provider: edge (the default): the real edge-tts package against a loopback stand-in for Microsoft's
    speech service; its voice and speed as config says; a service that does not answer is one line."""
    import os

    from tests.conftest import ROOT
    from tests.edgettsapi import EdgeTTS

    with EdgeTTS(audio=b"ID3\x04" + bytes(range(256)) * 40) as edge:
        shim = edge.sitecustomize(tmp_path / "shim")
        env = {"PYTHONPATH": os.pathsep.join([str(shim), str(ROOT)]), "OPENAI_API_KEY": ""}
        (hermes_home / "config.yaml").write_text("tts:\n  speed: 1.25\n  edge:\n    voice: en-GB-SoniaNeural\n")
        edge.fail = False
        spoken, = results(hermes, tmp_path, [{"text": "Hello from the edge"}], env)
        assert spoken.get("provider") == "edge" and spoken["format"] == "mp3", spoken
        assert open(spoken["path"], "rb").read() == edge.audio
        assert edge.texts == ["Hello from the edge"] and edge.voices[0].endswith("en-GB, SoniaNeural)")
        edge.fail = True
        refused, = results(hermes, tmp_path, [{"text": "anyone there?"}], env)
        assert refused["error"].startswith("text_to_speech: Edge's voices did not answer"), refused
        assert not list((hermes_home / "audio_cache").glob(".*partial"))  # nothing half written is left


def test_doctor_says_whether_text_to_speech_is_offered_and_what_it_waits_for(hermes, hermes_home):
    def line() -> dict:
        return next(c for c in json.loads(hermes("doctor", "--offline", "--json").stdout) if c["name"] == "tts")

    assert line() == {"name": "tts", "status": "ok", "detail": "text_to_speech speaks with edge (en-US-AriaNeural)"}
    (hermes_home / "config.yaml").write_text("tts:\n  provider: openai\n")
    assert line()["detail"] == ("text_to_speech is not offered: tts.provider openai: its key is not set "
                                "(VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY)")
