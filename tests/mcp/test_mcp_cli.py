"""MCP through the CLI as a user runs it: `hermes run` against the wire-protocol server with real MCP servers
(tests/mcp/server.py, and mcp-server-time from the package index), `hermes mcp ...`, and the processes left."""

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

from plugins_providers.testserver import reply
from tests.conftest import hermes_command
from tests.gateway.conftest import clean_environment
from tests.mcp.conftest import SERVER, alive, entry


def write_config(home, servers, **more):
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": servers, **more}))


def run(hermes, wire_server, *extra, **kwargs):
    return hermes("run", "--json", "--base-url", wire_server.openai_url, "--api-mode",
                  "chat_completions", "-m", "gpt-test", *extra, **kwargs)


def tool_results(request):
    return [m["content"] for m in request.body["messages"] if m["role"] == "tool"]


def test_a_published_server_from_the_package_index_answers_the_model(hermes, wire_server, hermes_home):
    write_config(hermes_home, {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time",
                                                                            "--local-timezone", "UTC"]}})
    wire_server.push(reply(tool_calls=[("mcp__time__get_current_time", {"timezone": "Europe/Paris"})]),
                     reply("It is noon."))
    out = run(hermes, wire_server, "What time is it in Paris?", timeout=90)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["final_response"] == "It is noon."  # stdout is the document alone
    offered = [t["function"]["name"] for t in wire_server.requests[0].body["tools"]]
    assert "mcp__time__get_current_time" in offered and "mcp__time__convert_time" in offered
    result = json.loads(json.loads(tool_results(wire_server.requests[1])[0])["result"])
    assert result["timezone"] == "Europe/Paris" and result["datetime"].startswith(time.strftime("%Y-"))
    assert out.stderr == ""


def test_servers_start_only_for_an_agent_and_config_check_names_a_typo(hermes, hermes_home, tmp_path):
    marker = tmp_path / "started"
    write_config(hermes_home, {"t": {"command": "sh", "args": ["-c", f"touch {marker}; exec {sys.executable} {SERVER}"],
                                     "comand": "typo"}})
    for args in (["--help"], ["plugins", "list"], ["config", "check"], ["mcp", "--help"]):
        out = hermes(*args)
        assert not marker.exists(), args
    check = hermes("config", "check")
    assert "unknown key 'mcp_servers.t.comand'" in check.stdout + check.stderr
    assert "did you mean 'mcp_servers.t.command'" in check.stdout + check.stderr or \
        "mcp_servers.t.command" in check.stdout + check.stderr
    write_config(hermes_home, {"t": {"command": sys.executable, "timeout": "soon"}})
    wrong = hermes("config", "check")
    assert wrong.returncode != 0 and "mcp_servers.t.timeout: expected a number" in wrong.stdout + wrong.stderr


def test_failing_servers_are_one_line_each_and_their_stderr_goes_to_the_log(hermes, wire_server, hermes_home):
    write_config(hermes_home, {"ok": entry(), "crash": entry("crash-start"),
                               "hang": entry("hang-start", connect_timeout=2)})
    wire_server.push(reply(tool_calls=[("mcp__ok__echo", {"text": "still works"})]), reply("done"))
    started = time.monotonic()
    out = run(hermes, wire_server, "go", timeout=60)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 12
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and all("warning" in line.lower() for line in lines), out.stderr
    assert any("MCP server 'crash'" in line for line in lines) and any("MCP server 'hang'" in line for line in lines)
    assert "giving up before the handshake" not in out.stderr
    assert "giving up before the handshake" in (hermes_home / "logs" / "mcp-stderr.log").read_text()
    assert json.loads(tool_results(wire_server.requests[1])[0])["result"] == "echo: still works"


