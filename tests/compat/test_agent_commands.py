"""hermes-agent's commands by their names: ``version`` and ``completion`` work, the others that are called otherwise
here (or do not exist) say what to run instead of "No such command", and a plugin's command of such a name wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from plugins.hermes_compat.agent_commands import ELSEWHERE
from tests.conftest import ROOT
from tests.kernel.fakedist import make_dist


@pytest.mark.parametrize("args", [["status"], ["insights", "--days", "7"], ["login", "--provider", "nous"],
                                  ["dump", "--help"], ["prompt-size", "--json"], ["moa"], ["slack", "manifest"],
                                  ["dashboard", "--port", "9119"], ["lsp", "status"], ["whatsapp-cloud"]])
def test_hermes_agents_command_says_what_to_run_here(hermes, args):
    out = hermes(*args)
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert out.stderr == f"hermes: error: hermes-agent's `hermes {args[0]}`: here, {ELSEWHERE[args[0]]}\n"


def test_they_stay_out_of_the_help_and_version_is_the_version(hermes):
    for _ in range(2):  # the first help is rendered, the second one printed from the data folder
        listed = hermes("--help").stdout
        assert "completion" in listed
        assert not {"status", "insights", "version", "login"} & {line.split()[0] for line in listed.splitlines()
                                                                 if line.startswith("  ") and line.split()}
    assert hermes("version").stdout == hermes("--version").stdout == f"hermes {__import__('kernel').__version__}\n"


def test_completion_scripts_complete_commands_in_a_real_bash(hermes, tmp_path):
    out = hermes("completion", "bash")
    assert out.returncode == 0 and "complete -o nosort -F _hermes_completion hermes" in out.stdout, out.stderr
    for shell in ("zsh", "fish"):
        assert "_HERMES_COMPLETE" in hermes("completion", shell).stdout
    out = hermes("completion", env={"SHELL": "/bin/zsh"})
    assert out.returncode == 0 and "compdef _hermes_completion hermes" in out.stdout
    out = hermes("completion", env={"SHELL": "/bin/tcsh"})
    assert (out.returncode, out.stderr) == (2, "hermes: error: which shell? `hermes completion bash|zsh|fish`\n")
    # the script in bash, asking as a Tab press does
    (tmp_path / "complete.sh").write_text(out_bash := hermes("completion", "bash").stdout)
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "HERMES_HOME": str(tmp_path / "home")}
    for words, offered in ((["hermes", "ses"], "sessions"), (["hermes", "sessions", "im"], "import")):
        line = f'source {tmp_path / "complete.sh"}; COMP_WORDS=({" ".join(words)}); COMP_CWORD={len(words) - 1}; ' \
               '_hermes_completion hermes; printf "%s\\n" "${COMPREPLY[@]}"'
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=60)
        assert offered in done.stdout.split(), (out_bash[:200], done.stdout, done.stderr)


def test_a_plugins_command_of_such_a_name_wins(hermes, tmp_path):
    make_dist(tmp_path / "site", "hermes-status-board", "1.0", {"status-board": ("status_board", '''
        import click
        from kernel import hookimpl

        @click.command("status")
        def status():
            """The board's status."""
            click.echo("all green")

        @hookimpl
        def register_commands(cli):
            cli.add_command(status)
    ''')})
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}
    out = hermes("status", env=env)
    assert (out.returncode, out.stdout) == (0, "all green\n"), out.stderr
    assert "The board's status. (plugin)" in hermes("--help", env=env).stdout
