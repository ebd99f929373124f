"""What ``hermes run``, ``chat``, ``cron``, ``batch`` and ``acp`` share: the provider options, building the agent,
the session store's questions, Ctrl+C, and the end of a turn as an exit code."""

from __future__ import annotations

import signal
import sys
from types import SimpleNamespace
from typing import Optional

import click

from hermes.cli.app import EXIT_BUDGET, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, App, Fail, program
from plugins.numbers import FiniteRange
from plugins.text import printable

PROVIDER_OPTIONS = ("model", "provider", "base_url", "api_mode", "api_key_env")  # ProviderConfig's fields


def provider_options(f):
    for option in reversed([
        click.option("-m", "--model", help="Model name."),
        click.option("--provider", help="Provider name (openai, anthropic, openrouter, ...)."),
        click.option("--base-url", help="API base URL."),
        click.option("--api-mode", help="chat_completions, codex_responses, anthropic_messages, ..."),
        click.option("--api-key-env", help="Environment variable holding the API key."),
        click.option("--max-turns", type=click.IntRange(min=1), help="Iteration budget for a turn."),
        click.option("-t", "--toolsets", help="Toolsets to offer, comma-separated (else config's or all; \"\": none)."),
        click.option("-r", "--resume", metavar="SESSION_ID", help="Continue a stored session (its model and toolsets too)."),
        click.option("--no-save", is_flag=True, help="Store nothing of this conversation (e.g. while state.db is damaged)."),
        click.option("--yolo", is_flag=True, help="Approve every command without asking (approvals.mode off)."),
        click.option("--timeout", type=FiniteRange(min=0, min_open=True), metavar="SECONDS",
                     help="Give up on a provider that sends nothing for this long (agent.stream_idle_timeout, 60)."),
    ]):
        f = option(f)
    return f


skills_option = click.option("-s", "--skills", "preload", multiple=True, metavar="NAME", help="A skill whose "
                             "instructions hold for the whole session (repeat, or comma-separate; hermes-agent's).")


def preload_skills(app: App, given: tuple) -> None:
    """``-s NAME``: the skills plugin keeps the skills' instructions in the system prompt (``skills.preload``, which
    they replace); an unknown one is said now, before any call."""
    names = [name.strip() for names in given for name in names.split(",") if name.strip()]
    if not names:
        return
    host = app.host  # (the plugins declare their keys as they load: `run` comes before)
    if "skills.preload" not in app.config.keys:
        raise Fail("-s: no skills plugin is enabled (see `hermes plugins list`)")
    from plugins.skills import skills_of
    from plugins.skills.catalog import SkillError, lookup

    skills = skills_of(app.config, host)
    try:
        app.config.overrides["skills.preload"] = [lookup(skills, name).name for name in names]
    except SkillError as exc:
        raise Fail(f"-s: {exc}") from None


def build_agent(app: App, opts: dict, console, session_id: Optional[str] = None, platform: str = "cli"):
    from kernel.agent import Agent, AgentError
    from kernel.types import ProviderConfig

    toolsets = None if opts.get("toolsets") is None else [t.strip() for t in opts["toolsets"].split(",") if t.strip()]
    if opts.get("timeout"):
        app.config.overrides["agent.stream_idle_timeout"] = opts["timeout"]
    if opts.get("yolo"):
        app.config.overrides["approvals.mode"] = "off"
    given = {key: opts.get(key) for key in PROVIDER_OPTIONS}
    started = ask_store(app, "session_info", needed=False, session_id=session_id) if session_id else None
    started = started if isinstance(started, dict) else {}
    if started and not any(given[key] for key in PROVIDER_OPTIONS[1:]):  # as it was started (-m: another model)
        given = {key: given[key] or str(started.get(key) or "") for key in PROVIDER_OPTIONS}
    toolsets = started.get("toolsets") if toolsets is None else toolsets  # and with its tools (-t: others)
    try:
        provider = ProviderConfig.configured(app.config, **given)
        agent = Agent(app.host, provider, toolsets=toolsets, budget=opts.get("max_turns"),
                      callbacks=[console] if console else (), platform=platform)
    except AgentError as exc:
        raise Fail(str(exc)) from None
    if session_id:
        agent.new_session(resume=session_id)
    _preflight(agent)
    return agent


def _preflight(agent) -> None:
    """A provider that cannot be built (no model, an unknown provider, a URL without a scheme, no key ...) is one
    line now, before any request. With fallback providers configured the loop tries them instead."""
    from kernel.types import CONFIG, ProviderError

    if agent.config.get("fallback_providers") or agent.config.get("fallback_model", None):
        return
    try:
        agent.provider_for(agent.provider_config)
    except ProviderError as exc:
        if exc.reason != CONFIG:
            raise
        agent.close()
        raise Fail(exc.message) from None


def ask_store(app: App, hook_name: str, hint: str = "", needed: bool = True, **kwargs):
    """Ask the session store a question; a store that fails is an error, not an empty answer (a broken
    state.db must not look like a missing session). With no store: an error, or ``None`` when the answer
    is not ``needed``. There is no agent yet: ``agent`` is a stand-in with its ``config`` and ``host``."""
    host = app.host
    caller = getattr(host.pm.hook, hook_name)
    if not caller.get_hookimpls():
        if needed:
            raise Fail("no session store plugin is enabled")
        return None
    with host.failures.watch(quiet=True) as seen:  # a failure is said once, by the error line below
        answer = caller(agent=SimpleNamespace(config=app.config, host=host), **kwargs)
    if answer is None and seen.failures:
        error = seen.failures[-1].error.rstrip(".")  # a StoreError's words are the user's already: not its name
        raise Fail(f"the session store failed: {error.partition(': ')[2] if error.startswith('Store') else error}{hint}")
    return answer


