"""``hermes logs``: the records of the data folder's ``logs/hermes.log``, the last ones or each new one as it comes,
with hermes-agent's filters (``errors``, ``--level``, ``--since``)."""

from __future__ import annotations

import collections
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Iterable, Iterator, Optional

import click

from hermes.cli.app import Fail, echo_json

LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d{3} ([A-Z]+) \[(\d+)\] ([^:\s]+): (.*)$")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def records(lines: Iterable[str]) -> Iterator[dict]:
    """The log's records: ``{time, level, pid, logger, message, text}``; a line that starts none (a traceback's)
    belongs to the record before it."""
    record: Optional[dict] = None
    for line in lines:
        line = line.rstrip("\n")
        match = LINE.match(line)
        if match is None and record is not None:
            record["message"] += "\n" + line
            record["text"] += "\n" + line
            continue
        if record is not None:
            yield record
        when, level, pid, logger, message = match.groups() if match else (None, None, None, None, line)
        record = {"time": when, "level": level, "pid": int(pid) if pid else None, "logger": logger,
                  "message": message, "text": line}
    if record is not None:
        yield record


def wanted(level: Optional[str], since: Optional[float]):
    """Whether a record passes ``--level`` and ``--since`` (one a rotation cut in two passes both)."""
    least = LEVELS.index(level) if level else 0

    def test(record: dict) -> bool:
        if record["level"] in LEVELS and LEVELS.index(record["level"]) < least:
            return False
        return not (since and record["time"] and datetime.strptime(record["time"], "%Y-%m-%d %H:%M:%S").timestamp()
                    < since)
    return test


def read(path: Path, test, most: Optional[int] = None) -> list:
    """The last ``most`` records of the log that pass ``test`` (all of them: None), read through once."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return list(collections.deque((r for r in records(fh) if test(r)), maxlen=most))


def follow(path: Path, test) -> None:
    """Print each new record that passes ``test`` until Ctrl+C, from the new file after a rotation."""
    position, inode = (path.stat().st_size, path.stat().st_ino) if path.exists() else (0, None)
    while True:
        stat = path.stat() if path.exists() else None
        if stat is not None:
            if stat.st_ino != inode or stat.st_size < position:  # rotated (or emptied): the new file from its start
                inode, position = stat.st_ino, 0
            if stat.st_size > position:
                with open(path, "rb") as fh:
                    fh.seek(position)
                    data = fh.read()
                complete = data[:data.rfind(b"\n") + 1]  # a line still being written waits for its end
                position += len(complete)
                for record in records(complete.decode("utf-8", errors="replace").splitlines()):
                    if test(record):
                        click.echo(record["text"])
        time.sleep(0.25)


@click.command("logs")
@click.argument("which", required=False, type=click.Choice(["agent", "errors"]), metavar="[agent|errors]")
@click.option("-n", "--lines", "count", type=click.IntRange(min=0), default=50, show_default=True,
              help="How many of the last records to show.")
@click.option("-f", "--follow", "following", is_flag=True, help="Then print each new record as it comes (Ctrl+C ends).")
@click.option("--level", type=click.Choice(LEVELS, case_sensitive=False), help="Only records of this level and worse.")
@click.option("--since", "age", metavar="AGE", help="Only records since then: 30m, 12h, 2d, or a date (2026-11-01).")
@click.option("--path", "show_path", is_flag=True, help="Print only the log file's path.")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON: time, level, pid, logger, message.")
@click.pass_obj
def logs(app, which, count, following, level, age, show_path, as_json):
    """hermes' warnings and errors, kept in logs/hermes.log of the data folder (logging.level says how much).

    One file holds what hermes-agent splits in two: `errors` shows its warnings and errors only, as --level WARNING.
    """
    from plugins.logs.file import log_path
    from plugins.numbers import cutoff

    path = log_path(app.config)
    if show_path:
        click.echo(str(path))
        return
    if following and as_json:
        raise Fail("--follow prints records as they come; --json is for the last ones only")
    test = wanted((level or ("WARNING" if which == "errors" else "")).upper() or None,
                  cutoff(age, "--since") if age else None)
    if not path.exists() and not following:
        if as_json:
            echo_json({"path": str(path), "records": []})
        else:
            click.echo(f"No log yet: a session writes its warnings and errors to {path}.", err=True)
        return
    try:
        shown = read(path, test, count)
    except OSError as exc:
        raise Fail(f"cannot read {path}: {exc.strerror or exc}") from None
    if as_json:
        echo_json({"path": str(path), "records": [{k: v for k, v in r.items() if k != "text"} for r in shown]})
        return
    for record in shown:
        click.echo(record["text"])
    if following:
        try:
            follow(path, test)
        except KeyboardInterrupt:
            pass


