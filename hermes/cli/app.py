"""The ``hermes`` command line (click). Every command comes from a plugin's ``register_commands``. Start-up is
kept cheap: this module imports click and nothing else heavy; the essential built-ins' commands are added without
the plugin host, the other plugins load when a name of theirs is used, and ``--help`` lists their commands from a
small cache written whenever plugins were loaded."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from typing import Optional

import click

from hermes.cli import remembered
from hermes.cli.entry import REMEMBERED, choose_profile, remembered_key, root_option, terminal_width
from hermes.host import loadstate
from kernel import __version__

EXIT_ERROR, EXIT_USAGE, EXIT_BUDGET, EXIT_INTERRUPTED = 1, 2, 3, 130


class Fail(click.ClickException):
    """One clear line on stderr and a non-zero exit, never a traceback."""

    def __init__(self, message: str, code: int = EXIT_ERROR):
        super().__init__(message)
        self.exit_code = code

    def show(self, file=None):
        click.echo(f"{program()}: error: {self.format_message()}", err=True)


def program() -> str:
    """The command's name as the user typed it: ``hermes``, or a distro's own command."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.find_root().info_name:
        return ctx.find_root().info_name
    return App.current.prog if App.current is not None else "hermes"  # after click's context ended


def echo_json(data) -> str:
    """Print a machine-readable document (and return it): under ``--json`` the only thing on stdout."""
    import json

    from hermes.cli.output import document_stream

    text = json.dumps(data, indent=2, default=str, ensure_ascii=False)
    stream = document_stream()
    stream.write(text + "\n")
    stream.flush()
    return text


def remember_output(name: str, text: str) -> None:
    """What this command printed (no final newline), for :mod:`hermes.cli.entry` to print again."""
    app = App.current
    if app is not None and REMEMBERED.get(tuple(app.args)) == name:
        remembered.remember_output(name, remembered_key(name, app.prog), text)


def distro_argument(args: list) -> Optional[str]:
    """The distro a command line runs as: the root's ``--distro``, else ``HERMES_DISTRO``. The one place it is read."""
    return root_option(args, ("--distro",))[0] or os.environ.get("HERMES_DISTRO") or None


class App:
    """What the commands share: config, the plugin host, the distro (all lazy). A wrong type in
    config.yaml stops every command but those added with ``repairs_config=True`` (``hermes config``,
    ``hermes plugins``), so ``hermes config set`` can fix what it would otherwise refuse to read."""

    current: Optional["App"] = None  # the command's, for what main() saves at the end

    def __init__(self, distro_path: Optional[str] = None, args: tuple = (), prog: str = "hermes"):
        App.current = self
        self.distro_path, self.args, self.prog = distro_path, tuple(args), prog  # the command line, as main() got it
        loadstate.distro = distro_path or None  # its own load state, commands and remembered outputs
        self._config = self._host = self._distro = None
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
            logging.basicConfig(format=f"{self.prog}: %(levelname)s: %(message)s", level=logging.WARNING)

            distro = self.distro
            try:
                self._config = load_config(defaults=distro.config if distro else None, lenient=True)
                self._config.overrides.update(distro.config_overrides(self._config) if distro else {})
            except ConfigError as exc:
                raise Fail(str(exc), EXIT_USAGE) from None
        return self._checked(self._config)

    def _discover(self, **only):
        from hermes.host.config import ConfigError
        from hermes.host.plugins import PluginHost

        try:
            return PluginHost.discover(self.config, distro=self.distro, **only)
        except ConfigError as exc:  # a plugin's key with a value of the wrong type
            raise Fail(str(exc), EXIT_USAGE) from None

    def reload(self) -> None:
        """Forget the config and the plugins read so far: the next use reads config.yaml again (it was edited)."""
        self._config = self._host = None

    @property
    def host(self):
        """Every plugin the selection enables, loaded."""
        return self.load_host()

    def load_host(self, warn_unknown: bool = True):
        """:attr:`host`; ``warn_unknown=False`` when the command reports the config keys nobody declares
        itself (``hermes config check``)."""
        if self._host is None:
            self._host = self._discover(warn_unknown=warn_unknown)
            self._host.registry  # collect registrations now, so a plugin failing there is recorded too
            loadstate.remember_load(self._host)
        return self._checked(self._host)


def _app(ctx: click.Context) -> App:
    """The App of this command line (main() makes it; a test's CliRunner may not)."""
    if not isinstance(ctx.obj, App):
        ctx.obj = App(distro_argument([]))
    return ctx.obj