def prepare_store(app: App, opts: dict) -> None:
    """Before the first model call: with ``--no-save`` the store plugins are set aside (said on stderr); otherwise a
    store that cannot be used stops the command here, with one line naming the file, instead of answering and
    losing the turn."""
    host = app.host
    if opts.pop("no_save", False):
        if opts.get("resume") or opts.get("cont"):
            raise Fail("--no-save starts an unstored conversation; it cannot --resume or --continue one", EXIT_USAGE)
        for rec in [r for r in host.records if r.status == "enabled" and "append_messages" in r.hooks]:
            host.set_aside(rec.name, "--no-save")
        click.echo(f"{program()}: note: --no-save: this conversation will not be stored", err=True)
    else:
        ask_store(app, "latest_session", hint="; or pass --no-save to go on without storing this conversation",
                  needed=False, platform="cli")


def session_to_resume(app: App, opts: dict, platform: str) -> Optional[str]:
    """The session ``--resume`` names or, with ``--continue``, the latest of ``platform`` ("cli": ``hermes
    chat``'s, "run"), checked and claimed as :func:`check_session` does; ``None`` for a new one."""
    if (session_id := opts.get("resume")) and opts.get("cont"):
        raise Fail("use either --resume or --continue", EXIT_USAGE)
    if opts.pop("cont", False) and not (session_id := ask_store(app, "latest_session", platform=platform)):
        command = "chat" if platform == "cli" else platform
        raise Fail(f"no earlier {command} to continue (start one with `{program()} {command}`)")
    return check_session(app, session_id) if session_id else None


def check_session(app: App, session_id: str) -> str:
    """The full id of the session to resume (``session_id`` may be a unique prefix)."""
    full = ask_store(app, "resolve_session", session_id=session_id) if app.host.pm.hook.resolve_session.get_hookimpls() \
        else session_id
    if isinstance(full, list):
        raise Fail(f"session id '{session_id}' is ambiguous (matches {', '.join(map(str, full[:2]))}, ...)")
    if not full or ask_store(app, "load_session", session_id=full) is None:
        raise Fail(f"no session '{session_id}' (`hermes sessions list`: an id, a unique start of one, or a title)")
    claim(app, full)
    return full


def claim(app: App, session_id: str) -> None:
    """One writer per session: refuse now, before any model call, when another process is writing it."""
    refused = ask_store(app, "claim_session", needed=False, session_id=session_id)
    if isinstance(refused, str) and refused:
        raise Fail(refused)


class CtrlC:
    """First Ctrl+C interrupts the turn cleanly; a second one exits at once. SIGTERM and SIGHUP (``timeout``, a
    closed terminal) stop it as the first does, so the tools' process groups die and the turn is stored first."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, agent):
        from kernel.types import Interrupted  # here, never in the handler: imports and signals do not mix

        self.agent, self.hits, self.interrupted = agent, 0, Interrupted
        self.stopped_by: Optional[signal.Signals] = None  # the signal that stopped the turn; None: Ctrl+C or none

    def __enter__(self):
        self.previous = {signum: signal.signal(signum, self._handle) for signum in self.SIGNALS}
        return self

    def _handle(self, signum, frame):
        if signum == signal.SIGINT and self.hits:
            raise self.interrupted()
        if self.hits:  # already stopping: `timeout` sends SIGTERM twice (to hermes, then to its group)
            return
        self.hits, self.stopped_by = 1, None if signum == signal.SIGINT else signal.Signals(signum)
        self.agent.interrupt()  # raises here when the turn is inside a plugin's hook: never wait for it

    def __exit__(self, *exc):
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


def shown(app: App, console, answer) -> bool:
    """Did a front end show the answer? One that fails has it printed plainly: it is never lost."""
    failed = object()
    return console is not None and app.host.contain(type(console).__module__, "end_answer", console.end_answer,
                                                    answer, default=failed) is not failed


def finish(result, quiet: bool = False, stopped_by: Optional[signal.Signals] = None) -> None:
    """Say how the turn ended (on stderr, unless ``quiet``) and exit with its
    code; a turn a signal stopped (``stopped_by``) exits with 128 + it."""
    from kernel.types import ExitReason

    budget = ("the iteration budget ran out" + ("; the answer above is the model's last word" if result.final_response
                                                 else " before a final answer") + " (raise it with --max-turns)")
    said, code = {
        ExitReason.ERROR: (f"error: {result.error}", EXIT_ERROR),
        ExitReason.INTERRUPTED: (f"stopped by {stopped_by.name}" if stopped_by else "interrupted",
                                 128 + stopped_by if stopped_by else EXIT_INTERRUPTED),
        ExitReason.BUDGET: (budget, 0 if result.final_response else EXIT_BUDGET),
    }.get(result.exit_reason, ("" if (result.final_response or "").strip() else "the model returned an empty answer", 0))
    if said and not quiet:
        click.echo(printable(f"{program()}: {said}", sys.stderr), err=True)  # an error may quote a server
    if code:
        sys.exit(code)
