"""`/api/jobs` on `hermes serve` (hermes-agent's routes): the cron plugin's jobs made, read, changed, paused, run now
and deleted over HTTP, and run by the server itself as they come due; the model is the real openai SDK on the wire
server."""

from __future__ import annotations

from plugins_providers.testserver import reply
from tests.conftest import wait_until
from tests.serve.test_runs import request


def test_jobs_are_made_changed_run_and_deleted_and_the_server_runs_them_when_due(serve, wire_server, hermes_home):
    served = serve(config={"cron": {"tick_seconds": 1}})
    wire_server.push(reply("Ran by hand."), reply("Ran on time."))
    status, made = request(served, "POST", "/api/jobs", {"schedule": "every 1h", "prompt": "check the build",
                                                        "name": "build"})
    assert status == 201, made
    job = made["job"]
    assert (job["name"], job["state"], job["schedule_display"]) == ("build", "scheduled", "every 1h")
    assert job["next_run_at"] == job["next_run"]  # hermes-agent's names beside ours
    assert request(served, "GET", "/api/jobs")[1]["jobs"][0]["id"] == job["id"]
    assert request(served, "GET", f"/api/jobs/{job['id']}")[1]["job"]["prompt"] == "check the build"
    # changes: what may change, checked
    status, changed = request(served, "PATCH", f"/api/jobs/{job['id']}", {"name": "the build", "schedule": "every 2h"})
    assert status == 200 and (changed["job"]["name"], changed["job"]["schedule"]) == ("the build", "every 2h")
    assert request(served, "PATCH", f"/api/jobs/{job['id']}", {"schedule": "someday"})[0] == 400
    status, past = request(served, "PATCH", f"/api/jobs/{job['id']}", {"schedule": "2020-01-01T00:00"})
    assert status == 400 and past["error"]["message"] == "'2020-01-01T00:00' is in the past"  # as add says
    status, refused = request(served, "PATCH", f"/api/jobs/{job['id']}", {"runs": 9})
    assert status == 400 and "not 'runs'" in refused["error"]["message"]
    assert request(served, "POST", f"/api/jobs/{job['id']}/pause")[1]["job"]["state"] == "paused"
    assert request(served, "POST", f"/api/jobs/{job['id']}/resume")[1]["job"]["state"] == "scheduled"
    # run now: in the background, recorded when it ends; its schedule stays
    status, started = request(served, "POST", f"/api/jobs/{job['id']}/run")
    assert status == 202 and started["job"]["state"] == "running"

    def runs_of(job_id):
        return request(served, "GET", f"/api/jobs/{job_id}")[1]["job"]

    wait_until(lambda: runs_of(job["id"])["runs"] == 1, served.process, timeout=30)
    done = runs_of(job["id"])
    assert (done["last_status"], done["next_run"]) == ("ok", changed["job"]["next_run"])
    assert "Ran by hand." in open(done["last_output"], encoding="utf-8").read()
    # due soon: the server runs it itself
    soon = request(served, "POST", "/api/jobs", {"schedule": "1s", "prompt": "say when"})[1]["job"]
    wait_until(lambda: runs_of(soon["id"])["runs"] == 1, served.process, timeout=30)
    assert runs_of(soon["id"])["state"] == "done"
    assert [m["content"] for m in wire_server.requests[-1].body["messages"] if m["role"] == "user"] == ["say when"]
    # mistakes and the end
    assert request(served, "POST", "/api/jobs", {"schedule": "every 1h"})[0] == 400  # no prompt
    assert request(served, "POST", "/api/jobs", {"schedule": "bogus", "prompt": "x"})[0] == 400
    assert request(served, "DELETE", f"/api/jobs/{job['id']}") == (200, {"deleted": job["id"]})
    status, gone = request(served, "GET", f"/api/jobs/{job['id']}")
    assert status == 404 and gone["error"]["code"] == "job_not_found"
    assert "jobs" in request(served, "GET", "/v1/capabilities")[1]["endpoints"]