def test_hermes_mcp_list_test_add_remove_enable_disable(hermes, hermes_home, http_server):
    web = http_server.replace("//", "//bob:pw-of-bob@", 1) + "?token=s3cret-value&v=2"  # as a provider's docs say
    write_config(hermes_home, {"ok": entry(), "crash": entry("crash-start"), "web": {"url": web}})
    listed = hermes("mcp", "list", "--json", timeout=60)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["ok"]["status"] == "ready" and "mcp__ok__echo" in rows["ok"]["tools"] and rows["ok"]["transport"] == "stdio"
    assert rows["web"]["status"] == "ready" and rows["web"]["transport"] == "http"
    assert rows["crash"]["status"] == "failed" and rows["crash"]["last_error"]
    text = hermes("mcp", "list", timeout=60).stdout
    assert "ok" in text and "ready" in text and "last error:" in text
    # a listing pasted into an issue carries no token: the URL's password and token-like query values are hidden
    assert rows["web"]["where"].endswith("?token=***&v=2") and "//bob:***@" in rows["web"]["where"]
    assert "s3cret-value" not in listed.stdout + text and "pw-of-bob" not in listed.stdout + text
    tested = hermes("mcp", "test", "ok", timeout=60)
    assert tested.returncode == 0 and tested.stdout.startswith("ok: connected in ") and "mcp__ok__add" in tested.stdout
    failed = hermes("mcp", "test", "crash", timeout=60)
    assert failed.returncode == 1 and failed.stderr.startswith("hermes: error: MCP server 'crash' did not connect")
    unknown = hermes("mcp", "test", "nope")
    assert unknown.returncode == 2 and "no MCP server 'nope'" in unknown.stderr and "Traceback" not in unknown.stderr

    (hermes_home / "config.yaml").write_text("# my servers\nmcp_servers:\n  ok:  # the test one\n"
                                             f"    command: {sys.executable}\n    args: [{SERVER}]\n")
    added = hermes("mcp", "add", "two", "--env", "A=1", "--", sys.executable, str(SERVER), "normal")
    assert added.returncode == 0, added.stderr
    assert hermes("mcp", "add", "remote", "--url", http_server, "--header", "Authorization=Bearer ${TOKEN}").returncode == 0
    assert hermes("mcp", "add", "two", "--", "x").returncode == 2  # already there
    assert hermes("mcp", "add", "bad", "--url", http_server, "--header", "novalue").returncode == 2
    assert hermes("mcp", "disable", "ok").returncode == 0
    text = (hermes_home / "config.yaml").read_text()
    assert "# my servers" in text and "# the test one" in text  # a round trip keeps the comments
    config = yaml.safe_load(text)["mcp_servers"]
    assert config["two"] == {"command": sys.executable, "args": [str(SERVER), "normal"], "env": {"A": "1"}}
    assert config["remote"] == {"url": http_server, "headers": {"Authorization": "Bearer ${TOKEN}"}}
    assert config["ok"]["enabled"] is False
    rows = {r["name"]: r for r in json.loads(hermes("mcp", "ls", "--json", timeout=60).stdout)}  # hermes-agent's
    assert rows["ok"]["status"] == "disabled" and rows["two"]["status"] == "ready"  # short names: ls, rm
    assert hermes("mcp", "enable", "ok").returncode == 0 and hermes("mcp", "rm", "two").returncode == 0
    config = yaml.safe_load((hermes_home / "config.yaml").read_text())["mcp_servers"]
    assert "two" not in config and config["ok"]["enabled"] is True
    assert hermes("mcp", "remove", "two").returncode == 2



def test_hermes_agents_toolsets_hermes_cli_offers_every_tool_and_the_servers(hermes, wire_server, hermes_home):
    """`toolsets: [hermes-cli]`, hermes-agent's default in every config.yaml it writes, stopped each run with
    "unknown toolset 'hermes-cli'". It means every tool there, and here: an MCP server's too (a composite toolset
    taking in `all` now takes in the servers' toolsets, which the agent's `offers` read literally)."""
    write_config(hermes_home, {"ok": entry()}, toolsets=["hermes-cli"])
    assert hermes("config", "check").returncode == 0
    wire_server.push(reply("fine"))
    out = run(hermes, wire_server, "hi", timeout=60)
    assert out.returncode == 0, out.stderr
    offered = {t["function"]["name"] for t in wire_server.requests[0].body["tools"]}
    assert {"terminal", "read_file", "mcp__ok__echo"} <= offered


def test_a_server_that_never_answers_the_handshake_is_said_by_list_and_test(hermes, hermes_home):
    """`mcp list` waited the connect timeout and could then show it as `connecting` with no error (`mcp test`:
    "did not connect: connecting"), as it did any server its --timeout ran out on."""
    write_config(hermes_home, {"hang": entry("hang-start", connect_timeout=2)})
    (row,) = json.loads(hermes("mcp", "list", "--json", timeout=60).stdout)
    assert row["last_error"] == "no answer within its connect_timeout (2s)", row  # still connecting, or failed
    failed = hermes("mcp", "test", "hang", timeout=60)
    assert failed.returncode == 1 and failed.stderr == ("hermes: error: MCP server 'hang' did not connect: no answer "
                                                        "within its connect_timeout (2s)\n")
    (row,) = json.loads(hermes("mcp", "list", "--json", "--timeout", "0.5", timeout=60).stdout)
    assert (row["status"], row["last_error"]) == ("connecting", "no answer within --timeout (0.5s)")


