"""Helpers for the hermes-compat tests: fake installed distributions in a
temporary site folder, built from the fixture plugins in ``fixtures/``."""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

FIXTURES = Path(__file__).parent / "fixtures"
COMPAT_EP = ("hermes-compat", "plugins.hermes_compat")


def write_dist(site: Path, dist: str, version: str, groups: dict, summary: str = "a fixture plugin") -> None:
    """A ``<dist>-<version>.dist-info`` with ``groups`` = {group: {name: value}}."""
    meta = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\nSummary: {summary}\n\n")
    lines = []
    for group, eps in groups.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in eps.items()]
    (meta / "entry_points.txt").write_text("\n".join(lines) + "\n")


def kernel_entry_points() -> dict:
    """The built-in plugins of pyproject.toml plus hermes-compat (until the lead adds it there)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    eps = dict(data["project"]["entry-points"]["hermes.plugins"])
    eps.setdefault(*COMPAT_EP)
    return eps


def make_site(site: Path) -> Path:
    """A site folder that shadows the installed hermes-kernel metadata with this
    worktree's built-ins + hermes-compat, and holds the fixture plugins as
    installed distributions."""
    site.mkdir(parents=True, exist_ok=True)
    write_dist(site, "hermes_kernel", "0.1.0", {"hermes.plugins": kernel_entry_points()}, "the kernel")
    for name in ("hxfix_kitchen", "hxfix_funcs", "hxfix_sideeffect", "hxfix_memory", "hxfix_engine", "hxfix_halfway",
                 "hxfix_lazy", "hxfix_strict", "hxfix_guard", "hxfix_pruner", "hxfix_newest", "hxfix_websearch",
                 "hxfix_tts"):
        shutil.copy(FIXTURES / f"{name}.py", site / f"{name}.py")
    write_dist(site, "hermes-kitchen", "1.0", {"hermes_agent.plugins": {"kitchen": "hxfix_kitchen"}},
               "soup and shouting")
    write_dist(site, "hermes-funcs", "0.3", {"hermes_agent.plugins": {"counter": "hxfix_funcs:setup",
                                                                     "rewriter": "hxfix_funcs:rewrite",
                                                                     "widener": "hxfix_funcs:middleware"}})
    write_dist(site, "hermes-acme", "2.0", {"hermes_agent.model_providers": {"acme": "hxfix_funcs:register_acme"}})
    write_dist(site, "hermes-side", "0.1", {"hermes_agent.plugins": {"side": "hxfix_sideeffect"}})
    write_dist(site, "hermes-notebook", "0.1",
               {"hermes_agent.memory_providers": {"notebook": "hxfix_memory:NotebookMemory"}})
    write_dist(site, "hermes-keeplast", "0.1", {"hermes_agent.plugins": {"keep-last": "hxfix_engine:KeepLastEngine"}})
    write_dist(site, "hermes-lazy", "0.1", {"hermes_agent.plugins": {"lazy": "hxfix_lazy"}})
    write_dist(site, "hermes-newest", "0.1", {"hermes_agent.plugins": {"newest": "hxfix_newest"}})
    write_dist(site, "hermes-almanac", "0.1", {"hermes_agent.plugins": {"almanac": "hxfix_websearch"}})
    write_dist(site, "hermes-chime", "0.1", {"hermes_agent.plugins": {"chime": "hxfix_tts"}})
    write_dist(site, "hermes-pruner", "0.1", {"hermes_agent.plugins": {"pruner": "hxfix_pruner",
                                                                       "delegating": "hxfix_pruner:register_delegating"}})
    write_dist(site, "hermes-halfway", "0.1", {"hermes_agent.plugins": {"halfway": "hxfix_halfway"}})
    write_dist(site, "hermes-strict", "0.1", {"hermes_agent.plugins": {"strict": "hxfix_strict"}})
    write_dist(site, "hermes-guard", "0.1", {"hermes_agent.plugins": {"guard": "hxfix_guard"}})
    # the fourth group, used by one published memory provider
    write_dist(site, "hermes-jotter", "0.1", {"hermes.memory_provider": {"jotter": "hxfix_memory:NotebookMemory"}})
    return site


def install_dir_plugin(home: Path) -> Path:
    dest = home / "plugins" / "greeter"
    shutil.copytree(FIXTURES / "hxfix_dirplugin", dest)
    return dest


@pytest.fixture
def compat_site(tmp_path, monkeypatch):
    """The fixture site on sys.path (first), and a clean compat state after the test."""
    from plugins.hermes_compat import loader, state

    site = make_site(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    yield site
    state.reset()
    loader._EFFECTS.clear()
    for name in list(sys.modules):
        if name.startswith(("hxfix_", "hermes_plugins")):
            del sys.modules[name]