class HermesGroup(click.Group):
    """The root group: every command is a plugin's. The essential built-ins' (``run``, ``plugins``,
    ``config``) load without the others, which load when their name is used or help is shown."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._loaded = None  # None, "essential" or "all"
        self._loading = None  # while plugins add commands: the essential plugin adding, or "" (the guard knows whose)
        self.owners: dict = {}  # command name -> the plugin whose register_commands added it
        self.repairing: set = set()  # the commands that run while config.yaml has a wrong type

    def add_command(self, cmd, name=None, *, repairs_config: bool = False):
        """``repairs_config``: the command inspects or fixes config, so it runs while config.yaml holds a value
        of the wrong type."""
        super().add_command(cmd, name)
        if repairs_config:
            self.repairing.add(name or cmd.name)
        if self._loading == "":
            from hermes.host.isolation import WATCHDOG

            self.owners[name or cmd.name] = WATCHDOG.current_plugin()
        elif self._loading is not None:
            self.owners[name or cmd.name] = self._loading

    def invoke(self, ctx):
        """A third-party plugin's command that fails is one line naming the plugin
        and where it failed, not a traceback (a built-in's failure stays one: our bug)."""
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):  # click's own
            raise
        except Exception as exc:
            owner = self.owners.get(ctx.invoked_subcommand or "")
            app = _app(ctx)
            record = app._host.record(owner) if owner and app._host is not None else None
            if record is None or record.source == "builtin":  # an essential's, or a built-in's: our bug
                raise
            import traceback

            frame = traceback.extract_tb(exc.__traceback__)[-1]
            raise Fail(f"`{program()} {ctx.invoked_subcommand}` (plugin {owner}) failed: "
                       f"{type(exc).__name__}: {exc} (at {os.path.basename(frame.filename)}:{frame.lineno})") from None

    def _load(self, ctx: click.Context, everything: bool) -> None:
        if self._loaded == "all" or (self._loaded == "essential" and not everything):
            return
        app = _app(ctx)
        if self._loaded is None:
            self._loaded = "essential"
            self._add_essential_commands()
        if not everything:
            return
        self._loaded, self._loading = "all", ""
        try:
            app.host.pm.hook.register_commands(cli=self, config=app.config)
        except Fail:
            raise
        except Exception as exc:  # a broken plugin must not lock the user out
            click.echo(f"{program()}: warning: plugin commands unavailable: {exc}", err=True)
            return
        finally:
            self._loading = None
        remembered.save_command_cache(self, self._essential())

    def _add_essential_commands(self) -> None:
        """The essential built-ins' commands, without the plugin host: they are our own modules, always loaded
        (the host adds them again with the others, through their ``register_commands``)."""
        import importlib

        from hermes.host.essential import ESSENTIAL, commands_module

        for name in ESSENTIAL:
            self._loading = name
            try:
                importlib.import_module(commands_module(name)).add_commands(cli=self)
            finally:
                self._loading = None

    def _essential(self) -> set:
        """The commands of the essential built-ins (they are always there)."""
        from hermes.host.essential import ESSENTIAL

        return {name for name, owner in self.owners.items() if owner in ESSENTIAL and name in self.commands}

    def load_plugin_commands(self, ctx: click.Context) -> None:
        """Every plugin's commands (a group of a plugin's may hold another's: ``plugins install``)."""
        self._load(ctx, everything=True)

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        for everything in (False, True):
            if command is not None or name.startswith("-"):
                break
            self._load(ctx, everything)
            command = super().get_command(ctx, name)
        return command

    def parse_args(self, ctx, args):
        """As in hermes-agent: ``hermes [OPTIONS] -z PROMPT`` is ``hermes run [OPTIONS] PROMPT``; at a terminal,
        ``hermes [--distro D]`` alone or followed by an option of no root's (``-c``, ``-m MODEL``) is ``hermes chat``
        with them, when a plugin adds ``chat`` (else the help, as click does)."""
        first = args[0].partition("=")[0] if args else None
        lead = (1 if "=" in args[0] else 2) if first == "--distro" else 0  # the root's option with a value: kept first
        after = args[lead].partition("=")[0] if len(args) > lead else None
        if first and first.startswith("-") and {"-z", "--oneshot"} & {a.partition("=")[0] for a in args}:
            args = [*args[:lead], "run", *[a.partition("=")[2] if a.startswith("--oneshot=") else a  # hermes-agent's
                                           for a in args[lead:] if a not in ("-z", "--oneshot")]]  # `-z PROMPT`
        elif (after is None or after.startswith("-") and after not in {o for p in self.get_params(ctx)
                                                                         for o in p.opts}) \
                and not ctx.resilient_parsing and sys.stdin.isatty() and sys.stdout.isatty() \
                and self.get_command(ctx, "chat") is not None:  # (resilient: shell completion asking)
            args = [*args[:lead], "chat", *args[lead:]]
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx, args):
        try:
            name, command, rest = super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if exc.message.startswith("No such command"):  # it may belong to a plugin the selection left out
                exc.message += self._selection_hint(ctx)
            raise
        app = _app(ctx)
        # from here on, config problems stop all but the repairing commands (and
        # asking for help), also those that read the config given to register_commands
        app.strict = name not in self.repairing
        if app.strict and not set(ctx.help_option_names) & set(_before_separator(rest)):
            app.config  # noqa: B018 - raises the first problem
        return name, command, rest

    @staticmethod
    def _selection_hint(ctx) -> str:
        distro = None
        with contextlib.suppress(Fail):
            distro = _app(ctx).distro
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
        distro = None
        with contextlib.suppress(Fail):
            distro = _app(ctx).distro
        if distro is None:
            return super().format_help_text(ctx, formatter)
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(f"{ctx.info_name}: {distro.description or distro.name} "
                                 f"(the '{distro.name}' distro of hermes {__version__})")

    def list_commands(self, ctx):  # shell completion's (`_HERMES_COMPLETE=bash_source hermes`): it offered none
        return [name for name, _ in self._rows(ctx)]

    def format_commands(self, ctx, formatter):
        if rows := self._rows(ctx):
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def _rows(self, ctx) -> list:
        """(name, short help) of each command, the essential ones first, the plugins' as the last load remembered."""
        self._load(ctx, everything=False)
        cached = remembered.cached_commands()
        if cached is None:  # first run: load the plugins once to learn their commands
            self._load(ctx, everything=True)
            cached = {n: c.get_short_help_str(60) for n, c in self.commands.items() if not c.hidden}
        essential = self._essential()
        rows = [(n, self.commands[n].get_short_help_str(60)) for n in sorted(essential)]
        return rows + [(n, f"{h} (plugin)".strip()) for n, h in sorted(cached.items()) if n not in essential]