def test_adding_a_server_whose_command_is_not_installed_warns_and_keeps_it(hermes, hermes_home):
    """``npx`` without Node: the entry is kept (the user may install it next), and a warning says now what
    ``hermes mcp test`` would say later; a command that is found, on PATH or by path, gets no warning."""
    added = hermes("mcp", "add", "web", "--", "no-such-mcp-launcher", "-y", "@example/server")
    assert added.returncode == 0 and "added MCP server 'web'" in added.stdout
    assert "warning: 'no-such-mcp-launcher' is not found on PATH here" in added.stderr
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["mcp_servers"]["web"]["command"] == \
        "no-such-mcp-launcher"
    for name, command in (("by-path", sys.executable), ("on-path", "sh")):
        found = hermes("mcp", "add", name, "--", command, str(SERVER))
        assert found.returncode == 0 and "warning" not in found.stderr, found.stderr


def test_adding_a_server_that_could_never_connect_is_refused_and_writes_nothing(hermes, hermes_home):
    """`--url ftp://x` was written, listed as failed and said only by the first `mcp test` or run."""
    for url in ("ftp://example.com/mcp", "example.com/mcp"):
        out = hermes("mcp", "add", "t", "--url", url)
        assert out.returncode == 2 and out.stderr.strip() == \
            f"hermes: error: MCP server 't': url must start with http:// or https:// (got {url!r})", out.stderr
    for name in ("", "my.server", "my server"):  # were written: '' and a space make no toolset name, a dot two keys
        out = hermes("mcp", "add", name, "--url", "https://example.com/mcp")
        assert out.returncode == 2 and out.stderr.strip() == f"hermes: error: {name!r} is not a server name: letters, " \
            "digits, - and _ (its tools are mcp__NAME__TOOL)", out.stderr
    assert not (hermes_home / "config.yaml").exists()
    assert hermes("mcp", "add", "t", "--url", "https://example.com/mcp").returncode == 0


