"""The ``hermes`` command line (click).

Start-up is kept cheap: this module imports click and nothing else heavy;
config, pluggy and the plugins load only when a command needs them. Plugin
commands (``register_commands``) load when their name is used; ``--help``
lists them from a small cache written whenever plugins were loaded.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Optional

import click

from hermes.cli import clistate as state
from hermes.cli.entry import REMEMBERED, remembered_key, terminal_width
from kernel import __version__

EXIT_ERROR, EXIT_USAGE, EXIT_BUDGET, EXIT_INTERRUPTED = 1, 2, 3, 130


class Fail(click.ClickException):
    """One clear line on stderr and a non-zero exit, never a traceback."""

    def __init__(self, message: str, code: int = EXIT_ERROR):
        super().__init__(message)
        self.exit_code = code

    def show(self, file=None):
        click.echo(f"{program()}: error: {self.format_message()}", err=True)


_args: list = []  # main()'s command line, for remember_output
_program = ["hermes"]  # main()'s prog_name, for messages printed after click's context ended


def program() -> str:
    """The command's name as the user typed it: ``hermes``, or a distro's own command."""
    ctx = click.get_current_context(silent=True)
    return ctx.find_root().info_name if ctx is not None and ctx.find_root().info_name else _program[0]


def echo_json(data) -> str:
    """Print a machine-readable document (and return it). Under ``--json`` it
    is the only thing on stdout: everything else written there goes to
    stderr (see main)."""
    import json

    from hermes.cli.output import document_stream

    text = json.dumps(data, indent=2, default=str, ensure_ascii=False)
    stream = document_stream()
    stream.write(text + "\n")
    stream.flush()
    return text


def remember_output(name: str, text: str) -> None:
    """What this command printed (without the final newline), for
    :mod:`hermes.cli.entry` to print again next time, when the command line is
    one it prints again."""
    if REMEMBERED.get(tuple(_args)) == name:
        state.remember_output(name, remembered_key(name, _program[0]), text)


class App:
    """What the commands share: config, plugin host (both lazy).

    A wrong type in config.yaml does not stop the command line before it
    knows the command: it stops every command except those that inspect or
    repair config (``repairs_config = True`` on the click command, as on
    ``hermes config`` and ``hermes plugins``), so ``hermes config set`` can
    fix what it would otherwise refuse to read."""

    current: Optional["App"] = None  # the command's, for what main() saves at the end

    def __init__(self, distro_path: Optional[str] = None):
        App.current = self
        # before click parsed --distro (an eager --help), the variable is all there is
        self.distro_path = distro_path or os.environ.get("HERMES_DISTRO") or None
        state.use_distro(self.distro_path)  # its own load state, commands and remembered outputs
        self._config = None
        self._host = None
        self._distro = None
        self.strict = False  # set once the command is known (HermesGroup.resolve_command)

    def _checked(self, value):
        problems = self._config.problems if self._config is not None else None
        if self.strict and problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            fix = (f"fix it with `{program()} config set KEY VALUE` (`{program()} config check` lists every problem)"
                   if problems[0].startswith(f"{self._config.where()}:") or self.distro is None
                   else f"the distro sets it ({self.distro.source}): fix it there")  # config.yaml cannot
            raise Fail(f"{problems[0]}{more}; {fix}", EXIT_USAGE)
        return value

    @property
    def distro(self):
        if self._distro is None and self.distro_path:
            from hermes.host.distro import DistroError, load_distro

            try:
                self._distro = load_distro(self.distro_path)
            except DistroError as exc:
                raise Fail(str(exc), EXIT_USAGE) from None
        return self._distro

    @property
    def config(self):
        if self._config is None:
            import logging

            from hermes.host.config import ConfigError, load_config

            # warnings of the kernel and of plugin code, once there is config to act on (not for --help)
            logging.basicConfig(format=f"{_program[0]}: %(levelname)s: %(message)s", level=logging.WARNING)

            distro = self.distro
            try:
                self._config = load_config(
                    overrides=distro.config_overrides() if distro else None,
                    defaults=distro.config_defaults() if distro else None,
                    lenient=True,
                )
            except ConfigError as exc:
                raise Fail(str(exc), EXIT_USAGE) from None
        return self._checked(self._config)

    @property
    def host(self):
        if self._host is None:
            from hermes.host.config import ConfigError
            from hermes.host.plugins import PluginHost

            try:
                self._host = PluginHost.discover(self.config, distro=self.distro)
            except ConfigError as exc:  # a plugin's key with a value of the wrong type
                raise Fail(str(exc), EXIT_USAGE) from None
            self._host.registry  # collect registrations now, so a plugin failing there is recorded too
            state.remember_load(self._host)
        return self._checked(self._host)


class HermesGroup(click.Group):
    """Built-in commands plus those of the plugins, loaded on demand."""

    _plugins_loaded = False
    owners: dict = {}  # command name -> the plugin whose register_commands added it

    def add_command(self, cmd, name=None):
        super().add_command(cmd, name)
        if self._plugins_loaded:  # from a plugin's register_commands (the guard knows whose)
            from hermes.host.isolation import WATCHDOG

            self.owners[name or cmd.name] = WATCHDOG.current_plugin()

    def invoke(self, ctx):
        """A plugin's command that fails is one line naming the plugin and where
        it failed, not a traceback (a failure in the kernel's own stays one)."""
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):  # click's own
            raise
        except Exception as exc:
            owner = self.owners.get(ctx.invoked_subcommand or "")
            if not owner:
                raise
            import traceback

            frame = traceback.extract_tb(exc.__traceback__)[-1]
            raise Fail(f"`{program()} {ctx.invoked_subcommand}` (plugin {owner}) failed: "
                       f"{type(exc).__name__}: {exc} (at {os.path.basename(frame.filename)}:{frame.lineno})") from None

    def _load_plugin_commands(self, ctx: click.Context) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        # click resolves the subcommand before the group's callback runs: make
        # the App here, with the --distro already parsed, and the callback keeps it
        if not isinstance(ctx.obj, App):
            ctx.obj = App(ctx.params.get("distro_path"))
        app = ctx.obj
        builtin = self._builtin = set(self.commands)
        try:
            host = app.host
            host.pm.hook.register_commands(cli=self, config=app.config)
        except Fail:
            raise
        except Exception as exc:  # a broken plugin must not lock the user out
            click.echo(f"{program()}: warning: plugin commands unavailable: {exc}", err=True)
            return
        state.save_command_cache(self, builtin)

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is None and not name.startswith("-"):
            self._load_plugin_commands(ctx)
            command = super().get_command(ctx, name)
        return command

    def resolve_command(self, ctx, args):
        try:
            name, command, rest = super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if exc.message.startswith("No such command"):  # it may belong to a plugin the selection left out
                exc.message += self._selection_hint(ctx)
            raise
        if not isinstance(ctx.obj, App):  # as in _load_plugin_commands: the group's callback keeps it
            ctx.obj = App(ctx.params.get("distro_path"))
        # from here on, config problems stop all but the repairing commands (and
        # asking for help), also those that read the config given to register_commands
        ctx.obj.strict = not getattr(command, "repairs_config", False)
        if ctx.obj.strict and not set(ctx.help_option_names) & set(_before_separator(rest)):
            ctx.obj.config  # noqa: B018 - raises the first problem
        return name, command, rest

    @staticmethod
    def _selection_hint(ctx) -> str:
        app = ctx.obj if isinstance(ctx.obj, App) else None
        try:
            distro = app.distro if app is not None else None
        except Fail:
            distro = None
        if distro is not None and (distro.only is not None or distro.blocked):
            return (f" The distro '{distro.name}' selects the plugins, and commands come from plugins: "
                    f"`{program()} plugins list` shows what it leaves out.")
        if os.environ.get("HERMES_PLUGINS") is not None:
            return (" HERMES_PLUGINS is set: only the plugins it names are loaded, and commands come from "
                    f"plugins (`{program()} plugins list` shows what is left out).")
        return ""

    def get_help(self, ctx):
        """Remember the top-level help (a distro's as its own) for
        ``hermes.cli.entry`` to print next time without importing click."""
        text = super().get_help(ctx)
        if ctx.parent is None:
            remember_output("help", text)
        return text

    def format_help_text(self, ctx, formatter):
        """A distro's command introduces itself: its name, the distro and its description."""
        name = ctx.params.get("distro_path") or os.environ.get("HERMES_DISTRO")
        if not name:
            return super().format_help_text(ctx, formatter)
        from hermes.host.distro import DistroError, load_distro

        try:
            distro = load_distro(name)
        except DistroError:
            return super().format_help_text(ctx, formatter)
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(f"{ctx.info_name}: {distro.description or distro.name} "
                                 f"(the '{distro.name}' distro of hermes {__version__})")

    def format_commands(self, ctx, formatter):
        builtin = set(self.commands) if not self._plugins_loaded else self._builtin
        cached = state.cached_commands()
        if cached is None:  # first run: load the plugins once to learn their commands
            self._load_plugin_commands(ctx)
            cached = {n: self.commands[n].get_short_help_str(60) for n in self.commands if n not in builtin}
        rows = [(n, self.commands[n].get_short_help_str(60)) for n in sorted(builtin)]
        rows += [(n, f"{h} (plugin)".strip()) for n, h in sorted(cached.items()) if n not in builtin]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=HermesGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", message="%(prog)s %(version)s")
