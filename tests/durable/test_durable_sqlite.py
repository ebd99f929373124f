"""The SQLite engine hermes hands DBOS, on whatever SQLite library this Python links."""

from __future__ import annotations

import time


def test_the_engine_answers_unixepoch_subsec_which_dbos_asks_for_on_python_3_12(tmp_path):
    """DBOS on Python >= 3.12 stamps its rows with ``unixepoch('subsec')`` (SQLite >= 3.42), in column defaults
    too; an older library (Debian 12's 3.40) answers NULL, a NOT NULL column refuses the row and DBOS cannot
    launch. The engine's connections answer it on any SQLite; other values keep SQLite's own answer."""
    from plugins.durable.engine import sqlite_engine

    engine = sqlite_engine(f"sqlite:///{tmp_path / 'durable.sqlite'}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE stamped (name TEXT, at INTEGER NOT NULL DEFAULT "
                                   "(unixepoch('subsec') * 1000))")
        connection.exec_driver_sql("INSERT INTO stamped (name) VALUES ('row')")  # the default as DBOS relies on it
        (at,) = connection.exec_driver_sql("SELECT at FROM stamped").one()
        now, day = connection.exec_driver_sql("SELECT unixepoch('subsec'), unixepoch('2024-01-02')").one()
    assert abs(at / 1000 - time.time()) < 60 and abs(now - time.time()) < 60
    assert day == 1704153600
    engine.dispose()