def test_a_secret_given_to_mcp_add_is_refused_and_passed_by_name_instead(hermes, hermes_home, wire_server):
    """`mcp add gh --env GITHUB_TOKEN=ghp_...` wrote the token into config.yaml (world-readable, kept in backups),
    where `config set` refuses any key. `--env NAME` writes a reference the server gets from hermes' environment."""
    for args in (("--env", "SERVICE_TOKEN=tok-123"), ("--header", "Authorization=Bearer tok-123")):
        out = hermes("mcp", "add", "svc", *args, "--", sys.executable, str(SERVER), "normal")
        assert out.returncode == 2 and "hermes keeps no secret in config.yaml" in out.stderr, out.stderr
        assert "tok-123" not in out.stderr and not (hermes_home / "config.yaml").exists()
    out = hermes("mcp", "add", "svc", "--env", "SERVICE_TOKEN", "--env", "TZ=UTC", "--", sys.executable, str(SERVER),
                 "normal")
    assert out.returncode == 0, out.stderr
    written = yaml.safe_load((hermes_home / "config.yaml").read_text())["mcp_servers"]["svc"]["env"]
    assert written == {"SERVICE_TOKEN": "${SERVICE_TOKEN}", "TZ": "UTC"}
    wire_server.push(reply(tool_calls=[("mcp__svc__env_of", {"name": "SERVICE_TOKEN"})]), reply("done"))
    out = run(hermes, wire_server, "go", env={"SERVICE_TOKEN": "tok-123"}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(tool_results(wire_server.requests[1])[0])["result"] == "[tok-123]"  # from the environment
    out = hermes("mcp", "add", "web", "--url", "https://example.com/mcp", "--header", "Authorization=Bearer ${TOK}")
    assert out.returncode == 0, out.stderr


def _pids(path, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.1)
    raise AssertionError("the server did not write its pids")


def _gone(pids, within=6.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


def test_no_process_a_server_started_outlives_hermes_even_one_that_ignores_sigterm(hermes, wire_server, hermes_home,
                                                                                  tmp_path):
    pids_file = tmp_path / "pids"
    write_config(hermes_home, {"stubborn": entry("stubborn", pids_file)})
    wire_server.push(reply(tool_calls=[("mcp__stubborn__echo", {"text": "x"})]), reply("done"))
    started = time.monotonic()
    out = run(hermes, wire_server, "go", timeout=60)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 15
    assert _gone(_pids(pids_file)) == []


def test_a_killed_hermes_leaves_no_server_behind(wire_server, hermes_home, tmp_path):
    pids_file = tmp_path / "pids"
    write_config(hermes_home, {"stubborn": entry("stubborn", pids_file)})
    wire_server.push(reply("too late", delay=60))
    env = {**os.environ, "HERMES_HOME": str(hermes_home)}
    process = subprocess.Popen(hermes_command() + ["run", "--json", "--no-save", "--base-url", wire_server.openai_url,
                               "--api-mode", "chat_completions", "-m", "gpt-test", "go"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pids = _pids(pids_file)
        deadline = time.monotonic() + 30
        while not wire_server.requests and time.monotonic() < deadline:
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        assert _gone(pids) == []
    finally:
        if process.poll() is None:
            process.kill()


def test_hermes_doctor_connects_each_server_and_names_the_one_that_fails(hermes, hermes_home):
    """`hermes doctor` has a line per MCP server: its tools when it connects, its error when not (a real server
    process each); --offline starts none."""
    write_config(hermes_home, {"ok": entry(), "crash": entry("crash-start"), "off": {**entry(), "enabled": False}})
    out = hermes("doctor", "--json", timeout=60)
    checks = {c["name"]: (c["status"], c["detail"]) for c in json.loads(out.stdout)}
    assert checks["mcp ok"][0] == "ok" and checks["mcp ok"][1].endswith(" tools") and " 0 tools" not in checks["mcp ok"][1]
    assert checks["mcp crash"][0] == "fail" and "mcp off" not in checks
    offline = {c["name"]: c["status"] for c in json.loads(hermes("doctor", "--offline", "--json", timeout=60).stdout)}
    assert offline["mcp ok"] == offline["mcp crash"] == "ok"


def test_mcp_import_takes_another_clients_servers_and_never_their_secrets(hermes, hermes_home, tmp_path):
    """`hermes mcp import FILE`: Claude Desktop's, Cursor's or VS Code's server list into config.yaml (each was
    retyped with `mcp add`). A key in the file is not copied: ${VAR} is written and the user told to export it."""
    import sys

    from tests.mcp.conftest import SERVER

    write_config(hermes_home, {"kept": entry()})
    clients = tmp_path / "claude_desktop_config.json"
    clients.write_text(json.dumps({"mcpServers": {
        "local echo": {"command": sys.executable, "args": [str(SERVER), "normal"],
                       "env": {"API_TOKEN": "sk-not-for-config", "MODE": "quiet"}},
        "kept": {"command": "other"},
        "remote": {"type": "sse", "url": "https://mcp.example.com/sse", "headers": {"Authorization": "Bearer x1"}},
        "nothing": {"args": []}}}))
    dry = hermes("mcp", "import", clients, "--dry-run")
    assert dry.returncode == 0 and "would add 'local-echo'" in dry.stdout
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["mcp_servers"].keys() == {"kept"}
    out = hermes("mcp", "import", clients)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1:4] == [
        "  named 'local-echo' here ('local echo' has characters a server name cannot)",
        "  env API_TOKEN: its secret is not copied; written as ${API_TOKEN}: export API_TOKEN",
        "skipped 'kept': already configured here"]
    assert "skipped 'nothing': neither a command nor a url" in out.stdout
    text = (hermes_home / "config.yaml").read_text()
    assert "sk-not-for-config" not in text and "x1" not in text
    servers = yaml.safe_load(text)["mcp_servers"]
    assert servers["local-echo"]["env"] == {"API_TOKEN": "${API_TOKEN}", "MODE": "quiet"}
    assert servers["remote"] == {"url": "https://mcp.example.com/sse", "transport": "sse",
                                 "headers": {"Authorization": "${REMOTE_AUTHORIZATION}"}}
    assert servers["kept"] == entry()
    listed = json.loads(hermes("mcp", "list", "--json", "--timeout", "20", env={"API_TOKEN": "t"}).stdout)
    echo = next(row for row in listed if row["name"] == "local-echo")
    assert echo["status"] == "ready" and "mcp__local_echo__echo" in echo["tools"]
    bad = tmp_path / "notes.json"
    bad.write_text("{not json")
    out = hermes("mcp", "import", bad)
    assert out.returncode == 1 and out.stderr.startswith(f"hermes: error: {bad}: not JSON (")


def test_mcp_import_without_a_file_takes_the_first_client_config_found(hermes, hermes_home, tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"users": {"command": "a"}}}))
    (project / ".vscode").mkdir(parents=True)
    (project / ".vscode" / "mcp.json").write_text(json.dumps({"servers": {"proj": {"type": "stdio", "command": "b"}}}))
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    out = hermes("mcp", "import", "--dry-run", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2] == [
        f"from {Path('.vscode', 'mcp.json')} (also found: {home / '.cursor' / 'mcp.json'}; give one as FILE)",
        "would add 'proj' (b)"]
    out = hermes("mcp", "import", env=env, cwd=tmp_path)
    assert out.stdout.splitlines()[:2] == [f"from {home / '.cursor' / 'mcp.json'}", "added 'users' (a)"]
    none = hermes("mcp", "import", env={"HOME": str(tmp_path / "empty"), "XDG_CONFIG_HOME": str(tmp_path)}, cwd=tmp_path)
    assert none.returncode == 2 and "no MCP config of Claude Desktop, Cursor or VS Code found here" in none.stderr


