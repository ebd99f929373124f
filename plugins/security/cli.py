"""``hermes security audit``: each package looked up in OSV.dev (one batch query, then each vulnerability found read
for its severity, summary and fixed versions), the findings by severity; exit 1 when one is at least ``--fail-on``."""

from __future__ import annotations

import re
from pathlib import Path

import click

SEVERITIES = ("low", "moderate", "high", "critical")
PINNED = {"npx": re.compile(r"^(@?[^@\s]+)@(\d[\w.+-]*)$"), "uvx": re.compile(r"^([A-Za-z0-9_.-]+)==([\w.+-]+)$")}


def environment() -> list:
    """(name, version, ecosystem, where) of each Python package of this environment."""
    from importlib.metadata import distributions

    found = {(d.metadata["Name"] or "", d.version) for d in distributions()}
    return [(name, version, "PyPI", "this environment") for name, version in sorted(found) if name]


def plugin_requirements(data_dir: Path) -> list:
    """The ``name==version`` lines of each data-folder plugin's requirements.txt (hermes-agent's plugins)."""
    found = []
    for file in sorted(data_dir.glob("plugins/*/requirements.txt")):
        for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
            pinned = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*==\s*([\w.+-]+)\s*(?:[#;].*)?$", line)
            if pinned:
                found.append((pinned[1], pinned[2], "PyPI", f"plugin {file.parent.name}"))
    return found


def mcp_packages(servers) -> tuple:
    """The packages of the MCP servers started with ``npx`` or ``uvx``: ``(pinned, unpinned)``, unpinned as
    ``(server, its command line)``."""
    pinned, unpinned = [], []
    for name, entry in (servers if isinstance(servers, dict) else {}).items():
        command = Path(str((entry or {}).get("command") or "")).name if isinstance(entry, dict) else ""
        if command not in PINNED:
            continue
        args = [str(a) for a in entry.get("args") or [] if not str(a).startswith("-")]
        match = PINNED[command].match(args[0]) if args else None
        if match:
            pinned.append((match[1], match[2], "npm" if command == "npx" else "PyPI", f"MCP server {name}"))
        else:
            unpinned.append((name, " ".join([command, *args])))
    return pinned, unpinned


def severity_of(vuln: dict) -> str:
    """A vulnerability's severity: the advisory's own (GitHub's LOW, MODERATE, HIGH, CRITICAL), else ``unknown``."""
    said = str((vuln.get("database_specific") or {}).get("severity") or "").lower()
    return {"medium": "moderate"}.get(said, said) if said in (*SEVERITIES, "medium") else "unknown"


def fixed_in(vuln: dict, name: str) -> list:
    """The versions that fix ``vuln`` for the package ``name``."""
    return sorted({str(event["fixed"]) for affected in vuln.get("affected") or []
                   if str((affected.get("package") or {}).get("name") or "").lower() == name.lower()
                   for ranged in affected.get("ranges") or [] for event in ranged.get("events") or []
                   if event.get("fixed")})


def audit(packages: list, osv: str) -> list:
    """The findings for ``packages`` (dicts: package, version, ecosystem, where, id, severity, summary, fixed), the
    most severe first; OSError (one line) when OSV.dev cannot be asked."""
    import httpx2 as httpx

    with httpx.Client(timeout=60, base_url=osv.rstrip("/")) as client:
        try:
            results = []
            for start in range(0, len(packages), 1000):  # OSV.dev's most a batch
                answer = client.post("/v1/querybatch", json={"queries": [
                    {"package": {"name": name, "ecosystem": ecosystem}, "version": version}
                    for name, version, ecosystem, _ in packages[start:start + 1000]]})
                answer.raise_for_status()
                results += answer.json().get("results") or []
            read: dict = {}
            findings = []
            for (name, version, ecosystem, where), result in zip(packages, results):
                for found in (result or {}).get("vulns") or []:
                    if found["id"] not in read:
                        answer = client.get(f"/v1/vulns/{found['id']}")
                        answer.raise_for_status()
                        read[found["id"]] = answer.json()
                    vuln = read[found["id"]]
                    findings.append({"package": name, "version": version, "ecosystem": ecosystem, "where": where,
                                     "id": vuln.get("id", found["id"]), "severity": severity_of(vuln),
                                     "summary": " ".join(str(vuln.get("summary") or "").split()),
                                     "fixed": fixed_in(vuln, name)})
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise OSError(f"cannot ask {osv} ({exc or type(exc).__name__})") from None
    rank = {s: i for i, s in enumerate(("unknown", *SEVERITIES))}
    return sorted(findings, key=lambda f: (-rank[f["severity"]], f["package"].lower(), f["id"]))


@click.group()
def security():
    """What is installed, looked up in OSV.dev's known vulnerabilities (hermes-agent's `hermes security`)."""


@security.command("audit")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="critical", show_default=True,
              help="Exit 1 when a finding is at least this severe.")
@click.option("--skip-venv", is_flag=True, help="Leave out this environment's Python packages.")
@click.option("--skip-plugins", is_flag=True, help="Leave out the data folder's plugins' requirements.")
@click.option("--skip-mcp", is_flag=True, help="Leave out the MCP servers of config.yaml.")
@click.pass_obj
def audit_cmd(app, as_json, fail_on, skip_venv, skip_plugins, skip_mcp):
    """Look up hermes' own Python packages (plugins installed with pip among them), the pinned requirements of the
    data folder's plugins and the MCP servers started with a pinned `npx pkg@1.2.3` or `uvx pkg==1.2.3` in OSV.dev;
    say each known vulnerability, the most severe first, and the versions that fix it."""
    from hermes.cli.app import Fail, echo_json

    config = app.config
    packages = ([] if skip_venv else environment()) + ([] if skip_plugins else plugin_requirements(config.data_dir))
    pinned, unpinned = mcp_packages(config.get("mcp_servers")) if not skip_mcp else ([], [])
    packages += pinned
    try:
        findings = audit(packages, str(config.get("security.osv_url") or "https://api.osv.dev"))
    except OSError as exc:
        raise Fail(f"security audit: {exc}") from None
    failing = [f for f in findings if f["severity"] in SEVERITIES[SEVERITIES.index(fail_on):]]
    if as_json:
        echo_json({"checked": len(packages), "findings": findings, "fail_on": fail_on,
                   "not_checked": [{"mcp_server": n, "command": c, "why": "no version pinned"} for n, c in unpinned]})
    else:
        click.echo(f"{len(packages)} packages looked up in OSV.dev: "
                   f"{len(findings) or 'no'} known vulnerabilit{'y' if len(findings) == 1 else 'ies'}")
        for f in findings:
            fixed = f"; fixed in {', '.join(f['fixed'])}" if f["fixed"] else "; no fixed version yet"
            click.echo(f"  {f['severity'].upper():<9} {f['package']} {f['version']} ({f['where']}): {f['id']} "
                       f"{f['summary']}{fixed}")
        for name, command in unpinned:
            click.echo(f"  not looked up: MCP server {name} ({command}: no version pinned)")
    if failing:
        raise Fail(f"security audit: {len(failing)} known vulnerabilit{'y' if len(failing) == 1 else 'ies'} at "
                   f"least {fail_on} (--fail-on)")
