"""`hermes setup` in a pseudo-terminal, as a new user answers it: the provider (here another endpoint: the
wire-protocol server, which wants a key), the key typed hidden and kept in the .env beside config.yaml, the model
picked from the list the server's API gives, one short request through the real SDK; then `hermes run` works with
no key exported. A first `hermes` with no model offers it, then chats. Without a terminal it says what to run."""

from __future__ import annotations

import os

from plugins_providers.defaults import PROVIDERS
from plugins_providers.testserver import reply
from tests.conftest import ROOT, hermes_command
from tests.terminal.conftest import Terminal

ANOTHER = str(len(PROVIDERS) + 1)  # the line after the providers table


def started(hermes_home, tmp_path, *args) -> Terminal:
    """``hermes ARGS`` in a pseudo-terminal, with no model key or URL of the environment."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(HERMES_HOME=str(hermes_home), TERM="xterm-256color",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])))
    return Terminal([*hermes_command(), *args], env, tmp_path)


def test_setup_asks_provider_key_and_model_saves_them_and_tries_the_model(hermes, hermes_home, tmp_path,
                                                                          make_wire_server, monkeypatch):
    server = make_wire_server(api_key="sk-typed-in")
    server.models = ["small-1", "big-2"]
    (hermes_home / "config.yaml").write_text("# mine\nagent:\n  max_turns: 9\n")

    def up_to_the_model(term: Terminal) -> None:
        term.expect("Provider [")
        term.line(ANOTHER)
        term.expect("Its URL")
        term.line("localhost:8000")  # no scheme: asked again
        term.expect("the URL has no scheme: use http://localhost:8000")
        term.line(server.openai_url)
        term.expect("Its API")
        term.line("")
        term.expect("holding its key")
        term.line("OPENAI_API_KEY")
        term.expect("OPENAI_API_KEY (typed hidden")
        term.line("sk-typed-in")
        term.expect("Models it offers (2)")
        term.expect("Model (a number or a name)")

    term = started(hermes_home, tmp_path, "setup")
    up_to_the_model(term)
    term.ctrl_c()  # leaving before the last answer: nothing written
    assert term.close() == 130
    assert not (hermes_home / ".env").exists() and "model" not in (hermes_home / "config.yaml").read_text()
    term = started(hermes_home, tmp_path, "setup")
    up_to_the_model(term)
    server.push(reply("OK"))
    term.line("2")
    term.expect("It works")
    assert term.close() == 0
    assert "sk-typed-in" not in term.seen and "hermes-agent's folder" not in term.seen  # HERMES_HOME is set
    assert (hermes_home / "config.yaml").read_text() == (
        f"# mine\nagent:\n  max_turns: 9\nmodel: small-1\nbase_url: {server.openai_url}\napi_mode: chat_completions\n"
        "api_key_env: OPENAI_API_KEY\n")
    env_file = hermes_home / ".env"
    assert env_file.read_text() == "OPENAI_API_KEY=sk-typed-in\n" and env_file.stat().st_mode & 0o777 == 0o600
    assert server.requests[-1].body["model"] == "small-1"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.push(reply("from the saved setup"))
    out = hermes("run", "hi")
    assert out.returncode == 0 and out.stdout == "from the saved setup\n", out.stderr
    # again, a provider of the table: the endpoint's settings go; its models cannot be listed here: typed
    term = started(hermes_home, tmp_path, "setup", "--no-test")
    term.expect("Now: small-1")
    term.expect("Provider [")
    term.line(str(sorted(PROVIDERS).index("ollama") + 1))
    term.expect("its models could not be listed")
    term.expect("Model")
    term.line("llama3")
    term.expect("saved in")
    assert term.close() == 0
    assert (hermes_home / "config.yaml").read_text() == "# mine\nagent:\n  max_turns: 9\nmodel: llama3\n" \
                                                        "provider: ollama\n"


def test_without_a_terminal_setup_says_what_to_run(hermes):
    out = hermes("setup")
    assert out.returncode == 2 and "asks its questions at a terminal" in out.stderr
    assert "model set MODEL --provider P" in out.stderr and "Traceback" not in out.stderr


def test_a_first_hermes_with_no_model_offers_setup_then_chats_on_what_it_saved(hermes_home, tmp_path,
                                                                               make_wire_server):
    server = make_wire_server()
    server.models = ["only-model"]
    term = started(hermes_home, tmp_path)  # `hermes` alone, as a new user types it
    term.expect("No model is chosen yet. Run `hermes setup` now? [Y/n]")
    term.line("n")
    term.expect("no model: pass -m MODEL, or choose one with `hermes setup`")  # declined: as before
    assert term.close() == 1
    term = started(hermes_home, tmp_path)
    term.expect("No model is chosen yet. Run `hermes setup` now? [Y/n]")
    term.line("")
    term.expect("Provider [")
    term.line(ANOTHER)
    term.expect("Its URL")
    term.line(server.openai_url)
    term.expect("Its API")
    term.line("")
    term.expect("holding its key")
    term.line("")  # a server on this machine: none
    term.expect("Model (a number or a name)")
    server.push(reply("OK"))
    term.line("1")
    term.expect("It works")
    term.expect("hermes> ")  # and the chat it was started for
    server.push(reply("hello, new user"))
    term.line("hi")
    term.expect("hello, new user")
    term.expect("hermes> ")
    term.keys("\x04")
    assert term.close() == 0
    assert server.requests[-1].body["model"] == "only-model"


def test_setup_tells_a_hermes_agent_user_their_folder_can_be_used_as_it_is(tmp_path):
    """hermes-agent keeps everything in ~/.hermes; hermes' own folders are elsewhere unless HERMES_HOME says so."""
    home = tmp_path / "home"
    (home / ".hermes").mkdir(parents=True)
    (home / ".hermes" / "config.yaml").write_text("model:\n  default: claude-sonnet-4-5\n")
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith(("HERMES_", "XDG_"))}
    env.update(HOME=str(home), TERM="xterm-256color",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])))
    term = Terminal([*hermes_command(), "setup"], env, tmp_path)
    term.expect(f"hermes-agent's folder {home}/.hermes is here: with `export HERMES_HOME={home}/.hermes`")
    term.expect("Provider [")
    term.ctrl_c()
    assert term.close() == 130