def test_an_oauth_server_is_signed_in_to_once_then_its_tokens_are_used_and_refreshed(hermes, hermes_home, wire_server,
                                                                                      oauth_server):
    """hermes-agent's `auth: oauth`: `hermes mcp login` registers hermes with the server (dynamic registration),
    says the sign-in address and takes the browser's answer on a loopback port (the test is the browser here);
    later connections use the kept tokens, and an expired one is refreshed, not signed in again."""
    url, issued = oauth_server
    added = hermes("mcp", "add", "linear", "--url", url, "--auth", "oauth")
    assert added.stdout == "added MCP server 'linear'; `hermes mcp login linear` signs in to it\n", added.stderr
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["mcp_servers"]["linear"] == {
        "url": url, "auth": "oauth"}
    unsigned = hermes("mcp", "test", "linear")
    assert unsigned.returncode == 1 and unsigned.stderr.strip() == (
        "hermes: error: MCP server 'linear' did not connect: it needs a sign-in: `hermes mcp login linear`")

    def sign_in(*how: str) -> str:
        """`hermes mcp login linear` (or ``how``), the test as the browser: what it printed."""
        login = subprocess.Popen([*hermes_command(), "mcp", *(how or ("login", "linear"))], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env={**clean_environment(hermes_home),
                                                                         "BROWSER": "true"})  # no browser opens
        said = [login.stderr.readline()]
        while not said[-1].startswith("http"):
            assert said[-1], login.communicate()  # it ended without saying where to sign in
            said.append(login.stderr.readline())
        address = said[-1].strip()
        assert said[-2].startswith("Sign in to linear at this address") and re.match(
            r"http://127\.0\.0\.1:\d+/authorize\?", address), said
        with urllib.request.urlopen(address, timeout=10) as page:  # the server approves at once, back to hermes
            assert page.read() == b"Signed in: hermes has it. You can close this page."
        out, err = login.communicate(timeout=30)
        assert login.returncode == 0, err
        return out

    assert sign_in() == "signed in to linear: 1 tools\n"
    kept = hermes_home / "mcp-tokens" / "linear.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and json.loads(kept.read_text())["access_token"].startswith("at-")
    assert (hermes_home / "mcp-tokens" / "linear.client.json").exists()  # hermes-agent's files
    tested = hermes("mcp", "test", "linear")
    assert tested.returncode == 0 and "  mcp__linear__whoami" in tested.stdout, tested.stderr
    assert "refreshed" not in issued.read_text()
    wire_server.push(reply(tool_calls=[("mcp__linear__whoami", {})]), reply("You are hermes."))
    assert run(hermes, wire_server, "who am I there?").returncode == 0
    client = json.loads((hermes_home / "mcp-tokens" / "linear.client.json").read_text())["client_id"]
    assert f"client {client}" in tool_results(wire_server.requests[1])[0]  # the call carried hermes' token
    tokens = json.loads(kept.read_text())
    kept.write_text(json.dumps({**tokens, "expires_at": time.time() - 1}))  # an hour later: it has expired
    again = hermes("mcp", "test", "linear")
    assert again.returncode == 0, again.stderr
    log = issued.read_text().splitlines()
    assert sum(line.startswith("registered") for line in log) == 1 and log.count("refreshed") == 1  # not signed in
    assert json.loads(kept.read_text())["access_token"] != tokens["access_token"]  # again
    before = json.loads(kept.read_text())["access_token"]
    assert sign_in("reauth", "--all") == "signed in to linear: 1 tools\n"  # again, with the registration kept
    assert json.loads(kept.read_text())["access_token"] != before
    assert sum(line.startswith("registered") for line in issued.read_text().splitlines()) == 1
    assert hermes("mcp", "logout", "linear").stdout == "signed out of linear\n" and not kept.exists()
    assert "it needs a sign-in" in hermes("mcp", "test", "linear").stderr
    assert hermes("mcp", "login", "nope").stderr == "hermes: error: no MCP server 'nope'\n"
    assert hermes("mcp", "reauth").stderr == "hermes: error: `reauth NAME` or `reauth --all`\n"


