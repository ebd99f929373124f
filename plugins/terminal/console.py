"""The terminal front end's callbacks: stream the answer, show what the agent
does, and ask the user (approvals, clarifying questions) when a terminal is
attached. Registered on the command line's Agent only (``terminal_front_end``),
so library users of the same process never see it."""

from __future__ import annotations

import json
import os
import select
import sys
import threading
import time
from typing import Optional

from kernel import hookimpl
from plugins.terminal.style import paint
from plugins.text import printable

SPINNER = "|/-\\"
# the approval question's answers (approve_tool_call's return values)
CHOICES = {"o": "once", "once": "once", "y": "once", "yes": "once", "s": "session", "session": "session",
           "a": "always", "always": "always"}
RESTART_MARKER = "[hermes: the answer above was cut off; it starts again below]"
TOOL_PROGRESS, PROGRESS = "display.tool_progress", ("off", "new", "all", "verbose")  # chat's /verbose goes round
CLARIFY_TIMEOUT = "agent.clarify_timeout"
REASONING_FULL, REASONING_LINES = "display.reasoning_full", 10  # reasoning that came whole: all of it, or this many


def held_back(secrets, text: str) -> tuple:
    """(what may be shown now, key values masked; the tail that could be the
    start of a key value, held back until the next piece of the stream)."""
    text = secrets.mask(text)
    longest = max(len(value) for value, _ in secrets.values)
    for start in range(max(0, len(text) - longest + 1), len(text)):
        if any(value.startswith(text[start:]) for value, _ in secrets.values):
            return text[:start], text[start:]
    return text, ""


def _cut(text: str, most) -> str:
    return text if most is None or len(text) <= most else text[:most] + "..."


def _width(stream) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80


def progress(agent) -> str:
    """``display.tool_progress`` (hermes-agent's, chat's /verbose): off, new (a tool called again in a row gets no
    line), all, verbose (each call's arguments whole, and its result)."""
    mode = _setting(agent, TOOL_PROGRESS, "all", (str, bool))
    if isinstance(mode, bool):
        return "all" if mode else "off"
    return mode.strip().lower() if mode.strip().lower() in PROGRESS else "all"


def _setting(agent, key: str, default, kind: type):
    from plugins.tool_args import setting

    return setting(getattr(agent, "config", None), key, default, kind)  # an agent without config: the default


