"""chat's ``/background PROMPT`` (hermes-agent's; also ``/bg``): a prompt worked on beside the chat, by an agent and in
a session of its own (the chat's model and tools), while the user goes on chatting.

Its answer is shown when it comes: at the prompt, above the line being typed; during a turn or a command, after it
(the chat holds its ``screen`` lock while it works). Nobody can be asked for approval in the background, so a command
that needs one is refused (``/yolo`` and ``--yolo`` hold). ``/agents`` lists the tasks; leaving the chat stops those
still running, whose sessions stay stored to resume.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from plugins.sessions import titles

WAIT = 5.0  # seconds the chat's end waits for a stopped task to store its turn


@dataclass
class Task:
    number: int
    prompt: str
    agent: Any
    started: float = field(default_factory=time.monotonic)
    ended: Optional[float] = None
    outcome: str = "running"  # then: done, failed, stopped
    thread: Optional[threading.Thread] = None

    def line(self) -> str:
        took = (self.ended or time.monotonic()) - self.started
        prompt = self.prompt if len(self.prompt) <= 60 else self.prompt[:60] + "..."
        return f"background #{self.number}  {self.outcome} {took:.0f} s  session {self.agent.session_id}  {prompt}"


class Tasks:
    """A chat's background tasks."""

    def __init__(self, chat: Any):
        self.chat = chat
        self.all: list = []

    @property
    def running(self) -> list:
        return [task for task in self.all if task.outcome == "running"]

    def start(self, prompt: str) -> str:
        from kernel.agent import Agent, AgentError

        main = self.chat.agent
        try:  # what the chat uses now (a /model switch included), no front end: nobody to show or ask
            agent = Agent(main.host, main.provider_config, toolsets=main.toolsets, platform=main.platform)
        except AgentError as exc:
            return f"cannot start a background task: {exc}"
        task = Task(len(self.all) + 1, prompt, agent)
        task.thread = threading.Thread(target=self._run, args=(task,), name=f"hermes-background-{task.number}",
                                       daemon=True)
        self.all.append(task)
        task.thread.start()
        return (f"background #{task.number} started in session {agent.session_id}: its answer is shown here when it "
                "comes; chat on meanwhile (/agents lists it)")

    def _run(self, task: Task) -> None:
        from kernel.types import Interrupted

        try:
            result = task.agent.run_conversation(task.prompt)
        except Interrupted:  # stopped inside a plugin's hook
            task.outcome, answer = "stopped", ""
        except Exception as exc:  # noqa: BLE001 - the chat goes on; the task says what went wrong
            task.outcome, answer = "failed", f"{type(exc).__name__}: {exc}"
        else:
            if result.interrupted:
                task.outcome, answer = "stopped", ""
            elif result.exit_reason == "error":
                task.outcome, answer = "failed", str(result.error)
            else:
                task.outcome, answer = "done", result.final_response or "(no answer: the iteration budget ran out)"
        task.ended = time.monotonic()
        try:
            if task.outcome != "stopped":
                with self.chat.screen:  # after the chat's turn, if one runs
                    self._show(task, answer)
            if task.outcome == "done" and titles.wanted(task.agent):  # named as a chat's session is
                titles.start(task.agent, task.prompt, answer).join(WAIT)
        finally:
            task.agent.close()

    def _show(self, task: Task, answer: str) -> None:
        from plugins.terminal.console import Console

        chat = self.chat
        chat.say(f"── {task.line()}", "status" if task.outcome == "done" else "error")
        if task.outcome == "done":  # as the chat shows its own answers (sys.stdout: above the prompt, while it is up)
            Console(quiet=True, markdown=chat.console.markdown or "raw").end_answer(answer)
        else:
            chat.say(answer, "error")
        if chat.agent.config.get("display.bell_on_complete") and sys.stdout.isatty():
            sys.stdout.write("\a")
            sys.stdout.flush()

    def stop(self) -> list:
        """The chat ends: each running task is stopped, and its turn stored; the lines saying where to resume them."""
        from hermes.cli.app import program

        running = self.running
        for task in running:
            task.agent.interrupt()
        deadline = time.monotonic() + WAIT
        for task in self.all:  # a task that ended as the chat did still shows its answer
            task.thread.join(max(0.0, deadline - time.monotonic()))
        return [f"background #{task.number} stopped; resume it with: {program()} chat --resume {task.agent.session_id}"
                if task.agent.messages else f"background #{task.number} stopped before it began: {task.prompt}"
                for task in running]


def command(chat: Any, args: str) -> Optional[str]:
    if not args:
        return "usage: /background PROMPT  (worked on beside the chat, in a session of its own; also /bg)"
    chat.background = chat.background or Tasks(chat)
    return chat.background.start(args)
