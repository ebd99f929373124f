"""A hermes-agent plugin's secret source (``ctx.register_secret_source``, ``agent.secret_sources.base``): read as
hermes starts when its ``secrets.<name>`` section turns it on, after the built-in sources and never over what they
set; one built against another contract is left out with a warning."""

from __future__ import annotations

import sys

PLUGIN = f'''
import sys
from agent.secret_sources.base import FetchResult, SecretSource, run_secret_cli


class Vault(SecretSource):
    name = "teamvault"
    label = "the team's vault"

    def fetch(self, cfg, home_path):
        done = run_secret_cli([{sys.executable!r}, "-c", "print('sk-team')"])
        return FetchResult(secrets={{"OPENAI_API_KEY": done.stdout.strip(), "HF_TOKEN": "hf-team", "bad name": "x"}},
                           warnings=["vault is read-only"])


class Future(Vault):
    name = "future"
    api_version = 2


def register(ctx):
    ctx.register_secret_source(Vault())
    ctx.register_secret_source(Future())
'''


def test_a_plugins_secret_source_sets_what_the_environment_lacks(hermes, hermes_home):
    folder = hermes_home / "plugins" / "teamvault"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(PLUGIN)
    (folder / "plugin.yaml").write_text("name: teamvault\n")
    (hermes_home / "config.yaml").write_text("plugins:\n  enabled: [teamvault]\nsecrets:\n  teamvault:\n"
                                             "    enabled: true\n  future:\n    enabled: true\n")
    out = hermes("doctor", "--offline", env={"OPENAI_API_KEY": "sk-shell", "HF_TOKEN": ""})
    line = next(line for line in out.stdout.splitlines() if "secrets.teamvault: " in line)
    assert "1 variables set (HF_TOKEN), 1 left as the environment had them (OPENAI_API_KEY)" in line, out.stdout
    assert "secrets.teamvault: vault is read-only" in out.stderr
    assert "register_secret_source" in out.stderr and "built against contract 2, not 1; ignored" in out.stderr
