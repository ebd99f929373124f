"""Nothing heavy at start-up (DESIGN principle 6)."""

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