def test_mcp_configure_chooses_the_tools_offered_with_flags_or_at_a_terminal(hermes, hermes_home):
    """hermes-agent's `hermes mcp configure NAME`: the server's tools, those offered marked; the choice is the
    server's tools.include in config.yaml (comments kept), and the agent is offered only those."""
    import pexpect

    write_config(hermes_home, {"ok": entry(), "down": entry("crash-start")})
    (hermes_home / "config.yaml").write_text("# my servers\n" + (hermes_home / "config.yaml").read_text())
    only = hermes("mcp", "configure", "ok", "--only", "echo,add", timeout=60)
    assert only.returncode == 0 and "MCP server 'ok': 2 of its" in only.stdout, only.stderr
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["mcp_servers"]["ok"]["tools"] == {
        "include": ["echo", "add"]}
    assert (hermes_home / "config.yaml").read_text().startswith("# my servers\n")
    listed = json.loads(hermes("mcp", "list", "--json", timeout=60).stdout)
    offered = next(r for r in listed if r["name"] == "ok")["tools"]  # (and the resources' and prompts' own tools)
    assert {"mcp__ok__add", "mcp__ok__echo"} <= set(offered) and not {"mcp__ok__die", "mcp__ok__pid"} & set(offered)

    without = hermes("mcp", "configure", "ok", "--without", "die", timeout=60)
    assert without.returncode == 0, without.stderr
    kept = yaml.safe_load((hermes_home / "config.yaml").read_text())["mcp_servers"]["ok"]["tools"]["include"]
    assert "die" not in kept and "echo" in kept and "pid" in kept
    unknown = hermes("mcp", "configure", "ok", "--only", "ech", timeout=60)
    assert unknown.returncode == 2 and "MCP server 'ok' has no tool 'ech'" in unknown.stderr
    no_terminal = hermes("mcp", "configure", "ok", timeout=60)
    assert no_terminal.returncode == 2 and "no terminal to ask at" in no_terminal.stderr
    down = hermes("mcp", "configure", "down", "--all", timeout=60)
    assert down.returncode == 1 and "MCP server 'down' did not connect" in down.stderr

    # at a terminal: the list, numbers switch tools, Enter saves
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = pexpect.spawn(hermes_command()[0], [*hermes_command()[1:], "mcp", "configure", "ok"], env=env,
                          encoding="utf-8", timeout=60, dimensions=(40, 200))
    child.expect("Enter: save")
    names = re.findall(r"\s(\d+) \[(x| )\] (\w+)", child.before)
    marked = {tool for _, mark, tool in names if mark == "x"}
    assert marked == set(kept)
    number = {tool: n for n, _, tool in names}
    child.sendline(f"{number['die']} {number['echo']}")  # die on, echo off
    child.expect("Enter: save")
    child.sendline("")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    chosen = yaml.safe_load((hermes_home / "config.yaml").read_text())["mcp_servers"]["ok"]["tools"]["include"]
    assert set(chosen) == set(kept) - {"echo"} | {"die"}
    everything = hermes("mcp", "configure", "ok", "--all", timeout=60)
    assert everything.returncode == 0 and "tools" not in yaml.safe_load(
        (hermes_home / "config.yaml").read_text())["mcp_servers"]["ok"]  # every tool: no policy left
