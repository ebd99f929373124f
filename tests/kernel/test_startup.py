"""Nothing heavy at start-up (DESIGN principle 6)."""

import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def imported_after(code: str) -> set:
    probe = f"import sys; {code}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(out.stdout.split())


def test_import_kernel_is_light():
    mods = imported_after("import kernel")
    assert not {"openai", "anthropic", "pluggy", "yaml", "click", "httpx2"} & mods


def test_the_loop_imports_no_sdk():
    mods = imported_after("import kernel.agent, kernel.plugins, kernel.tools, kernel.cli")
    assert "openai" not in mods and "anthropic" not in mods


def test_cli_help_imports_no_pluggy_or_yaml():
    mods = imported_after("import kernel.cli")
    assert "pluggy" not in mods and "yaml" not in mods and "importlib.metadata" not in mods


def _listing_imports(env: dict, *args: str) -> tuple:
    """What ``hermes plugins list`` printed and which modules it imported."""
    probe = ("import sys, atexit; atexit.register(lambda: sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules))));"
             " from kernel.cli import main; main(['plugins', 'list', *sys.argv[1:]])")
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout, set(out.stderr.rsplit("MODULES ", 1)[1].split())


def test_an_unchanged_listing_reads_no_metadata_and_imports_no_plugin(hermes_home, tmp_path):
    from tests.kernel.fakedist import make_dist

    site = tmp_path / "site"
    site.mkdir()
    env = {"HERMES_HOME": str(hermes_home), "PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    first, _ = _listing_imports(env)
    second, mods = _listing_imports(env)
    assert second == first and "core-tools" in second
    heavy = {"importlib.metadata", "pluggy", "yaml", "kernel.plugins", "kernel.config", "logging", "sqlite3"}
    assert not heavy & mods and not {m for m in mods if m.split(".")[0] in ("plugins", "plugins_memory",
                                                                             "plugins_providers")}
    # each thing the listing depends on, changed, is seen at once
    make_dist(site, "hermes-newcomer", "0.3", {"newcomer": ("hermes_newcomer_mod", "")}, summary="just installed")
    listed, _ = _listing_imports(env)
    assert "newcomer" in listed and "just installed" in listed
    (hermes_home / "config.yaml").write_text("plugins:\n  disabled: [newcomer]\n")
    listed, _ = _listing_imports(env)
    assert [line.split()[1] for line in listed.splitlines() if line.startswith("newcomer ")] == ["disabled"]
    listed, _ = _listing_imports({**env, "HERMES_PLUGINS": "core-tools"})
    assert [line.split()[1] for line in listed.splitlines() if line.startswith("memory ")] == ["not"]  # "not enabled"
    as_json, mods = _listing_imports(env, "--json")
    assert {r["name"]: r["status"] for r in json.loads(as_json)}["newcomer"] == "disabled"


def test_a_listing_found_again_imports_only_the_plugin_sources(hermes_home):
    env = {"HERMES_HOME": str(hermes_home)}
    first, _ = _listing_imports(env)  # loads once: nothing is remembered yet
    state = hermes_home / "plugin-state.json"
    data = json.loads(state.read_text())
    del data["listing"]  # as after a config change: found again, from metadata and what the last load saw
    state.write_text(json.dumps(data))
    again, mods = _listing_imports(env)
    assert again == first and "task list, questions to the user" in again  # agent-tools' description, remembered
    imported = {m.split(".")[1] for m in mods if m.startswith(("plugins.", "plugins_memory.", "plugins_providers."))}
    assert imported == {"hermes_compat"}, imported  # the one built-in with discover_plugins
