"""The hermes command line, run as a subprocess the way users run it."""

import importlib.util
import json
import os
import signal
import subprocess
import time

import pytest

from tests.conftest import ROOT, hermes_command

from .fakedist import make_dist

EXAMPLE_INSTALLED = importlib.util.find_spec("hermes_example_plugin") is not None


def script(tmp_path, steps, name="script.json"):
    path = tmp_path / name
    path.write_text(json.dumps(steps))
    return path


def test_version_and_help(hermes):
    out = hermes("--version")
    assert out.returncode == 0 and "0.1.0" in out.stdout
    out = hermes("--help")
    assert out.returncode == 0
    for command in ("plugins", "run", "chat"):
        assert command in out.stdout


def test_plugins_list_json(hermes):
    out = hermes("plugins", "list", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["scripted-provider"]["source"] == "builtin"
    assert rows["scripted-provider"]["status"] == "enabled"
    assert set(rows["scripted-provider"]) >= {"name", "version", "source", "status", "error", "description"}
    out = hermes("plugins", "list", "--json", "--hooks")
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert "register_model_providers" in rows["scripted-provider"]["hooks"]
    # a built-in's description is its docstring's first line: a whole sentence, not one cut off mid-way
    cut = {name: r["description"] for name, r in rows.items() if r["source"] == "builtin"
           and not r["description"].endswith((".", ")"))}
    assert not cut, cut


def test_enable_disable_persist_and_unknown_name(hermes, hermes_home):
    out = hermes("plugins", "disable", "scripted-provider")
    assert out.returncode == 0, out.stderr
    assert "scripted-provider" in (hermes_home / "config.yaml").read_text()
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json").stdout)}
    assert rows["scripted-provider"]["status"] == "disabled"
    out = hermes("run", "--api-mode", "scripted", "hi")
    assert out.returncode == 1 and "no model provider named 'scripted' is enabled" in out.stderr
    assert "Traceback" not in out.stderr
    assert hermes("plugins", "enable", "scripted-provider").returncode == 0
    out = hermes("plugins", "enable", "scripted-provdier")
    assert out.returncode == 1
    assert out.stderr.strip() == "hermes: error: no plugin named 'scripted-provdier' (did you mean 'scripted-provider'?)"


def test_plugins_info(hermes):
    out = hermes("plugins", "info", "scripted-provider", "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["providers"] == ["scripted"] and info["status"] == "enabled"


def test_run_prints_answer_and_json(hermes, tmp_path):
    s = script(tmp_path, ["Hello from a script."])
    out = hermes("run", "--api-mode", "scripted", "--base-url", s, "-m", "test", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Hello from a script."
    out = hermes("run", "--api-mode", "scripted", "--base-url", s, "--json", "hi")
    result = json.loads(out.stdout)
    assert result["exit_reason"] == "completed" and result["final_response"] == "Hello from a script."
    assert [m["role"] for m in result["messages"]] == ["user", "assistant"]


def test_hermes_agents_one_shot_flag_is_a_run(hermes, tmp_path):
    """`hermes -z PROMPT` (hermes-agent's scripts' way, options before it or not) stopped at "no such option"."""
    s = script(tmp_path, ["one shot."])
    out = hermes("--api-mode", "scripted", "--base-url", s, "-z", "what is it?")
    assert (out.returncode, out.stdout, out.stderr) == (0, "one shot.\n", ""), out.stderr
    out = hermes("--oneshot=what is it?", "--api-mode", "scripted", "--base-url", s, "--json")
    result = json.loads(out.stdout)
    assert result["final_response"] == "one shot." and result["messages"][0]["content"] == "what is it?"
    assert hermes("plugins", "list", "-z").returncode == 2  # after a command, the command's options
    distro = tmp_path / "mine.yaml"
    distro.write_text("name: mine\n")
    for given in (["--distro", str(distro)], [f"--distro={distro}"]):  # the root's option stays the root's
        out = hermes(*given, "--api-mode", "scripted", "--base-url", s, "-z", "again?")
        assert (out.returncode, out.stdout) == (0, "one shot.\n"), out.stderr


def test_run_error_exit_code(hermes, tmp_path):
    s = script(tmp_path, [{"error": {"reason": "bad_request", "message": "key rejected", "status_code": 400}}])
    out = hermes("run", "--api-mode", "scripted", "--base-url", s, "hi")
    assert out.returncode == 1
    assert "key rejected" in out.stderr and "Traceback" not in out.stderr
    out = hermes("run", "--api-mode", "scripted", "--base-url", s, "--json", "hi")
    assert out.returncode == 1 and json.loads(out.stdout)["exit_reason"] == "error"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("agent: [\n", "invalid YAML (line 2, column 1)"),
        ("agent:\n  max_turns: lots\n", "agent.max_turns: expected an integer of at least 1, got 'lots' (str)"),
        ("- just\n- a list\n", "expected a mapping of keys at the top level"),
        ("plugins:\n  disabled: [1]\n", "plugins.disabled: expected a list of strings"),
    ],
)
def test_bad_config_is_one_clear_line(hermes, hermes_home, text, expected):
    (hermes_home / "config.yaml").write_text(text)
    out = hermes("sessions", "list")
    assert out.returncode == 2
    assert expected in out.stderr and str(hermes_home / "config.yaml") in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    # a wrong type still lets the commands that inspect and repair config run; invalid YAML does not
    unreadable = "YAML" in expected or "top level" in expected
    assert (hermes("plugins", "list").returncode == 2) == unreadable
    checked = hermes("config", "check")  # an essential command: it is found without reading config, and says
    assert checked.returncode == 1 and expected in checked.stdout


def test_a_wrong_type_stops_every_command_but_those_that_repair_it(hermes, hermes_home):
    """A value of the wrong type (a kernel key, a plugin's key) stops run,
    chat and the plugins' commands with one line that says how to fix it;
    `hermes config check` lists every problem, `config set` fixes one without
    touching the others, `plugins disable` still works, and --help is shown."""
    folder = hermes_home / "plugins" / "painter"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("def register(ctx):\n    pass\n")
    (folder / "plugin.yaml").write_text("name: painter\nmanifest_version: 2\nconfig_schema:\n  coats: {type: integer}\n")
    config = hermes_home / "config.yaml"
    config.write_text("agent:\n  max_turns: lots\nplugins:\n  enabled: [painter]\n"
                      "  entries:\n    painter:\n      settings:\n        coats: many\n")
    for command in (("run", "--api-mode", "scripted", "hi"), ("sessions", "list"), ("chat",)):
        out = hermes(*command, input="")
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert "agent.max_turns: expected an integer of at least 1, got 'lots' (str)" in out.stderr
        assert "hermes config set KEY VALUE" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert hermes("run", "--help").returncode == 0
    checked = hermes("config", "check")
    assert checked.returncode == 1 and "agent.max_turns" in checked.stdout
    assert "plugins.entries.painter.settings.coats" in checked.stdout
    assert "painter" in hermes("plugins", "list").stdout
    shown = hermes("config", "show")
    assert shown.returncode == 0 and "agent.max_turns = 90  [ignored: " in shown.stdout  # the default applies
    got = hermes("config", "get", "agent.max_turns")
    assert got.stdout.strip() == "90" and "note: ignored, the default applies" in got.stderr
    refused = hermes("config", "set", "agent.max_turns", "plenty")
    assert refused.returncode == 1 and "expected an integer" in refused.stderr
    fixed = hermes("config", "set", "agent.max_turns", "5")
    assert fixed.returncode == 0 and "note: still wrong:" in fixed.stderr and "settings.coats" in fixed.stderr
    text = config.read_text()
    assert "max_turns: 5" in text and "coats: many" in text  # the other values are kept as they were
    assert hermes("plugins", "disable", "painter").returncode == 0
    assert "disabled" in (text := config.read_text()) and "- painter" in text
    assert hermes("config", "check").returncode == 0
    out = hermes("sessions", "list")
    assert out.returncode == 0, out.stderr


def test_bad_cli_arguments(hermes, tmp_path):
    out = hermes("run", "--max-turns", "0", "hi")
    assert out.returncode == 2 and "max-turns" in out.stderr
    out = hermes("run", input="")  # no PROMPT: it is on stdin
    assert out.returncode == 2 and out.stderr.strip() == "hermes: error: the prompt is empty (nothing on stdin)"
    out = hermes("run", "-t", "nosuchset", "--api-mode", "scripted", "hi")
    assert out.returncode == 1 and "unknown toolset 'nosuchset'" in out.stderr
    # an empty prompt is refused before any call (Anthropic refuses an empty message)
    for args, stdin, said in ((" ",), None, "the prompt is empty"), (("-",), "\n", "the prompt is empty (nothing on stdin)"):
        out = hermes("run", "--api-mode", "scripted", *args, input=stdin)
        assert out.returncode == 2 and out.stderr.strip() == f"hermes: error: {said}", out.stderr
    for dash in (["-"], []):  # `hermes run -`, and `echo ... | hermes run`
        out = hermes("run", "--api-mode", "scripted", "--base-url", script(tmp_path, ["read it"]), *dash,
                     input="a question\n")
        assert out.returncode == 0 and out.stdout.strip() == "read it", out.stderr
    # a binary file piped in reached the model as thousands of tokens of replacement characters
    out = hermes("run", "--api-mode", "scripted", "--base-url", script(tmp_path, ["never"]), "describe:", "-",
                 input="\x7fELF\x02\x01\x01\x00\x00\x00 and more")
    assert (out.returncode, out.stdout) == (2, "") and out.stderr.strip() == \
        "hermes: error: stdin is not text (a NUL byte in it: a binary file?); the prompt is text"


@pytest.mark.parametrize("command, option, value", [
    (["run", "hi"], "--timeout", "nan"), (["run", "hi"], "--timeout", "inf"), (["cron", "daemon"], "--every", "nan"),
    (["checkpoints", "prune"], "--max-size-mb", "inf"), (["mcp", "list"], "--timeout", "NaN")])
def test_nan_and_inf_are_no_duration_or_size(hermes, command, option, value):
    # click's ranges let both through (nan compares false): `--timeout nan` fell back to the default without a word
    # and `cron daemon --every inf` slept forever
    out = hermes(*command, option, value)
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert f"Invalid value for '{option}': '{value}' is not a finite number." in out.stderr, out.stderr


def test_a_dash_among_the_words_puts_stdin_there_and_stdin_is_never_read_unasked(hermes, tmp_path):
    """`git diff | hermes run "review this:" -`: the words and what was piped in, as one prompt. Before, the words
    alone went and the diff was dropped, unsaid. Without a `-` a PROMPT never reads stdin (a pipe nobody closes, a
    parent's channel: reading it would hang or steal)."""
    def sent(*words, stdin):
        out = hermes("run", "--api-mode", "scripted", "--base-url", script(tmp_path, ["ok"]), "--json", *words,
                     input=stdin)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["messages"][0]["content"]

    diff = "--- a/x.py\n+++ b/x.py\n+    indented = 1\n"
    assert sent("review", "this:", "-", stdin=diff) == "review this:\n\n" + diff.rstrip()
    assert sent("-", "what", "is", "it?", stdin="  data\n") == "  data\n\nwhat is it?"  # its indentation kept
    assert sent("just", "words", stdin="never read\n") == "just words"
    assert sent("hi", "-", stdin="") == "hi"  # nothing piped: the words alone

def test_with_no_prompt_a_terminals_stdin_is_not_read(hermes_home):
    """Typed at a terminal, `hermes run` alone says what it needs; it does not wait for input."""
    import pty

    leader, follower = pty.openpty()
    try:
        out = subprocess.run(hermes_command() + ["run", "--api-mode", "scripted"], stdin=follower,
                             capture_output=True, text=True, timeout=60, cwd=hermes_home,
                             env=dict(os.environ, HERMES_HOME=str(hermes_home), PYTHONPATH=str(ROOT)))
    finally:
        os.close(leader)
        os.close(follower)
    assert out.returncode == 2, out.stderr
    assert out.stderr == "hermes: error: no prompt: hermes run PROMPT, or pipe it in (echo hi | hermes run)\n"


def test_a_broken_plugin_never_locks_the_user_out(hermes, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "hermes-broken", "0.1", {"broken": ("hermes_broken_cli_mod", "raise RuntimeError('I am broken')\n")})
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    s = script(tmp_path, ["still works"])
    out = hermes("run", "--api-mode", "scripted", "--base-url", s, "hi", env=env)
    assert out.returncode == 0 and out.stdout.strip() == "still works"
    out = hermes("plugins", "list", "--json", env=env)
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["broken"]["status"] == "error" and "I am broken" in rows["broken"]["error"]
    assert hermes("plugins", "disable", "broken", env=env).returncode == 0
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json", env=env).stdout)}
    assert rows["broken"]["status"] == "disabled"


def test_every_builtin_blocked_gives_a_clear_message(hermes):
    out = hermes("run", "hi", env={"HERMES_PLUGINS": ""})
    assert out.returncode == 1
    assert out.stderr.strip().startswith("hermes: error: no model provider is enabled")


def test_a_command_left_out_by_the_selection_says_why(hermes, tmp_path):
    out = hermes("chat", env={"HERMES_PLUGINS": "core-tools"}, input="")
    assert out.returncode == 2 and "No such command 'chat'. HERMES_PLUGINS is set" in out.stderr
    distro = tmp_path / "lean.yaml"
    distro.write_text("name: lean\nplugins: {only: [core-tools]}\n")
    out = hermes("--distro", distro, "skills", "list")
    assert out.returncode == 2 and "The distro 'lean' selects the plugins" in out.stderr
    out = hermes("chatt")  # nothing left out: click's own did-you-mean, nothing more
    assert out.returncode == 2 and out.stderr.strip().endswith("No such command 'chatt'. Did you mean 'chat'?")


def test_ctrl_c_interrupts_the_turn_cleanly(hermes_home, tmp_path):
    s = script(tmp_path, [{"content": "too slow", "delay": 20}])
    env = dict(os.environ, HERMES_HOME=str(hermes_home), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(hermes_command() + ["run", "--api-mode", "scripted", "--base-url", str(s), "hi"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 20  # the session started (its lock taken): a loaded machine may take seconds
    while not any((hermes_home / "locks").glob("*.lock")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert time.monotonic() - sent < 2
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert "too slow" not in out


@pytest.mark.skipif(not EXAMPLE_INSTALLED, reason="examples/hermes-example-plugin is not installed")
def test_third_party_example_plugin_through_the_cli(hermes, tmp_path):
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json").stdout)}
    assert rows["example"]["source"] == "entrypoint" and rows["example"]["status"] == "enabled"
    out = hermes("example-hello", "--name", "ci")
    assert out.returncode == 0 and out.stdout.strip() == "hello, ci, from hermes-example-plugin"
    assert "example-hello" in hermes("--help").stdout
    steps = [{"tool_calls": [["word_count", {"text": "one two three"}], ["word_count", {"text": "FORBIDDEN"}]]}, "done"]
    out = hermes("run", "--api-mode", "scripted", "--base-url", script(tmp_path, steps), "--json", "count")
    tools = [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    assert tools == [{"words": 3, "characters": 13}, {"error": "the example plugin refuses to count forbidden text"}]


SLASH_PLUGIN = """
from kernel import hookimpl

@hookimpl
def register_slash_commands(register):
    register("shout", lambda args, agent: args.upper() + "!", "shout the arguments")
    register("crash", lambda args, agent: 1 / 0, "always fails")
"""


def test_chat_streams_answers_and_runs_slash_commands(hermes, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "hermes-slash", "0.1", {"slash": ("hermes_slash_mod", SLASH_PLUGIN)})
    s = script(tmp_path, ["first answer", "second answer"])
    out = hermes("chat", "--api-mode", "scripted", "--base-url", s,
                 input="hello\n/shout hey you\n/crash\n/nope\nagain\n/quit\n",
                 env={"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"})
    assert out.returncode == 0, out.stderr
    assert "first answer" in out.stdout and "second answer" in out.stdout
    assert "HEY YOU!" in out.stdout
    assert "/crash failed: ZeroDivisionError" in out.stderr and "unknown command /nope" in out.stderr
    assert "Traceback" not in out.stderr


BROKEN_STORE = """
from kernel import hookimpl

@hookimpl
def load_session(session_id):
    raise OSError("disk on fire")

@hookimpl
def latest_session(platform):
    raise OSError("disk on fire")
"""


def test_a_failing_store_is_reported_not_taken_for_a_missing_session(hermes, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "hermes-badstore", "0.1", {"badstore": ("hermes_badstore_mod", BROKEN_STORE)})
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}", "HERMES_PLUGINS": "badstore,scripted-provider,terminal-ui"}
    out = hermes("run", "--resume", "abc", "--api-mode", "scripted", "hi", env=env)
    assert out.returncode == 1 and "hermes: error: the session store failed: OSError: disk on fire" in out.stderr
    out = hermes("chat", "--continue", "--api-mode", "scripted", env=env, input="")
    assert out.returncode == 1 and "the session store failed" in out.stderr
    out = hermes("run", "--resume", "abc", "--api-mode", "scripted", "hi", env={"HERMES_PLUGINS": "scripted-provider"})
    assert out.returncode == 1 and "no session store plugin is enabled" in out.stderr


def test_help_lists_plugin_commands_from_the_first_run(hermes):
    first = hermes("--help")
    assert first.returncode == 0 and "sessions" in first.stdout  # a built-in plugin's command
    again = hermes("--help")
    assert again.stdout == first.stdout  # later runs read the cache instead of loading plugins


FRONT_END = """
from kernel import hookimpl

class Plain:
    def __init__(self):
        self.deltas = []

    @hookimpl
    def on_stream_delta(self, text):
        self.deltas.append(text)

    def end_answer(self, text):
        print(f"[plain front end, {len(self.deltas)} deltas] {text}")

@hookimpl(tryfirst=True)
def terminal_front_end(quiet, config):
    return Plain()
"""


def test_the_terminal_front_end_is_a_plugin_a_distro_can_replace_or_block(hermes, tmp_path):
    """`hermes run` asks terminal_front_end for its display: a plugin answering
    first replaces the built-in terminal; with terminal blocked only the answer
    is printed, and `hermes chat` (the terminal's command) is gone."""
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "hermes-plain", "0.1", {"plain": ("hermes_plain_mod", FRONT_END)})
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["the answer"]))
    run = ("run", "--api-mode", "scripted", "--base-url", script, "hi")
    out = hermes(*run, env={"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"})
    assert out.returncode == 0 and out.stdout.startswith("[plain front end, ") and out.stdout.endswith("the answer\n")
    distro = tmp_path / "no-terminal.yaml"
    distro.write_text("name: no-terminal\nplugins: {blocked: [terminal-ui]}\n")
    out = hermes("--distro", distro, *run)
    assert out.returncode == 0 and out.stdout == "the answer\n"
    out = hermes("--distro", distro, "chat", input="")
    assert out.returncode == 2 and "No such command 'chat'" in out.stderr


def test_a_builtin_without_the_builtin_it_extends_is_one_line_in_the_listing(hermes):
    """`plugins disable memory`: fts-memory (a backend of memory) is "not loaded: needs memory", and no
    command warns about its hook; the chat front end is `terminal-ui`, apart from the `terminal` tool."""
    assert hermes("plugins", "disable", "memory").returncode == 0
    out = hermes("plugins", "list", "--json")
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["fts-memory"]["error"] == "not loaded: needs memory (`hermes plugins enable memory`)"
    assert "fts-memory" not in out.stderr and "unknown hook" not in out.stderr
    assert hermes("config", "show").stderr == ""
    assert hermes("plugins", "disable", "terminal-ui").returncode == 0
    assert "No such command 'chat'" in hermes("chat").stderr
    tools = hermes("plugins", "info", "core-tools", "--json")
    assert "terminal" in json.loads(tools.stdout)["tools"]


def test_shell_completion_offers_every_command_and_each_ones_options(hermes):
    """click's completion (`eval "$(_HERMES_COMPLETE=bash_source hermes)"`) offered no command at all: the root
    group knew its commands only once loaded. It offers --help's list now, the plugins' included."""
    def complete(*words):
        env = {"COMP_WORDS": " ".join(("hermes", *words)), "COMP_CWORD": str(len(words)),
               "_HERMES_COMPLETE": "bash_complete"}
        out = hermes(env=env)
        assert out.returncode == 0, out.stderr
        return [line.split(",", 1)[1] for line in out.stdout.splitlines()]

    assert "_hermes_completion()" in hermes(env={"_HERMES_COMPLETE": "bash_source"}).stdout
    for _ in range(2):  # the first run learns the plugins' commands, the next one reads them remembered
        assert complete("s") == ["sandbox", "security", "send", "serve", "sessions", "setup", "skills"]
    assert complete("r") == ["run", "runs"] and "doctor" in complete("")
    assert "--continue" in complete("run", "--") and complete("sessions", "pr") == ["prune"]


def test_a_command_group_alone_does_its_listing(hermes, hermes_home):
    """`hermes sessions`, `skills`, `mcp`, `prompt` alone printed their usage and exit 0 with nothing done; like
    `hermes config` (show) they now do what one reaches for first."""
    for group, first in (("sessions", "list"), ("skills", "list"), ("mcp", "list"), ("prompt", "show")):
        alone, explicit = hermes(group), hermes(group, first)
        assert (alone.returncode, alone.stdout) == (explicit.returncode, explicit.stdout), group
        assert "Usage:" not in alone.stdout and alone.stdout.strip(), group
    assert "durable turns are off" in hermes("runs").stderr
