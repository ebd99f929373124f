"""The chat's input line: prompt_toolkit on a terminal (editing, history kept
in the data folder, multi-line input, slash-command completion), plain lines
when stdin is a pipe or a file (scripts, tests).

Keys: Enter sends; Alt+Enter (or Esc then Enter) starts a new line;
a paste keeps its newlines (a big one stands in the line as a placeholder: :class:`Pastes`); Up/Down walk the
history; Tab completes a
``/command`` (and ``/image``'s file); Ctrl+C clears the line; Ctrl+D on an empty line leaves."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Callable, Optional

Commands = Callable[[], dict]  # name -> one line of help, asked each time (plugins may add some)
PASTED = re.compile(r"\[Pasted text #\d+: \d+ lines \u2192 (.+?)\]")


KEPT_DAYS = 30  # a paste's file, as the images of plugins.images


class Pastes:
    """hermes-agent's collapsed pastes: a paste of ``lines`` lines or ``chars`` characters and more (``limits()``; 0:
    never) is kept in a file of ``folder`` and stands in the input line as ``[Pasted text #N: L lines → FILE]``, which
    the message sent holds whole again. The line stays short to edit, and a huge paste does not stall the editor."""

    def __init__(self, folder: Path, limits: Callable[[], tuple]):
        self.folder, self.limits, self.count = folder, limits, 0

    def placeholder(self, text: str) -> Optional[str]:
        lines, chars = self.limits()
        if not (lines and text.count("\n") >= lines or chars and len(text) >= chars):
            return None
        self.count += 1
        if self.count == 1:
            self.prune()
        path = self.folder / f"paste-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{self.count}.txt"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as out:
                out.write(text)
        except OSError:  # a read-only data folder: the paste goes in whole
            return None
        return f"[Pasted text #{self.count}: {text.count(chr(10)) + 1} lines \u2192 {path}]"

    def prune(self) -> None:
        """Pastes older than :data:`KEPT_DAYS` go (the message sent held each whole; only a line of the input history
        names the file): the folder does not grow for ever."""
        cutoff = time.time() - KEPT_DAYS * 86400
        for old in self.folder.glob("paste-*.txt") if self.folder.is_dir() else ():
            try:
                if old.stat().st_mtime < cutoff:
                    old.unlink()
            except OSError:
                pass

    @staticmethod
    def expand(text: str) -> str:
        def whole(found):
            try:
                return Path(found.group(1)).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):  # gone: the model reads the placeholder, and can look for the file
                return found.group(0)

        return PASTED.sub(whole, text) if "[Pasted text #" in text else text


class LineEditor:
    def __init__(self, prompt: "str | Callable[[], str]", history: Optional[Path], commands: Commands,
                 preview: Callable[[], tuple] = lambda: (2, 2), pastes: Optional[Pastes] = None):
        self.prompt = prompt if callable(prompt) else lambda: prompt  # asked at each drawing: the last is at Enter
        self.preview = preview  # (first, last): the lines of a long message kept on the screen once it is sent
        self.pastes = pastes
        self.interactive = sys.stdin.isatty() and sys.stdout.isatty()
        self._session = self._build(history, commands) if self.interactive else None

    def read(self, above: bool = False, default: str = "") -> Optional[str]:
        """The next line the user sends; None when they leave (Ctrl+D, end of
        input). Ctrl+C clears the line and asks again. ``above``: what other threads print meanwhile is shown above
        the line being typed; ``default``: the line starts with it (at a terminal)."""
        if self._session is None:
            sys.stdout.write(self.prompt())
            sys.stdout.flush()
            line = sys.stdin.readline()
            return line.rstrip("\n") if line else None
        while True:
            try:
                if above:
                    from prompt_toolkit.patch_stdout import patch_stdout

                    with patch_stdout(raw=True):
                        return self._sent(Pastes.expand(self._session.prompt(default=default)))
                return self._sent(Pastes.expand(self._session.prompt(default=default)))
            except KeyboardInterrupt:
                default = ""  # as in a shell: the line is dropped, the chat goes on
            except EOFError:
                return None

    def _sent(self, text: str) -> str:
        """The line sent stays on the screen (prompt_toolkit erased it), a long one as its first and last lines
        (hermes-agent's display.user_message_preview): a pasted log does not fill the scrollback."""
        from plugins.terminal.style import paint
        from plugins.text import printable

        first, last = self.preview()
        lines, prompt = [printable(line, sys.stdout) for line in text.split("\n")], self.prompt()
        if len(lines) > first + last + 1:
            hidden = paint(f"... ({len(lines) - first - last} more lines)", "dim", sys.stdout)
            lines = lines[:first] + [hidden] + lines[len(lines) - last:]
        sys.stdout.write(paint(prompt, "prompt", sys.stdout) + ("\n" + self._continuation(len(prompt))).join(lines)
                         + "\n")
        sys.stdout.flush()
        return text

    @staticmethod
    def _continuation(width: int) -> str:
        return " " * (width - 2) + ". "

    def _build(self, history: Optional[Path], commands: Commands):
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import Completer, Completion, PathCompleter
        from prompt_toolkit.document import Document
        from prompt_toolkit.formatted_text import FormattedText
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.keys import Keys

        files = PathCompleter(expanduser=True)

        class SlashCompleter(Completer):
            def get_completions(self, document, complete_event):
                typed = document.text_before_cursor
                if typed.startswith("/image "):  # a file's path
                    yield from files.get_completions(Document(typed[len("/image "):]), complete_event)
                    return
                if not typed.startswith("/") or " " in typed:
                    return
                for name, help_text in sorted(commands().items()):
                    if name.startswith(typed[1:]):
                        yield Completion(f"/{name}", start_position=-len(typed), display_meta=help_text)

        keys = KeyBindings()

        @keys.add("escape", "enter")  # not Ctrl+J: an Enter typed ahead during a turn arrives as one
        def _newline(event):
            event.current_buffer.insert_text("\n")

        @keys.add(Keys.BracketedPaste)
        def _paste(event):
            text = event.data.replace("\r\n", "\n").replace("\r", "\n")
            buffer = event.current_buffer
            kept = self.pastes.placeholder(text) if self.pastes and not buffer.text.startswith("/") else None
            buffer.insert_text(kept or text)

        store = InMemoryHistory()
        if history is not None:
            try:
                history.parent.mkdir(parents=True, exist_ok=True)
                history.touch(exist_ok=True)
                store = FileHistory(str(history))
            except OSError as exc:  # a read-only data folder: this chat's history is kept in memory only
                sys.stderr.write(f"chat history not saved ({history}: {exc.strerror})\n")
        return PromptSession(
            lambda: FormattedText([("ansigreen bold", self.prompt())]),
            history=store, completer=SlashCompleter(), complete_while_typing=True,
            key_bindings=keys, multiline=False, enable_history_search=False,
            prompt_continuation=lambda width, *_: self._continuation(width), erase_when_done=True,
        )