@click.option("--distro", "distro_path", metavar="FILE_OR_NAME", envvar="HERMES_DISTRO",
              help="Run as a distro: a YAML file or an installed distro's name.")
@click.pass_context
def cli(ctx, distro_path):
    """hermes: a plugin-first microkernel for tool-using LLM agents."""
    if not isinstance(ctx.obj, App):  # a plugin command's lookup may have made it already
        ctx.obj = App(distro_path)


# ---------------------------------------------------------------- run / chat


def provider_options(f):
    options = [
        click.option("-m", "--model", help="Model name."),
        click.option("--provider", help="Provider name (openai, anthropic, openrouter, ...)."),
        click.option("--base-url", help="API base URL."),
        click.option("--api-mode", help="chat_completions, codex_responses, anthropic_messages, ..."),
        click.option("--api-key-env", help="Environment variable holding the API key."),
        click.option("--max-turns", type=click.IntRange(min=1), help="Iteration budget for a turn."),
        click.option("-t", "--toolsets", help="Comma-separated toolsets to offer."),
        click.option("--resume", "resume", metavar="SESSION_ID", help="Continue a stored session."),
        click.option("--no-save", is_flag=True, help="Store nothing of this conversation (e.g. while state.db is damaged)."),
        click.option("--yolo", is_flag=True, help="Approve every command without asking (approvals.mode off)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
                     help="Give up on a provider that sends nothing for this long (agent.stream_idle_timeout, 60)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def build_agent(app: App, opts: dict, console, session_id: Optional[str] = None, platform: str = "cli"):
    from kernel.agent import Agent, AgentError

    toolsets = [t.strip() for t in opts["toolsets"].split(",") if t.strip()] if opts.get("toolsets") else None
    if opts.get("timeout"):
        app.config.overrides["agent.stream_idle_timeout"] = opts["timeout"]
    if opts.get("yolo"):
        app.config.overrides["approvals.mode"] = "off"
    try:
        agent = Agent(
            config=app.config, host=app.host, model=opts.get("model"), provider=opts.get("provider"),
            base_url=opts.get("base_url"), api_mode=opts.get("api_mode"), api_key_env=opts.get("api_key_env"),
            max_turns=opts.get("max_turns"), toolsets=toolsets, callbacks=[console] if console else (),
            session_id=session_id, platform=platform,
        )
    except AgentError as exc:
        raise Fail(str(exc)) from None
    _preflight(agent)
    return agent


def _preflight(agent) -> None:
    """A provider that cannot be built (no model, an unknown provider, a URL
    without a scheme, no key ...) is one line now, before any request. With
    fallback providers configured the loop tries them instead."""
    from kernel.types import CONFIG, ProviderError

    if agent.config.get("fallback_providers"):
        return
    try:
        agent.provider_for(agent.provider_config)
    except ProviderError as exc:
        if exc.reason != CONFIG:
            raise
        agent.close()
        raise Fail(exc.message) from None


def ask_store(app: App, hook_name: str, hint: str = "", **kwargs):
    """Ask the session store a question; a store that fails is an error, not
    an empty answer (a broken state.db must not look like a missing session)."""
    host = app.host
    caller = getattr(host.pm.hook, hook_name)
    if not caller.get_hookimpls():
        raise Fail("no session store plugin is enabled")
    import logging

    before = {key: count for key, (count, _) in host.hook_errors.items()}
    quiet = logging.getLogger("hermes.plugins")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # a failure is said once, by the error line below
    try:
        answer = caller(agent=None, **kwargs)
    finally:
        quiet.setLevel(level)
    if answer is None:
        failed = [text for key, (count, text) in host.hook_errors.items()
                  if key[1] == hook_name and count > before.get(key, 0)]
        if failed:
            raise Fail(f"the session store failed: {failed[-1].rstrip('.')}{hint}")
    return answer


def prepare_store(app: App, opts: dict) -> None:
    """Before the first model call: with ``--no-save`` the store plugins are
    set aside (said on stderr); otherwise a store that cannot be used stops
    the command here, with one line naming the file, instead of answering
    and losing the turn."""
    host = app.host
    if opts.pop("no_save", False):
        if opts.get("resume"):
            raise Fail("--no-save starts a conversation that is not stored; it cannot --resume one", EXIT_USAGE)
        for rec in [r for r in host.records if r.status == "enabled" and "append_messages" in r.hooks]:
            host.set_aside(rec.name, "--no-save")
        click.echo(f"{program()}: note: --no-save: this conversation will not be stored", err=True)
    elif host.pm.hook.latest_session.get_hookimpls():
        ask_store(app, "latest_session", hint="; or pass --no-save to go on without storing this conversation",
                   platform="cli")


def check_session(app: App, session_id: str) -> str:
    """The full id of the session to resume (``session_id`` may be a unique prefix)."""
    full = ask_store(app, "resolve_session", session_id=session_id) if app.host.pm.hook.resolve_session.get_hookimpls() \
        else session_id
    if not full or ask_store(app, "load_session", session_id=full) is None:
        raise Fail(f"no session '{session_id}' (see `hermes sessions list`; a shortened id must be unique)")
    claim(app, full)
    return full


def claim(app: App, session_id: str) -> None:
    """One writer per session: refuse now, before any model call, when another
    process is writing it."""
    if app.host.pm.hook.claim_session.get_hookimpls():
        refused = ask_store(app, "claim_session", session_id=session_id)
        if isinstance(refused, str) and refused:
            raise Fail(refused)


class CtrlC:
    """First Ctrl+C interrupts the turn cleanly; a second one exits at once."""

    def __init__(self, agent):
        from kernel.types import Interrupted  # here, never in the handler: imports and signals do not mix

        self.agent, self.hits, self.interrupted = agent, 0, Interrupted

    def __enter__(self):
        self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        self.hits += 1
        if self.hits > 1:
            raise self.interrupted()
        self.agent.interrupt()  # raises here when the turn is inside a plugin's hook: never wait for it

    def __exit__(self, *exc):
        signal.signal(signal.SIGINT, self.previous)


@cli.command()
@provider_options
@click.option("--json", "as_json", is_flag=True, help="Print the turn's result as JSON.")
@click.argument("prompt", nargs=-1, required=True)
@click.pass_obj
def run(app: App, as_json: bool, prompt: tuple, **opts):
    """Run one turn and print the answer."""
    text = " ".join(prompt)
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():  # a provider may refuse an empty message (Anthropic does): say so before any call
        raise Fail("the prompt is empty" + (" (nothing on stdin)" if prompt == ("-",) else ""), EXIT_USAGE)
    prepare_store(app, opts)
    if opts.get("resume"):
        opts["resume"] = check_session(app, opts["resume"])
    # the display is a plugin's (built-in: terminal); without one only the answer is printed
    console = None if as_json else app.host.pm.hook.terminal_front_end(quiet=False, config=app.config)
    if not callable(getattr(console, "end_answer", None)):  # none, or not what the spec asks for
        console = None
    # platform "run": `hermes chat --continue` picks up the latest chat, not a one-shot turn
    agent = build_agent(app, opts, console, session_id=opts.get("resume"), platform="run")
    try:
        with CtrlC(agent):
            result = agent.run_conversation(text)
    finally:
        agent.close()
    if as_json:
        echo_json(result.to_dict())
    elif not _shown(app, console, result.final_response) and result.final_response:
        click.echo(result.final_response)
    _finish(result, quiet=as_json)


def _shown(app: App, console, answer) -> bool:
    """Did a front end show the answer? One that fails has it printed plainly: it is never lost."""
    from hermes.host.isolation import contain

    failed = object()
    return console is not None and contain(app.host.failures, type(console).__module__, "end_answer",
                                           console.end_answer, answer, default=failed) is not failed


def _finish(result, quiet: bool = False) -> None:
    reason = result.exit_reason
    if reason == "error":
        if not quiet:
            click.echo(f"{program()}: error: {result.error}", err=True)
        sys.exit(EXIT_ERROR)
    if reason == "interrupted_by_user":
        if not quiet:
            click.echo(f"{program()}: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if reason == "budget_exhausted":
        if not result.final_response:
            if not quiet:
                click.echo(f"{program()}: the iteration budget ran out before a final answer "
                           "(raise it with --max-turns)", err=True)
            sys.exit(EXIT_BUDGET)
        if not quiet:
            click.echo(f"{program()}: the iteration budget ran out; the answer above is the model's last word "
                       "(raise it with --max-turns)", err=True)
    elif not (result.final_response or "").strip() and not quiet:
        click.echo(f"{program()}: the model returned an empty answer", err=True)


def distro_main(distro: str, prog_name: Optional[str] = None):
    """``hermes`` fixed to one distro, for distro packages written before
    :func:`hermes.cli.entry.distro_main` (use that one: it prints a remembered
    ``--help`` or listing without importing click)."""
    os.environ["HERMES_DISTRO"] = distro
    main(prog_name=prog_name or os.path.basename(sys.argv[0]) or "hermes")


def _interrupt(signum, frame):
    """Ctrl+C outside a turn: the user's interrupt, which plugin code cannot
    contain (a plugin raising KeyboardInterrupt itself is just a failing plugin).
    Before any plugin code was loaded (``--help``), a plain KeyboardInterrupt:
    the isolation module is not imported for what does not need it."""
    isolation = sys.modules.get("hermes.host.isolation")
    raise isolation.Interrupted() if isolation is not None else KeyboardInterrupt()  # kernel.types' Interrupted


def _before_separator(args: list) -> list:
    """The arguments before ``--`` (after it nothing is an option)."""
    return args[: args.index("--")] if "--" in args else args


def _machine_output(args: list) -> bool:
    return "--json" in _before_separator(args)


def _invoke(args: list, prog_name: str) -> int:
    _program[0] = prog_name
    try:
        code = cli.main(args=args, prog_name=prog_name, standalone_mode=False, terminal_width=terminal_width())
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort as exc:  # click turns Ctrl+C and EOF into Abort
        if isinstance(exc.__cause__, KeyboardInterrupt):
            click.echo(f"{prog_name}: interrupted", err=True)
            return EXIT_INTERRUPTED
        click.echo("Aborted!", err=True)
        return EXIT_ERROR
    except KeyboardInterrupt:
        click.echo(f"{prog_name}: interrupted", err=True)
        return EXIT_INTERRUPTED
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        click.echo(str(exc.code), err=True)
        return EXIT_ERROR
    return code if isinstance(code, int) else 0


def main(argv=None, prog_name: str = "hermes") -> None:
    import contextlib

    args = list(sys.argv[1:] if argv is None else argv)
    _args[:] = args
    state.use_distro(os.environ.get("HERMES_DISTRO"))  # --distro, once parsed, makes the App with it
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
    code = EXIT_INTERRUPTED
    if _machine_output(args):
        from hermes.cli.output import reserved_stdout

        document = reserved_stdout()
    else:
        document = contextlib.nullcontext()
    try:
        with document:
            code = _invoke(args, prog_name)
    finally:
        app = App.current
        if app is not None and app._host is not None:
            state.remember_failures(app._host)
    _end(code)


EXIT_GRACE = 2.0  # seconds the interpreter's teardown may take once plugin code ran


def _end(code: int) -> None:
    """Exit. After an interrupt, or when plugin code was abandoned (its thread
    may still hang), skip the interpreter's teardown: it would wait for them.
    Otherwise the teardown gets :data:`EXIT_GRACE` (threads and ``atexit``
    handlers plugin code left behind)."""
    isolation = sys.modules.get("hermes.host.isolation")  # not imported: no plugin code ran, none was abandoned
    if code == EXIT_INTERRUPTED or (isolation is not None and isolation.WATCHDOG.abandoned):
        from hermes.cli.output import hard_exit

        hard_exit(code)
    if isolation is not None:
        from hermes.cli.output import exit_within

        exit_within(EXIT_GRACE, code, lambda text: click.echo(f"{_program[0]}: warning: {text}", err=True))
    sys.exit(code)


from hermes.cli.plugins_group import plugins  # noqa: E402 - the `hermes plugins` group, in its own module

cli.add_command(plugins)


if __name__ == "__main__":
    main()
