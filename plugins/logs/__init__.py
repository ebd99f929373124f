"""Built-in plugin logs: hermes' warnings and errors kept in the data folder, and ``hermes logs`` to read them.

Warnings go to stderr, where nobody reads them when hermes runs unattended (``hermes serve``, ``cron``, batch
workers, an editor's ACP agent). From the first session a process starts, they also go to
``<data folder>/logs/hermes.log``, each line with its time and process. hermes-agent's keys say how much and how
long: ``logging.level`` (WARNING here; INFO adds a line per HTTP request), ``logging.max_size_mb`` (the file is
rotated at that size) and ``logging.backup_count`` (the rotated files kept). Known key values are masked, and with
``security.redact_secrets`` the credentials the redact plugin finds in tools' results."""

from __future__ import annotations

from kernel import hookimpl

LEVELS = ("debug", "info", "warning", "error", "critical")  # either case: INFO as hermes-agent writes it


@hookimpl
def register_config(declare):
    declare("logging.level", str, "WARNING", "what goes to the data folder's logs/hermes.log: WARNING (and worse), "
            "or INFO, which adds a line per HTTP request", choices=LEVELS)
    declare("logging.max_size_mb", float, 5, "the size at which logs/hermes.log is rotated (0: never)", minimum=0)
    declare("logging.backup_count", int, 3, "rotated logs kept (hermes.log.1 is the newest)", minimum=0)


@hookimpl
def register_commands(cli):
    from plugins.logs.cli import logs

    cli.add_command(logs)


@hookimpl
def on_session_start(agent):
    from plugins.logs.file import attach

    attach(agent)


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """What the log holds of the last day: nothing to see, or how many warnings and errors, and how to read them."""
    import time

    from plugins.doctor.hookspecs import OK, WARN, Check
    from plugins.logs.cli import read, wanted
    from plugins.logs.file import log_path

    path = log_path(agent.config)
    if not path.exists():
        return [Check("logs", OK, f"{path}: nothing logged yet")]
    said = read(path, wanted("WARNING", time.time() - 86400))
    if not said:
        return [Check("logs", OK, f"{path}: no warnings in the last day")]
    errors = sum(r["level"] in ("ERROR", "CRITICAL") for r in said)
    return [Check("logs", WARN, f"warnings and errors in the last day: {len(said)} ({errors} errors); the last: "
                  f"{said[-1]['message'].splitlines()[0][:160]} (`hermes logs --since 1d`)")]
