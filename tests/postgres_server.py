"""A real PostgreSQL server for the tests: initdb in a temporary folder, started on 127.0.0.1 at a free
port, stopped after. Found where Debian (``/usr/lib/postgresql/N/bin``) or ``pg_config`` puts it; as root
it runs as the ``postgres`` user (initdb refuses root). Tests that need it skip with the reason when
this machine has no PostgreSQL."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional


def bin_dir() -> Optional[Path]:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True).stdout.strip()
        if out and (Path(out) / "initdb").exists():
            return Path(out)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PostgresServer:
    """``start()`` then ``url(dbname)``; ``create_database(name)``; ``stop()``."""

    def __init__(self, port: int):
        self.port = port
        self.bin = bin_dir()
        self.folder = Path(tempfile.mkdtemp(prefix="hermes-pg-"))
        self.data = self.folder / "data"
        self._as: list = []

    def _run(self, *args: str) -> None:
        proc = subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {proc.stderr.strip() or proc.stdout.strip()}")

    def start(self) -> "PostgresServer":
        if self.bin is None:
            raise RuntimeError("no PostgreSQL here (initdb not found)")
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            self._as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.folder, "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        options = f"-p {self.port} -h 127.0.0.1 -k {self.folder} -c fsync=off -c max_connections=100"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
                  "-w", "-t", "60", "start")
        return self

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.data.exists():
            for _ in range(2):
                try:
                    self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
                    break
                except (RuntimeError, subprocess.TimeoutExpired):
                    time.sleep(0.5)
        shutil.rmtree(self.folder, ignore_errors=True)
