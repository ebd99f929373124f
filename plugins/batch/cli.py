"""``hermes batch PROMPTS.jsonl --out TRAJECTORIES.jsonl [--workers N]``: many prompts, each an independent
run, on a pool of local worker processes (:mod:`plugins.batch.worker`); trajectories in hermes-agent's
batch-runner format, appended as each run ends. Running the same command again skips the prompts already
written, so a batch that was stopped (Ctrl+C, kill -9, a crash) goes on where it was."""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from pathlib import Path

import click

from hermes.cli.app import EXIT_INTERRUPTED, EXIT_USAGE, App, Fail, echo_json, program
from hermes.cli.output import document_stream
from plugins.front import build_agent, prepare_store, provider_options


class Worker:
    """One worker process and the thread that reads its answers into the pool's queue."""

    def __init__(self, number: int, settings: dict, answers: queue.Queue, log):
        import subprocess  # here: every command imports this module, to list `hermes batch`

        env = dict(os.environ, HERMES_BATCH_PARENT=str(os.getpid()))
        self.number, self.task = number, None
        self.proc = subprocess.Popen([sys.executable, "-m", "plugins.batch.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log, env=env, text=True, encoding="utf-8")
        self.send(settings)
        threading.Thread(target=self._read, args=(answers,), daemon=True, name=f"hermes-batch-{number}").start()

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()

    def _read(self, answers: queue.Queue) -> None:
        for line in self.proc.stdout:
            answers.put((self, json.loads(line)))
        answers.put((self, None))  # it ended

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Progress:
    """One line on stderr: done/total, rate, ETA, failures; redrawn on a terminal, a line every 10 s elsewhere."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.done, self.failed, self.quiet = total, 0, 0, quiet
        self.started = self.last = time.monotonic()
        self.tty = sys.stderr.isatty()

    def line(self) -> str:
        took = time.monotonic() - self.started
        rate = self.done / took if took > 0 else 0.0
        eta = (self.total - self.done - self.failed) / rate if rate else 0
        eta_text = f"{int(eta // 60)}m{int(eta % 60):02d}s" if rate else "-"
        failed = f"  {self.failed} failed" if self.failed else ""
        return (f"{program()} batch: {self.done}/{self.total} ({100 * self.done // max(self.total, 1)}%)  "
                f"{rate:.2f} prompts/s  ETA {eta_text}{failed}")

    def show(self, final: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if self.tty:
            click.echo("\r\x1b[K" + self.line() + ("\n" if final else ""), err=True, nl=False)
        elif final or now - self.last >= 10:
            click.echo(self.line(), err=True)
            self.last = now

    def say(self, text: str) -> None:
        """A line of its own above the bar."""
        if not self.quiet:
            click.echo(("\r\x1b[K" if self.tty else "") + text, err=True)
            self.show()


class BatchGroup(click.Group):
    """``hermes batch PROMPTS.jsonl ...`` runs a batch (the ``run`` subcommand); ``hermes batch worker`` serves
    a DBOS queue."""

    def parse_args(self, ctx, args):
        if not args or args[0] not in self.commands:  # --help too: the options a user looks for are run's
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("batch", cls=BatchGroup)
def batch():
    """Run the prompts of a JSON-lines file, each as its own run, and write their trajectories.

    hermes batch PROMPTS.jsonl --out TRAJECTORIES.jsonl [--workers N] runs them (see `hermes batch run --help`);
    with durable.engine: dbos on PostgreSQL they go on a DBOS queue that `hermes batch worker` on other hosts
    takes prompts from too."""


@batch.command("run")
@click.argument("prompts_file", metavar="PROMPTS.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), metavar="FILE.jsonl",
              help="Where the trajectories go (appended; what it holds is skipped; -: stdout).")
@click.option("--workers", "-w", type=click.IntRange(min=0, max=256), default=1, show_default=True,
              help="Prompts run at once by this command (worker processes; on a DBOS queue, 0: only the workers').")
@provider_options
@click.option("--json", "as_json", is_flag=True, help="Print a summary as JSON on stdout (no progress line).")
@click.pass_obj
def run_batch(app: App, prompts_file: Path, out: Path, workers: int, as_json: bool, **opts):
    """Run every prompt of PROMPTS.jsonl (one JSON object per line with a "prompt", and optionally its own
    "model", "toolsets" and "max_turns") as its own run, and append each run's trajectory to --out.

    With durable.engine: dbos on PostgreSQL the prompts go on a DBOS queue: `hermes batch worker` on any host
    that reaches the database runs them too."""
    from plugins.batch.dataset import DatasetError, read_prompts, written

    if opts.get("resume"):
        raise Fail("--resume: every prompt of a batch starts a session of its own", EXIT_USAGE)
    to_stdout = str(out) == "-"  # piped on (`--out - | jq`): nothing to skip, nothing appended to
    if to_stdout and as_json:
        raise Fail("--json prints its summary on stdout, where --out - sends the trajectories: give --out a file",
                   EXIT_USAGE)
    try:
        prompts, ignored = read_prompts(prompts_file)
        done, cut = written(out, prompts) if not to_stdout else ({}, False)
    except DatasetError as exc:
        raise Fail(str(exc), EXIT_USAGE) from None
    if ignored:
        click.echo(f"{program()}: note: {prompts_file}: {', '.join(ignored)} ignored (a line may set "
                   "prompt, model, toolsets, max_turns)", err=True)
    if cut:
        click.echo(f"{program()}: note: {out}: its last line was cut short (a stopped batch); it runs again",
                   err=True)
    todo = [p for p in prompts if p.index not in done]
    summary = {"prompts": len(prompts), "already": len(done), "written": 0, "failed": 0, "errors": [],
               "out": str(out)}
    if todo:
        try:  # before any run, so that no run is lost for want of a place to write it
            fd = os.dup(document_stream().fileno()) if to_stdout else \
                os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # descriptor 1 is stderr while we run
        except OSError as exc:
            raise Fail(f"{out}: cannot write the trajectories there: {exc.strerror}") from None
        prepare_store(app, dict(opts))  # a store that cannot be used is one line now, before any worker starts
        if _on_queue(app):  # and so is a provider that cannot be built: the runs may be on other hosts
            build_agent(app, dict(opts), None, platform="batch").close()
            summary.update(_run_on_queue(app, todo, prompts, fd, out, workers, opts, as_json))
        elif not workers:
            raise Fail("--workers 0 runs nothing here: it is for a batch on a DBOS queue (durable.engine: dbos on "
                       "PostgreSQL), whose workers run the prompts", EXIT_USAGE)
        else:
            summary.update(_run(app, todo, fd, workers, opts, as_json))
    if as_json:
        echo_json(summary)
    elif not todo:
        click.echo(f"{program()}: all {len(prompts)} prompts are in {out} already", err=True)
    else:
        already = f" ({len(done)} were there already)" if done else ""
        click.echo(f"{program()}: {summary['written']} trajectories written to {'stdout' if to_stdout else out}"
                   f"{already}", err=True)
    if summary.get("interrupted"):
        sys.exit(EXIT_INTERRUPTED)
    if summary["failed"]:
        sys.exit(1)


for _param in run_batch.params:  # run's options, but a batch resumes no session
    if _param.name == "resume":
        _param.hidden = True


class Outcomes:
    """The answers of a batch's runs: each trajectory appended to ``fd`` as it comes, each failure said."""

    def __init__(self, fd: int, progress: Progress):
        self.fd, self.progress = fd, progress
        self.written, self.failed, self.errors = 0, 0, []

    def take(self, answer: dict) -> None:
        from plugins.batch.dataset import append_line

        if "line" in answer:
            append_line(self.fd, answer["line"])
            self.written += 1
            self.progress.done += 1
        else:
            self.failed += 1
            self.progress.failed += 1
            self.errors.append({"prompt_index": answer["index"], "error": answer["error"]})
            self.progress.say(f"{program()}: prompt {answer['index']} failed: {answer['error']}")
        self.progress.show()

    def interrupted(self, what_next: str) -> dict:
        """Ctrl+C: what was written, and ``what_next`` (how to go on) said."""
        self.progress.say(f"{program()}: interrupted: {self.written} trajectories written; {what_next}")
        return {"written": self.written, "failed": self.failed, "errors": self.errors, "interrupted": True}

    def summary(self, seconds: float, quiet: bool, log: str) -> dict:
        self.progress.show(final=True)
        if self.failed and not quiet:
            click.echo(f"{program()}: {self.failed} prompt(s) failed (run the same command to try them again); "
                       f"{log}", err=True)
        return {"written": self.written, "failed": self.failed, "errors": self.errors, "seconds": round(seconds, 3),
                "per_second": round(self.written / seconds, 3) if seconds else None}


def _settings(app: App, opts: dict) -> dict:
    return {"distro": app.distro_path, "opts": {k: v for k, v in opts.items() if k != "resume"}}


def _on_queue(app: App) -> bool:
    """``durable.engine: dbos`` on PostgreSQL: the batch goes on the DBOS queue (dbos is an extra)."""
    if not (app.config.get("durable.engine") == "dbos" and
            str(app.config.get("durable.database_url") or "").startswith(("postgresql://", "postgres://", "${"))):
        return False
    import importlib.util

    if importlib.util.find_spec("dbos") is None:
        raise Fail("durable.engine is dbos but dbos is not installed: pip install 'hermes-kernel[durable]'")
    return True


def _run_on_queue(app: App, todo: list, prompts: list, fd: int, out: Path, workers: int, opts: dict,
                  quiet: bool) -> dict:
    """Put ``todo`` on the DBOS queue and append each trajectory to ``fd`` as its workflow ends."""
    from plugins.batch import dbos_queue as on_queue
    from plugins.durable.engine import EngineError

    try:
        on_queue.start(app, workers)
    except EngineError as exc:
        raise Fail(str(exc)) from None
    outcomes, started = Outcomes(fd, Progress(len(todo), quiet)), time.monotonic()
    try:
        ids = on_queue.enqueue(on_queue.batch_key(str(out), prompts), _settings(app, opts), todo)
        on_queue.wait(ids, outcomes.take, tick=outcomes.progress.show)
    except KeyboardInterrupt:
        return outcomes.interrupted("the prompts stay on the queue: run the same command to collect them")
    finally:
        os.close(fd)
    return outcomes.summary(time.monotonic() - started, quiet, "see the workers' output")


@batch.command("worker")
@click.option("--workers", "-w", type=click.IntRange(min=1, max=256), default=1, show_default=True,
              help="Prompts this worker runs at once.")
@click.option("--name", help="A name that outlives this process: a worker started again with it takes back the "
                             "prompts it was running.")
@click.pass_obj
def worker(app: App, workers: int, name: str):
    """Take prompts of `hermes batch` from the DBOS queue (durable.engine: dbos on PostgreSQL) until stopped."""
    import threading

    from plugins.batch import dbos_queue as on_queue
    from plugins.durable.engine import EngineError
    from plugins.sessions_postgres import shown

    if not _on_queue(app):
        raise Fail("hermes batch worker takes prompts from a DBOS queue: set durable.engine: dbos and "
                   "durable.database_url: postgresql://... in config.yaml", EXIT_USAGE)
    try:
        on_queue.start(app, workers, name)
    except EngineError as exc:
        raise Fail(str(exc)) from None
    click.echo(f"{program()} batch worker: taking up to {workers} prompt(s) at once from "
               f"{shown(str(app.config.get('durable.database_url')))}; Ctrl+C stops", err=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)


def _run(app: App, todo: list, fd: int, workers: int, opts: dict, quiet: bool) -> dict:
    """Run ``todo`` on the workers, appending each trajectory to ``fd`` (closed at the end)."""
    settings = _settings(app, opts)
    log_path = Path(app.config.data_dir) / "logs" / "batch-workers.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    answers: queue.Queue = queue.Queue()
    outcomes, pending = Outcomes(fd, Progress(len(todo), quiet)), list(reversed(todo))
    progress = outcomes.progress
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - the workers' stderr, for the batch's length
    pool = [Worker(n, settings, answers, log) for n in range(min(workers, len(todo)))]
    deaths, started = 0, time.monotonic()

    def give(worker: Worker) -> None:
        worker.task = pending.pop() if pending else None
        if worker.task is not None:
            worker.send({"index": worker.task.index, "prompt": worker.task.text, "hash": worker.task.line_hash,
                         "settings": worker.task.settings})

    try:
        for worker in pool:
            give(worker)
        busy = len([w for w in pool if w.task is not None])
        while busy:
            try:
                worker, answer = answers.get(timeout=0.5)
            except queue.Empty:
                progress.show()
                continue
            if answer is not None and "fatal" in answer:
                raise Fail(answer["fatal"])
            if answer is None:  # the worker ended: its prompt failed; another takes its place
                if worker.task is not None:
                    code, deaths = worker.proc.wait(), deaths + 1
                    outcomes.take({"index": worker.task.index, "error": f"its worker died (exit {code})"})
                    busy -= 1
                    if deaths > 3 * workers:
                        raise Fail(f"workers keep dying ({deaths}); see {log_path}")
                    pool[pool.index(worker)] = replacement = Worker(worker.number, settings, answers, log)
                    give(replacement)
                    busy += replacement.task is not None
                continue
            outcomes.take(answer)
            give(worker)
            busy -= worker.task is None
    except KeyboardInterrupt:
        return outcomes.interrupted("run the same command to go on")
    finally:
        for worker in pool:
            worker.stop()
        os.close(fd)
        log.close()
    return outcomes.summary(time.monotonic() - started, quiet, f"the workers' warnings are in {log_path}")