class Console:
    """Callbacks for ``hermes run`` and ``hermes chat``."""

    __name__ = "console"

    def __init__(self, *, stream_to=None, status_to=None, interactive: Optional[bool] = None, quiet: bool = False,
                 show_reasoning: bool = False, markdown: str = "raw"):
        self.out = stream_to or sys.stdout
        self.err = status_to or sys.stderr
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self._tty = None if interactive is None else False  # the terminal, opened when a piped run asks (_answers)
        self.show_status = not quiet and self.err.isatty()
        self.quiet = quiet
        self.streamed_any = False  # did this turn's answer reach the screen?
        self.answering = False  # the latest model call's text is on the screen and no tool started since
        self.last_stream = ""  # what the latest model call streamed (and the calls it continued)
        self._cut = False  # the latest call's answer stopped at the output limit: the next one goes on with it
        self._mid_line = False  # streamed text without its newline yet
        self._drawn = False  # the spinner's text is on the screen
        self._lock = threading.Lock()
        self._spin: Optional[threading.Thread] = None
        self._spinning = threading.Event()
        self._spin_guard = threading.Lock()
        self._label = "working"
        self._before: dict = {}  # tool call id -> what write_file's file held before it (display.inline_diffs)
        self._held = ""  # the streamed tail that could be the start of a key value
        self.show_reasoning = show_reasoning
        self._reasoning_mid = False  # streamed reasoning without its newline yet (it goes to stderr)
        self._held_reasoning = ""
        self._reasoned = False  # this model call's reasoning was shown as it streamed
        self.inbox: Optional[list] = None  # hermes chat: the messages plugins queued (queue_user_message)
        self.questions = threading.Lock()  # held while a question waits for its answer: chat's busy input reads none
        # display.final_response_markdown, on a terminal only: the answer's lines as shown (plugins.terminal.markdown)
        self.markdown = markdown if markdown in ("render", "strip") and self.out.isatty() else ""
        self._md = None  # this answer's Markdown (it knows whether a code block is open)
        self._partial = ""  # the streamed line not shown yet (its newline has not come)
        self._last_tool = ""  # display.tool_progress new: a tool called again in a row gets no line
        self._unshown: set = set()  # the calls whose line display.tool_progress left out: their end's too
        self._continued = False  # part of the line is on the screen already

    @hookimpl
    def queue_user_message(self, content, agent):
        if self.inbox is None:  # hermes run: no next message to send
            return None
        self.inbox.append(str(content))
        return True

    # -- answer
    @hookimpl
    def on_stream_delta(self, text, agent):
        if self.quiet:
            return
        secrets = getattr(agent, "secrets", None)
        if secrets is not None and secrets.values:  # a key the model repeats is masked here as in the stored answer
            text, self._held = held_back(secrets, self._held + text)
        if text:
            self._write_stream(text)

    @hookimpl
    def on_reasoning(self, text, agent):
        if self.quiet or not self.show_reasoning:
            return
        secrets = getattr(agent, "secrets", None)
        if secrets is not None and secrets.values:
            text, self._held_reasoning = held_back(secrets, self._held_reasoning + text)
        with self._lock:
            self._clear()
            if self._mid_line:  # reasoning after answer text (a later model call): on a line of its own
                self.out.write("\n")
                self.out.flush()
                self._mid_line = False
            self.err.write(paint(printable(text, self.err), "dim", self.err))
            self.err.flush()
            if text:
                self._reasoning_mid, self._reasoned = not text.endswith("\n"), True

    def _write_stream(self, text: str) -> None:
        with self._lock:
            self._clear()
            self._end_reasoning()
            self.streamed_any = self.answering = True
            self.last_stream += text
            text = printable(text, self.out)  # the model's text never drives the terminal
            if self.markdown:
                text = self._lines(text)
            if text:
                self.out.write(text)
                self.out.flush()
                self._mid_line = not text.endswith("\n")

    def _lines(self, text: str) -> str:
        """What of the streamed ``text`` can be shown now, its Markdown shown as ``display.final_response_markdown``
        says: whole lines, and a line wider than the terminal up to its last space."""
        if self._md is None:
            from plugins.terminal.markdown import Markdown
            from plugins.terminal.style import colour_on

            self._md = Markdown(self.markdown, colour_on(self.out), _width(self.out))
        *lines, self._partial = (self._partial + text).split("\n")
        shown = ""
        for line in lines:
            line, self._continued = self._md.line(line, self._continued), False
            shown += "" if line is None else line + "\n"
        if len(self._partial) > self._md.width and not self._partial.lstrip().startswith("|"):  # a table's row waits
            cut = self._partial.rfind(" ") + 1 or len(self._partial)
            shown += self._md.line(self._partial[:cut], self._continued) or ""
            self._partial, self._continued = self._partial[cut:], True
        return shown

    def _show_partial(self) -> None:
        """The streamed line so far, shown without its newline, and a table held back (the model call ended, or a
        line comes between)."""
        if self._md is None:
            return
        line, self._partial = self._md.line(self._partial, self._continued) if self._partial else None, ""
        table = self._md.finish()
        shown = (f"{table}\n" if table else "") + (line or "")
        if shown:
            self.out.write(shown)
            self.out.flush()
            self._mid_line = self._continued = bool(line)

    # -- what the agent is doing
    @hookimpl
    def post_api_request(self, response, agent):
        self._cut = response.finish_reason == "length" and bool(response.content) and not response.tool_calls
        streamed, self._reasoned = self._reasoned, False
        reasoning = (response.reasoning or "").strip()
        if reasoning and not streamed and self.show_reasoning and not self.quiet:  # it came whole: shown now
            lines = reasoning.splitlines()
            if len(lines) > REASONING_LINES and not _setting(agent, REASONING_FULL, False, bool):
                lines = lines[:REASONING_LINES] + [f"... ({len(lines) - REASONING_LINES} more lines; /reasoning "
                                                   "full shows all)"]
            with self._lock:
                self._clear()
                self.err.write(paint(printable("\n".join(lines), self.err), "dim", self.err) + "\n")
                self.err.flush()

    @hookimpl
    def on_thinking(self, active):
        if active:
            self.answering = False
            self.last_stream = self.last_stream if self._cut else ""  # the loop asks for the rest of a cut answer
            self._start_spinner("thinking")
        else:
            self._stop_spinner()
            held, self._held = self._held, ""
            if held:  # the call ended: what was held back is not a key
                self._write_stream(held)
            with self._lock:
                self._show_partial()

    @hookimpl
    def on_status(self, status, detail):
        if status in ("retrying", "fallback") and self.last_stream:
            self._restart_marker()
        if status in ("retrying", "fallback", "compressing", "budget", "moa", "curator"):  # not "interrupted"
            self._line(f"[{status}] {detail}", "status")
            if status in ("retrying", "fallback", "curator") and not self.show_status and not self.quiet:
                from hermes.cli.app import program

                self.err.write(f"{program()}: {status}: {detail}\n")  # no terminal: still say it, as one line
                self.err.flush()

    def _restart_marker(self) -> None:
        """The streamed answer broke off and will come again: never glue the new
        one to the partial text."""
        with self._lock:
            self._clear()
            self._end_line()
            self.out.write(f"{RESTART_MARKER}\n")
            self.out.flush()
            self.last_stream, self._md = "", None

    @hookimpl
    def on_tool_start(self, tool_name, args, tool_call_id, agent):
        from plugins.tool_args import masked

        self.answering = False
        if tool_name == "write_file" and self.show_status and _setting(agent, "display.inline_diffs", True, bool):
            from plugins.terminal.diffs import before

            self._before[tool_call_id] = before(tool_name, args, agent)
        mode = progress(agent)
        if mode == "off" or mode == "new" and tool_name == self._last_tool:  # the line left out, and its end's
            self._unshown.add(tool_call_id)
        else:
            args = masked(args, agent)  # a key the model typed into the call is not shown either
            most = None if mode == "verbose" else _setting(agent, "display.tool_preview_length", 40, int) or None
            shown = list(args.items())[: None if mode == "verbose" else 3]
            preview = ", ".join(f"{k}={_cut(str(v), most)!r}" for k, v in shown)
            self._line(f"-> {tool_name}({preview})", "tool")
        self._last_tool = tool_name
        self._start_spinner(tool_name)

    @hookimpl
    def on_tool_complete(self, tool_name, tool_call_id, result, duration_ms, status, agent):
        self._stop_spinner()
        kept = self._before.pop(tool_call_id, None)
        if tool_call_id in self._unshown:
            self._unshown.discard(tool_call_id)
            return
        secrets = getattr(agent, "secrets", None)
        if progress(agent) == "verbose":  # the result as the model reads it, at most 40 lines
            lines = (secrets.mask(str(result)) if secrets is not None else str(result)).splitlines()
            self._line(f"   {tool_name} {'done' if status == 'ok' else status} ({duration_ms:.0f} ms)",
                       "ok" if status == "ok" else "failed")
            for line in lines[:40] + ([f"... ({len(lines) - 40} more lines)"] if len(lines) > 40 else []):
                self._line(f"     {line}", "dim")
        elif status == "ok":
            self._line(f"   {tool_name} done ({duration_ms:.0f} ms)", "ok")
            if tool_name in ("patch", "write_file") and _setting(agent, "display.inline_diffs", True, bool):
                from plugins.terminal.diffs import diff_of, shown

                diff = diff_of(tool_name, result, kept)
                for line, role in shown(secrets.mask(diff) if secrets is not None else diff):
                    self._line(f"     {line}", role)
            if tool_name in ("patch", "write_file"):  # what the model reads of the file it broke: the user too
                for line in _problems(result)[:4]:
                    self._line(f"     {line}", "failed")
        else:  # what went wrong, in its first line: the model reads the rest
            why = " ".join(str(result or "").split())[:160]
            self._line(f"   {tool_name} {status} ({duration_ms:.0f} ms){': ' + why if why else ''}", "failed")

    # -- questions
    def _answers(self):
        """Where the person's answer is read: stdin at a terminal; when the prompt came on a pipe (``echo ... |
        hermes run``) and the question shows on a terminal, that terminal (as sudo asks); None: nobody to ask."""
        if self.interactive:
            return sys.stdin
        if self._tty is None:
            self._tty = False
            if self.err.isatty():
                try:
                    self._tty = open("/dev/tty", encoding="utf-8", errors="replace")  # noqa: SIM115 - kept open
                except OSError:  # no controlling terminal
                    pass
        return self._tty or None

    @hookimpl
    def approve_tool_call(self, tool_name, args, message, agent):
        answers = self._answers()
        if answers is None:
            return None  # nobody to ask: the kernel fails closed
        wait = agent.config.get("approvals.timeout", 60) or None  # hermes-agent's: a question left alone denies
        self._stop_spinner()
        with self._lock:
            self._clear()
            self._end_line()
        command = (args.get("command") or args.get("code")) if isinstance(args, dict) else None  # a script's too
        shown = isinstance(command, str) and command.strip()[:200] in (message or "")
        text = message if shown else f"{message}\n  {tool_name} {json.dumps(args, ensure_ascii=False)[:500]}"
        ask = paint("Run it? [o]nce, [s]ession, [a]lways, [d]eny", "question", self.err)
        until = f", {wait:g} s: deny" if wait else ""
        with self.questions:
            self.err.write(f"\n{printable(text, self.err)}\n{ask} (Enter: deny, Ctrl+C: stop the turn{until}) ")
            self.err.flush()
            if wait and not select.select([answers], [], [], wait)[0]:
                self.err.write(f"\nno answer within {wait:g} s: denied (approvals.timeout)\n")
                return "deny"
            answer = answers.readline()  # Ctrl+C here interrupts the turn: the call is denied and nothing runs
        return CHOICES.get(answer.strip().lower(), "deny")

    @hookimpl(optionalhook=True)  # brought by agent-tools
    def clarify(self, question, choices, agent):
        answers = self._answers()
        if answers is None:
            return None
        self._stop_spinner()
        wait = _setting(agent, CLARIFY_TIMEOUT, 3600, (int, float)) or None  # hermes-agent's: then the model decides
        with self.questions:
            self.err.write(f"\n{printable(str(question), self.err)}\n")
            for i, choice in enumerate(choices or [], 1):
                self.err.write(f"  {i}. {printable(str(choice), self.err)}\n")
            self.err.write("> ")
            self.err.flush()
            if wait and not select.select([answers], [], [], wait)[0]:
                self.err.write(f"\nno answer within {wait:g} s: the model decides ({CLARIFY_TIMEOUT})\n")
                return None
            answer = answers.readline().strip()
        if choices and answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        return answer

    def say(self, text: str) -> None:
        """A status line of the front end's own (chat's), between the answer's lines."""
        self._line(text, "status")

    # -- helpers (the spinner and status lines share the terminal with the
    # streamed answer: never erase answer text, never draw in the middle of it)
    def _line(self, text: str, role: str = "dim") -> None:
        if not self.show_status:
            return
        with self._lock:
            self._clear()
            self._end_line()
            self.err.write(paint(printable(text, self.err), role, self.err) + "\n")
            self.err.flush()

    def _end_reasoning(self) -> None:
        if self._reasoning_mid:
            self.err.write("\n")
            self.err.flush()
            self._reasoning_mid = False

    def _end_line(self) -> None:
        self._end_reasoning()
        self._show_partial()
        self._continued = False
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False

    def _clear(self) -> None:
        if self._drawn:
            self.err.write("\r\033[K")
            self.err.flush()
            self._drawn = False

    def _start_spinner(self, label: str) -> None:
        if not self.show_status:
            return
        self._label = label
        with self._spin_guard:  # tool starts and completes can come from different threads
            if not self._spinning.is_set():
                self._spinning.set()
                try:
                    self._spin = threading.Thread(target=self._spinner, daemon=True)
                    self._spin.start()
                except BaseException:  # an interrupt sent into this thread (Ctrl+C in plugin code): not spinning
                    self._spinning.clear()
                    raise

    def _spinner(self) -> None:
        i, started = 0, time.monotonic()
        while self._spinning.is_set():
            with self._lock:
                if self._spinning.is_set() and not (self._mid_line or self._reasoning_mid or self._partial):
                    self.err.write(f"\r{SPINNER[i % 4]} {self._label} {time.monotonic() - started:4.1f}s")
                    self.err.flush()
                    self._drawn = True
            i += 1
            time.sleep(0.1)

    def _stop_spinner(self) -> None:
        with self._spin_guard:
            if self._spinning.is_set():
                self._spinning.clear()
                if self._spin is not None and self._spin.is_alive():  # never started if an interrupt cut start()
                    self._spin.join(timeout=0.5)
        with self._lock:
            self._clear()

    def end_answer(self, final: Optional[str] = None) -> None:
        """Finish the turn's output; if the final answer is not what was
        streamed (no streaming, or a plugin rewrote it), print it."""
        self._stop_spinner()
        with self._lock:
            self._end_line()
            streamed = self.last_stream.strip()
            if final and final.strip() != streamed:
                added = streamed and final.lstrip().startswith(streamed)  # a plugin's note under it: that alone
                if self.streamed_any and not self.quiet and not added:
                    self.err.write("(the answer as finally given:)\n")
                shown = printable("\n" + final.lstrip()[len(streamed):].strip("\n") if added else final.rstrip("\n"),
                                  self.out)
                if self.markdown:
                    self._md = None
                    shown = self._lines(shown + "\n")
                    shown += (self._md.finish() or "") if self._md is not None else ""
                self.out.write(shown.rstrip("\n") + "\n")
                self.out.flush()
            self.streamed_any, self.last_stream, self._md = False, "", None


def _problems(result) -> list:
    """A file tool's result's ``syntax`` problem and ``lsp_diagnostics`` (the language server's new errors)."""
    import json

    try:
        found = json.loads(result) if isinstance(result, str) else {}
    except ValueError:
        return []
    if not isinstance(found, dict):
        return []
    lines = [f"syntax: {found['syntax']}"] if found.get("syntax") else []
    return lines + [f"error: {line}" for line in found.get("lsp_diagnostics") or [] if isinstance(line, str)]

