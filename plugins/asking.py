"""What a command asks of the person at the terminal, said the same way by every command: a yes or no before
something is deleted (``sessions delete``/``prune``, ``memory clear``) and a file opened in their editor
(``config edit``, ``memory edit``)."""

from __future__ import annotations

from pathlib import Path

import click


def confirm(question: str, refused: str) -> None:
    """Ask. The end of input (a script or cron with nothing to answer) is ``refused`` and the flag to pass, not
    click's bare "Aborted!" after a prompt nobody saw; a piped answer (``yes |``), a no and Ctrl+C are as they were."""
    from hermes.cli.app import Fail

    try:
        click.confirm(question, abort=True)
    except click.Abort as exc:
        if isinstance(exc.__context__, EOFError):
            raise Fail(f"{refused}: no answer came (end of input); pass --yes") from None
        raise


def edit_file(path: Path) -> None:
    """Open ``path`` in $VISUAL or $EDITOR and wait; no editor is one line saying what to do, not click's
    "Error: vi: Editing failed: ..."."""
    from hermes.cli.app import Fail

    try:
        click.edit(filename=str(path))
    except click.ClickException as exc:
        raise Fail(f"cannot open an editor ({exc.message}): set EDITOR, or edit {path} yourself") from None
