"""An answer shown as it is written (hermes-agent's ``display.platforms.telegram.streaming``): once a second or so the
text so far goes out as a draft, one message sent and then edited, with a cursor; a tool call ends the draft where
it is (the model's words before it stay), shows in the turn's list of tool calls (one message, edited as they come;
``display.tool_progress: off`` leaves it out), and the next words start another draft. At the turn's end the last
draft becomes the answer, marked up; an answer too long for one message is sent in parts after it."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Optional

from plugins.gateway.hookspecs import PlatformError
from plugins.gateway.sending import first_part

log = logging.getLogger("hermes.gateway")
CURSOR = " ▉"
EVERY = 1.5  # seconds between edits: Telegram takes about one a second in a chat


class Draft:
    def __init__(self, platform: Any, chat: str, mask: Callable[[str], str], every: float = EVERY,
                 progress: bool = True, cursor: str = CURSOR):
        self.platform, self.chat, self.mask, self.every = platform, chat, mask, every  # mask: the keys out
        self.cursor = cursor
        self.progress, self.calls, self.listed = progress, [], None  # the tool calls' lines, and their message
        self.words: list = []  # the deltas since the draft began
        self.message: Optional[str] = None  # the id of the message being edited
        self.shown = ""
        self.lock, self.done = threading.Lock(), threading.Event()
        self.thread = threading.Thread(target=self._run, name="hermes-gateway-draft", daemon=True)
        self.thread.start()

    def add(self, text: str) -> None:
        with self.lock:
            self.words.append(text)

    def tool_started(self, line: str) -> None:
        """The words so far stay as they are (no cursor); ``line`` (the call, in a few words) joins the list of the
        turn's calls; the next words start a new draft."""
        with self.lock:
            text = "".join(self.words)
            if text.strip():  # the model's words before the call: kept, as their own message
                self._show(text, final=True)
            self.words, self.message, self.shown = [], None, ""
            if self.progress:
                self.calls.append(f"⚙️ {self.mask(line)}")
                listed = "\n".join(self.calls)[-self.platform.most:]
                try:
                    if self.listed is None:
                        self.listed = self.platform.send(self.chat, listed, final=False)
                    else:
                        self.platform.edit(self.chat, self.listed, listed, final=False)
                except PlatformError as exc:
                    log.warning("gateway: the tool calls could not be shown: %s", exc)

    def _run(self) -> None:
        while not self.done.wait(self.every):
            with self.lock:
                text = "".join(self.words)
                if text.strip() and text != self.shown and len(text) + len(self.cursor) <= self.platform.most:
                    self._show(text, final=False)

    def _show(self, text: str, final: bool) -> None:
        shown = self.mask(text) + ("" if final else self.cursor)
        try:
            if self.message is None:
                self.message = self.platform.send(self.chat, shown, final=final)
            else:
                self.platform.edit(self.chat, self.message, shown, final=final)
            self.shown = text
        except PlatformError as exc:  # the answer is sent whole at the end either way
            log.warning("gateway: a draft could not be shown: %s", exc)

    def finish(self, answer: str) -> str:
        """Stop drafting; the answer put into the draft being edited, when there is one: what is left to send."""
        self.done.set()
        self.thread.join()
        with self.lock:
            if self.message is None or not answer.strip():
                return answer
            cut = first_part(answer, self.platform.most)
            self._show(answer[:cut], final=True)
            return answer[cut:]