@click.group(cls=HermesGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", message="%(prog)s %(version)s")
@click.option("--distro", "distro_path", metavar="FILE_OR_NAME", envvar="HERMES_DISTRO",
              help="Run as a distro: a YAML file or an installed distro's name.")
@click.option("-p", "--profile", metavar="NAME", expose_value=False, is_eager=True,  # (the console script reads it
              callback=lambda ctx, param, name: name and choose_profile(["-p", name], program()),  # before click)
              help="Run as a profile: a config, keys, sessions and memory of its own (`hermes profile`).")
@click.pass_context
def cli(ctx, distro_path):
    """hermes: a plugin-first microkernel for tool-using LLM agents."""
    _app(ctx)  # main() made it, from the same --distro (distro_argument)


def _interrupt(signum, frame):
    """Ctrl+C outside a turn: the user's interrupt, which plugin code cannot contain (a plugin raising
    KeyboardInterrupt is a failing plugin); a plain KeyboardInterrupt before any plugin loaded (``--help``)."""
    isolation = sys.modules.get("hermes.host.isolation")
    raise isolation.Interrupted() if isolation is not None else KeyboardInterrupt()  # kernel.types' Interrupted


def _before_separator(args: list) -> list:
    """The arguments before ``--`` (after it nothing is an option)."""
    return args[: args.index("--")] if "--" in args else args


def _invoke(args: list, prog_name: str, app: App) -> int:
    try:
        code = cli.main(args=args, prog_name=prog_name, standalone_mode=False, terminal_width=terminal_width(),
                        obj=app)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort as exc:  # click turns Ctrl+C and EOF into Abort
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):  # a prompt raises Abort from None
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
    args = list(sys.argv[1:] if argv is None else argv)
    atexit.register(_no_teardown_under_threads)  # first, so it runs last
    app = App(distro_argument(args), args, prog_name)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
    code = EXIT_INTERRUPTED
    closed = sys.stdout is None  # started with `>&-`: the work is done and stored, then this is said
    if closed:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # takes descriptor 1, the lowest free one
    from hermes.cli.output import reserved_stdout

    machine = "--json" in _before_separator(args)  # stdout for the document alone
    document = reserved_stdout(machine) if machine or not sys.stdout.isatty() else contextlib.nullcontext()
    try:
        with document:
            code = _invoke(args, prog_name, app)
    finally:
        if app._host is not None:
            loadstate.remember_failures(app._host)
    if closed:
        click.echo(f"{prog_name}: error: standard output was closed; what this command printed did not reach it",
                   err=True)
        code = code or EXIT_ERROR
    _end(code)


EXIT_GRACE = 2.0  # seconds the interpreter's teardown may take once plugin code ran
_ending: list = []  # the exit code, once the command is done


def _end(code: int) -> None:
    """Exit. After an interrupt, or with plugin code abandoned (its thread may hang), skip the
    interpreter's teardown, which would wait for it; else the teardown gets :data:`EXIT_GRACE`."""
    isolation = sys.modules.get("hermes.host.isolation")  # not imported: no plugin code ran, none was abandoned
    if code == EXIT_INTERRUPTED or (isolation is not None and isolation.WATCHDOG.abandoned):
        from hermes.cli.output import hard_exit

        hard_exit(code)
    if isolation is not None:
        from hermes.cli.output import exit_within

        exit_within(EXIT_GRACE, code, lambda text: click.echo(f"{program()}: warning: {text}", err=True))
    _ending.append(code)
    sys.exit(code)


def _no_teardown_under_threads() -> None:
    """The last exit handler: a plugin's daemon thread inside OpenSSL (asking a server for updates) crashes the process
    in OpenSSL's exit cleanup (SIGSEGV, after the output): with one alive the process ends here, all else done."""
    idle = ("hermes-hook-watchdog", "hermes-exit-deadline")  # ours, in no C library
    if _ending and any(t.daemon and t.name not in idle for t in threading.enumerate()):
        from hermes.cli.output import hard_exit

        hard_exit(_ending[-1])
