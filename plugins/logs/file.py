"""The log file: a handler on the root logger that opens and rotates ``logs/hermes.log`` once there is a record to
write (``logging.handlers`` takes milliseconds to import, which a run that logs nothing does not pay)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Optional

FORMAT = "%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"


def log_path(config: Any) -> Path:
    return Path(config.data_dir) / "logs" / "hermes.log"


class LogFile(logging.Handler):
    def __init__(self, path: Path, level: int, max_bytes: int, backups: int, mask: Any = None):
        super().__init__(level)
        self.path, self.max_bytes, self.backups, self.mask = path, max_bytes, backups, mask
        self.file: Optional[logging.Handler] = None
        self.broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if self.broken:
            return
        try:
            if self.file is None:
                from logging.handlers import RotatingFileHandler

                self.path.parent.mkdir(parents=True, exist_ok=True)
                os.close(os.open(self.path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600))  # not readable by others
                self.file = RotatingFileHandler(self.path, maxBytes=self.max_bytes, backupCount=self.backups,
                                                encoding="utf-8")
                self.file.setFormatter(logging.Formatter(FORMAT))
                self.file.handleError = self.failed  # its own writes and rotations too
            if self.mask is not None:
                record.msg, record.args = self.mask(record.getMessage()), None
            self.file.emit(record)
        except OSError:
            self.failed(record)

    def failed(self, record: Optional[logging.LogRecord] = None) -> None:
        """The file cannot be written (a full disk, a folder it may not write): said once on stderr, not again."""
        import sys

        if not self.broken:
            self.broken = True
            sys.stderr.write(f"hermes: warning: cannot write {self.path} ({sys.exc_info()[1]}); warnings go to "
                             "stderr only\n")

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
        super().close()


def attach(agent: Any) -> None:
    """From now on this process's records of ``logging.level`` and worse go to ``agent``'s data folder's log too
    (one handler per process: a later agent of another data folder moves it)."""
    config = agent.config
    root = logging.getLogger()
    path = log_path(config)
    level = logging.getLevelName(str(config.get("logging.level") or "WARNING").upper())
    level = level if isinstance(level, int) else logging.WARNING
    for handler in list(root.handlers):  # one may be removed on the way
        if isinstance(handler, LogFile):
            if handler.path == path and handler.level == level:
                return
            root.removeHandler(handler)
            handler.close()
    mask = getattr(getattr(agent, "secrets", None), "mask", None)
    if config.get("security.redact_secrets", True) is not False:  # credentials hermes does not know, as in results
        from plugins.redact import redact_text

        known = mask or str
        mask = lambda text: redact_text(known(text))  # noqa: E731
    root.addHandler(LogFile(path, level, int(float(config.get("logging.max_size_mb") or 0) * 1024 * 1024),
                            int(config.get("logging.backup_count") or 0), mask))
    if level < root.getEffectiveLevel():  # INFO: the root lets it through, stderr stays at what it showed
        for handler in root.handlers:
            if handler.level == logging.NOTSET and not isinstance(handler, LogFile):
                handler.setLevel(root.getEffectiveLevel())
        root.setLevel(level)
