"""The hook contract is typed, documented and tested, hook by hook
(datasette's rule): docs/hooks.md is generated from the specs and must be
current; every hook has a type on each argument and its return, a
``:param:`` line per argument, says what its return means, and is named by
at least one test."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import hook_reference  # noqa: E402

SPECS = hook_reference.collect()
THIS = {"test_hook_reference.py"}


def _test_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py") if p.name not in THIS)


TEST_TEXT = _test_sources()


def test_the_committed_reference_is_current():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "hook_reference.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_the_plugin_specs_are_found_with_their_owners():
    owners = {s.name: s.owner for s in SPECS}
    assert owners["pre_tool_call"] == "kernel"
    assert owners["transform_terminal_output"] == "core-tools"
    assert owners["subagent_start"] == owners["clarify"] == "agent-tools"
    assert owners["register_memory_backends"] == "memory"
    assert len(owners) == len(SPECS)  # no hook is specified twice


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_hook_is_typed_documented_and_tested(spec):
    prose, params, returns = hook_reference.parse_doc(spec.doc, spec.returns)
    assert len(prose) > 30, f"{spec.name}: say when it fires"
    untyped = [name for name, annotation in spec.params if not annotation]
    assert not untyped and spec.returns, f"{spec.name}: annotate {untyped or 'the return'}"
    missing = [name for name, _ in spec.params if not params.get(name)]
    assert not missing, f"{spec.name}: add a :param: line for {missing}"
    extra = set(params) - {name for name, _ in spec.params} - set(hook_reference.SHARED)
    assert not extra, f"{spec.name}: :param: lines for arguments it does not have: {extra}"
    assert returns, f"{spec.name}: add a :return: line saying what the return means"
    assert re.search(rf"\b{spec.name}\b", TEST_TEXT), f"no test names the hook {spec.name}"
