"""hermes-agent's read-only routes beside the chat: /v1/skills, /v1/toolsets, /health/detailed and /v1/health,
on a real ``hermes serve``; the first three need the key, as hermes-agent's do."""

from __future__ import annotations

import json
import urllib.error
import urllib.request


def get(served, path, key=None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(served.url + path, headers=headers), timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_skills_toolsets_and_the_detailed_health_as_hermes_agents_clients_read_them(serve, hermes_home):
    skill = hermes_home / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release-notes\ndescription: Write release notes from git log\n---\n"
                                    "Read the log, group by kind.\n")
    served = serve(key="k" * 32, config={"toolsets": ["file"], "agent": {"disabled_tools": ["patch"]}})

    for path in ("/v1/skills", "/v1/toolsets", "/health/detailed"):
        status, body = get(served, path)
        assert status == 401 and body["error"]["code"] == "invalid_api_key", path
    assert get(served, "/v1/health") == get(served, "/health")  # open, like /health
    assert get(served, "/v1/health")[1]["status"] == "ok"

    status, body = get(served, "/v1/skills", served.key)
    assert status == 200 and body["object"] == "list"
    assert {"name": "release-notes", "description": "Write release notes from git log", "category": None,
            "source": "user"} in body["data"]

    status, body = get(served, "/v1/toolsets", served.key)
    rows = {row["name"]: row for row in body["data"]}
    assert status == 200 and body["object"] == "list"
    assert rows["file"]["enabled"] is True and {"read_file", "patch"} <= set(rows["file"]["tools"])
    assert rows["terminal"]["enabled"] is False and "terminal" in rows["terminal"]["tools"]  # not in `toolsets`
    assert all(row["configured"] in (True, False) and row["plugin"] for row in rows.values())

    status, body = get(served, "/health/detailed", served.key)
    assert status == 200 and body["status"] == "ok" and body["platform"] == "hermes-agent"
    assert body["active_agents"] == 0 and body["max_concurrent_runs"] == 8 and body["gateway_busy"] is False
    assert body["pid"] == served.process.pid and body["uptime_seconds"] >= 0

    caps = get(served, "/v1/capabilities", served.key)[1]
    assert caps["features"]["skills_api"] is True and caps["features"]["tool_progress_events"] is True
    assert caps["endpoints"]["skills"] == {"method": "GET", "path": "/v1/skills"}
    assert caps["endpoints"]["toolsets"] == {"method": "GET", "path": "/v1/toolsets"}
    assert caps["endpoints"]["health_detailed"] == {"method": "GET", "path": "/health/detailed"}
