"""What chat does with a line typed while a turn runs (hermes-agent's ``display.busy_input_mode``, chat's ``/busy``).

During a turn the terminal is in its line mode (prompt_toolkit has given it back), so a line arrives whole at Enter:

* ``interrupt`` (the default): the turn stops, as at Ctrl+C, and the line is the next message. While the model's
  answer is coming on the screen the line waits for it instead (a line typed as an answer ends is the next question,
  and stopping the turn then would lose the answer: Ctrl+C still stops it);
* ``queue``: the turn goes on; the line is the next message after it;
* ``steer``: the turn goes on, and the model reads the line, as a message of the user's, after the tool call that
  is running or the next one. A turn that ends without another tool call has it sent as the next message.

``/queue TEXT`` and ``/steer TEXT`` send one line as those modes do. Another line starting with ``/`` is a chat
command: it runs after the turn, whatever the mode. Nothing typed is lost: what
is not sent into the turn is sent after it. Only at a terminal: piped input is a script's next messages."""

from __future__ import annotations

import os
import select
import sys
import threading
from typing import Any

from plugins.terminal import STEER

MODE = "display.busy_input_mode"
MODES = ("interrupt", "queue", "steer")
MEANS = {"interrupt": "stops the turn and is the next message", "queue": "is sent when the turn ends",
         "steer": "reaches the model after its current tool call"}
SAID = {"interrupt": "(interrupting: your message goes next)", "queue": "(queued: it goes when this turn ends)",
        "steer": "(steering: the model reads it after its current tool call)"}


class BusyInput:
    """The lines typed during one turn (a context around it): ``typed`` holds what is to be sent after it."""

    def __init__(self, chat: Any):
        self.agent, self.console = chat.agent, chat.console
        self.typed: list = []  # text, and commands, in the order typed
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self) -> "BusyInput":
        if self.console.interactive and sys.stdin.isatty():
            self.agent.state[STEER] = []
            self._thread = threading.Thread(target=self._read, name="hermes-busy-input", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        unread = self.agent.state.pop(STEER, None) or []  # no tool call came after them
        self.typed[:0] = unread

    def _read(self) -> None:
        fd, rest = sys.stdin.fileno(), b""
        while not self._stop.is_set():
            if not select.select([fd], [], [], 0.05)[0]:
                continue
            with self.console.questions:  # never an answer to the approval question the console is asking
                if not select.select([fd], [], [], 0)[0]:
                    continue
                rest += os.read(fd, 65536)  # b"" at Ctrl+D: nothing to send, and the chat goes on
            *lines, rest = rest.split(b"\n")
            for line in lines:
                self._take(line.decode("utf-8", errors="replace").strip())
        if rest.strip():
            self.typed.append(rest.decode("utf-8", errors="replace").strip())

    def _take(self, line: str) -> None:
        if not line:
            return
        mode = self.agent.config.get(MODE)
        word, _, rest = line[1:].partition(" ")
        if line.startswith("/") and word in ("queue", "q", "steer") and rest.strip():  # this line's mode, named
            line, mode = rest.strip(), "steer" if word == "steer" else "queue"
        elif line.startswith("/"):
            self.typed.append(line)
            self.console.say(f"(/{line[1:].split(' ')[0]} runs when this turn ends)")
            return
        if mode == "steer":
            self.agent.state[STEER].append(line)
        elif self.typed and not self.typed[-1].startswith("/"):
            self.typed[-1] += "\n" + line  # lines typed one after another are one message
        else:
            self.typed.append(line)
        if mode in ("queue", "steer") or self.agent.interrupted:
            self.console.say(SAID.get(mode, SAID["interrupt"]))
        elif self.console.answering:
            self.console.say("(the answer is coming: your message goes next)")
        else:
            self.console.say(SAID["interrupt"])
            self.agent.interrupt(line)


def steer(agent: Any) -> None:
    """After a tool call, on the agent's thread: the lines steered so far enter the history before the next model
    call (the kernel's ``redirect``)."""
    lines = agent.state.get(STEER)
    taken = []
    while lines:
        taken.append(lines.pop(0))
    if taken:
        agent.redirect("\n".join(taken))
