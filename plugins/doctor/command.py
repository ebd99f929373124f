"""``hermes doctor [--offline] [--json]``: a line per part of the setup; exit 1 when one fails."""

from __future__ import annotations

import os

import click

from hermes.cli.app import program

PROBE_TIMEOUT = 20  # seconds a model's one answer may take here (agent.api_timeout is for long answers)


@click.command("doctor")
@click.option("--offline", is_flag=True, help="Make no request: check the models' settings and keys only.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: a list of {name, status, detail}.")
@click.pass_obj
def doctor(app, offline: bool, as_json: bool):
    """Whether this setup can work: config, plugins, each model (one short request each), the session store,
    the sandbox. Exit 1 when a check fails."""
    from hermes.cli.app import echo_json
    from plugins.doctor.hookspecs import FAIL, WARN

    checks = [_config(app), *_plugins(app), *_asked(app, online=not offline)]
    if as_json:
        echo_json([check._asdict() for check in checks])
    else:
        width = max(len(check.name) for check in checks)
        for check in checks:
            click.echo(f"{check.status:<4}  {check.name:<{width}}  {check.detail}")
        failed, warned = (sum(check.status == status for check in checks) for status in (FAIL, WARN))
        click.echo(f"{failed} failed, {warned} to look at" if failed or warned else "all good", err=True)
    if any(check.status == FAIL for check in checks):
        raise SystemExit(1)


def _config(app):
    from plugins.config_command.cli import config_problems
    from plugins.doctor.hookspecs import FAIL, OK, Check

    path, problems = config_problems(app)
    if not problems:
        return Check("config", OK, path if os.path.exists(path) else f"{path}: none yet (the defaults)")
    more = f" (and {len(problems) - 1} more: `{program()} config check`)" if len(problems) > 1 else ""
    return Check("config", FAIL, problems[0] + more)


def _plugins(app) -> list:
    """A line per plugin that failed to load, or failed in an earlier run; else one saying how many loaded."""
    from hermes.host import loadstate
    from hermes.host.plugins import ENABLED, ERROR
    from plugins.doctor.hookspecs import OK, WARN, Check

    records, earlier = app.host.records, loadstate.failures()
    lines = [Check(f"plugin {r.name}", WARN, f"not loaded: {r.error}") for r in records if r.status == ERROR]
    lines += [Check(f"plugin {r.name}", WARN, f"failed in an earlier run: {', '.join(earlier[r.name])} (`{program()} "
                    f"plugins info {r.name}`)") for r in records if r.status == ENABLED and earlier.get(r.name)]
    return lines or [Check("plugins", OK, f"{sum(r.status == ENABLED for r in records)} enabled, none failed")]


def _asked(app, online: bool) -> list:
    """Every plugin's ``doctor_checks``, with an agent on the configured provider; a check that raised is a line."""
    from kernel.agent import Agent, AgentError
    from plugins.doctor.hookspecs import FAIL, Check

    app.config.overrides["agent.api_timeout"] = min(PROBE_TIMEOUT, app.config.get("agent.api_timeout") or PROBE_TIMEOUT)
    try:
        agent = Agent(app.host, toolsets=[], platform="doctor")  # no tools: a toolset typo is config's line
    except AgentError as exc:
        return [Check("model", FAIL, str(exc))]
    try:
        with app.host.failures.watch(quiet=True) as seen:
            answers = app.host.pm.hook.doctor_checks(agent=agent, online=online)
    finally:
        agent.close()
    lines = [Check(*line) for answer in answers if isinstance(answer, list) for line in answer
             if isinstance(line, tuple) and len(line) == 3]
    return lines + [Check(f"plugin {f.plugin}", FAIL, f"its doctor check failed: {f.error}") for f in seen.failures]
