"""A third-party test suite gets ``wire_server`` from the pytest11 entry point."""

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

from tests.conftest import ROOT

THIRD_PARTY_TEST = '''
import openai
from plugins_providers.testserver import error, reply

def test_uses_the_fixture(wire_server, make_wire_server):
    wire_server.push(error(429, retry_after=1), reply("hi from the fixture"))
    client = openai.OpenAI(base_url=wire_server.openai_url, api_key="k", max_retries=1)
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert answer.choices[0].message.content == "hi from the fixture"
    assert [r.retry_count for r in wire_server.requests] == ["0", "1"]
    assert make_wire_server().url != wire_server.url
'''


def test_fixture_available_through_entry_point(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    if not any(ep.value == "plugins_providers.pytest_plugin" for ep in entry_points(group="pytest11")):
        meta = site / "hermes_wire_fixture-0.0.1.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-wire-fixture\nVersion: 0.0.1\n\n")
        (meta / "entry_points.txt").write_text("[pytest11]\nhermes_wire = plugins_providers.pytest_plugin\n")
    project = tmp_path / "thirdparty"
    project.mkdir()
    (project / "test_thirdparty.py").write_text(textwrap.dedent(THIRD_PARTY_TEST))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(site)]))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(project), str(project)],
                          capture_output=True, text=True, env=env, cwd=project, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
