"""The tests that need the package index are marked ``network`` and named in
README.md; with the index unreachable each fails at once with one line saying
so (no pip retries), and ``-m 'not network'`` leaves them out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT


def _pytest(*args: str, env: dict = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", *args],
                          cwd=ROOT, env=env or dict(os.environ), capture_output=True, text=True, timeout=300)


def _marked(request) -> set:
    """The ids of the tests marked ``network``: of this session's when it collected the whole suite with nothing
    selected (collecting it again costs about 15 s), else of a collection of its own."""
    config, items = request.config, request.session.items
    whole = {Path(a).resolve() for a in config.args} <= {ROOT.resolve(), (ROOT / "tests").resolve()}
    if whole and not config.option.markexpr and not config.option.keyword and len(items) > 1000:
        return {item.nodeid for item in items if item.get_closest_marker("network")}
    out = _pytest("--collect-only", "-q", "-m", "network")
    return {line for line in out.stdout.splitlines() if "::" in line}


def test_the_network_tests_are_the_ones_the_readme_names(request):
    ids = lambda out: {line for line in out.stdout.splitlines() if "::" in line}  # noqa: E731
    marked = _marked(request)
    files = {test.split("::")[0] for test in marked}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(tests/\S+\.py)`", readme.split("<!-- network-tests -->")[1].split("<!-- /network-tests")[0]))
    assert files and files == named
    offline = ids(_pytest("--collect-only", "-q", "-m", "not network", *sorted(files)))
    assert offline.isdisjoint(marked) and ids(_pytest("--collect-only", "-q", *sorted(files))) == marked | offline


def test_an_unreachable_index_is_one_clear_line():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL="http://127.0.0.1:9/simple")  # port 9: nobody listens
    started = time.monotonic()
    out = _pytest("-q", "tests/kernel/test_pluggy_versions.py", "-k", "oldest", env=env)
    assert out.returncode == 1
    assert time.monotonic() - started < 120
    failed = [line for line in out.stdout.splitlines() if "needs the package index" in line]
    assert failed and "the oldest pluggy needs the package index and pip failed: " in failed[0], out.stdout[-2000:]
    assert "Retrying" not in out.stdout + out.stderr and "Traceback" not in out.stdout
