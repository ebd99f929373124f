"""The tests that need the package index are marked ``network`` and named in
README.md; with the index unreachable each fails at once with one line saying
so (no pip retries), and ``-m 'not network'`` leaves them out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

from tests.conftest import ROOT


def _pytest(*args: str, env: dict = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", *args],
                          cwd=ROOT, env=env or dict(os.environ), capture_output=True, text=True, timeout=300)


def test_the_network_tests_are_the_ones_the_readme_names():
    ids = lambda out: {line for line in out.stdout.splitlines() if "::" in line}  # noqa: E731
    marked = ids(_pytest("--collect-only", "-q", "-m", "network"))
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
