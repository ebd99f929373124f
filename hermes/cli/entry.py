"""The ``hermes`` console script.

The profile is chosen first (:func:`choose_profile`), since it decides the data folder. ``hermes --help`` and ``hermes
plugins list [--json]`` (and a distro's command's) are printed as they were printed the last time while nothing they
depend on changed (the keys in :mod:`hermes.cli.remembered`): they then cost no import of click, of json or of the
plugin host. Everything else, and an output that must be made again, goes to :func:`hermes.cli.app.main`."""

import os
import sys


def terminal_width() -> int:
    """The width click's help formatter would pick (the terminal's, at most
    80, less 2), without its import of shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        try:
            columns = os.get_terminal_size(sys.stdout.fileno()).columns or 80
        except (AttributeError, OSError, ValueError):
            columns = 80
    return max(min(columns, 80) - 2, 50)


# the command lines printed again, and the name of what they printed (a bare
# `hermes` prints the help too, on stderr, and exits 2, as click does; at a terminal it chats)
REMEMBERED = {(): "help", ("--help",): "help", ("-h",): "help",
              ("plugins", "list"): "listing", ("plugins", "list", "--json"): "listing-json"}


def remembered_key(name: str, prog: str) -> str:
    from hermes.cli import remembered

    return remembered.help_key(prog, terminal_width()) if name == "help" else remembered.listing_key()


def _printed_again(prog: str) -> bool:
    """Print what this command line printed last time, if nothing it depends on changed."""
    name = REMEMBERED.get(tuple(sys.argv[1:]))
    if name is None or not sys.argv[1:] and sys.stdin.isatty() and sys.stdout.isatty():
        return False
    from hermes.cli import remembered
    from hermes.host import loadstate

    loadstate.distro = os.environ.get("HERMES_DISTRO") or None
    text = remembered.remembered_output(name, remembered_key(name, prog))
    if text is None:
        return False
    print(text, file=sys.stdout if sys.argv[1:] else sys.stderr, flush=True)
    if not sys.argv[1:]:
        sys.exit(2)
    return True


def root_option(args: list, names: tuple) -> tuple:
    """(its value, the arguments without it) of a root's option (``--distro``, ``-p``) given before the command, read
    before click parses anything (an eager ``--help`` runs before other options); ``(None, args)`` without it."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        flag, eq, value = args[i].partition("=")
        if flag in names and (eq or i + 1 < len(args)):
            return (value, args[:i] + args[i + 1:]) if eq else (args[i + 1], args[:i] + args[i + 2:])
        i += 1 if eq or flag not in ("--distro", "-p", "--profile") else 2
    return None, args


PROFILE_NAME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")  # hermes-agent's: a folder's name, never a path
KEPT_PROFILE = "active_profile"  # hermes-agent's file in the default data folder: the profile `profile use` chose


def profiles_root() -> str:
    """``profiles/`` of the data folder no profile's (``HERMES_HOME``'s or platformdirs'): a folder per profile."""
    home = os.path.abspath(os.path.expanduser(os.environ.get("HERMES_HOME") or "/"))
    if os.path.basename(os.path.dirname(home)) == "profiles":  # this process runs as a profile
        return os.path.dirname(home)
    from hermes.host.paths import data_dir

    return os.path.join(data_dir(), "profiles")


def profile_name() -> str:
    """The profile this process runs as: its name, or ``default`` (the data folder itself)."""
    home = os.path.abspath(os.path.expanduser(os.environ.get("HERMES_HOME") or "/"))
    return os.path.basename(home) if os.path.dirname(home) == profiles_root() else "default"


def choose_profile(args: list, prog: str) -> list:
    """hermes-agent's profiles: ``-p NAME`` / ``--profile NAME`` before the command, else ``HERMES_PROFILE``, else the
    one ``hermes profile use`` kept, sets ``HERMES_HOME`` to its folder and ``HERMES_PROFILE`` to its name (for the
    processes this one starts); ``default`` is the data folder itself. The arguments are returned without the option."""
    name, rest = root_option(args, ("-p", "--profile"))
    name, kept, now = (name or os.environ.get("HERMES_PROFILE") or "").strip().lower(), False, profile_name()
    if not name and now == "default":  # (else HERMES_HOME is a profile's folder already)
        try:
            with open(os.path.join(os.path.dirname(profiles_root()), KEPT_PROFILE), encoding="utf-8") as fh:
                name, kept = fh.read().strip(), True
        except (OSError, UnicodeDecodeError):
            pass
    if name not in ("", now, "default"):
        folder = os.path.join(profiles_root(), name)
        if set(name) <= PROFILE_NAME and name[0].isalnum() and os.path.isdir(folder):
            os.environ["HERMES_HOME"] = folder
        elif kept:  # the one `profile use` kept is gone: said, not a lock-out of every command
            sys.stderr.write(f"{prog}: warning: the active profile '{name}' is not there; running as default\n")
            name = "default"
        else:
            sys.exit(f"{prog}: error: no profile '{name}' (`{prog} profile list` shows them, `{prog} profile "
                     "create NAME` makes one)")
    elif name == "default" and now != "default":  # HERMES_HOME itself is a profile's folder
        sys.exit(f"{prog}: error: HERMES_HOME is profile '{now}''s folder: unset it to run as default")
    if name:
        os.environ["HERMES_PROFILE"] = name  # the processes this one starts run as it too
    return rest


def main(prog: str = "hermes") -> None:
    sys.argv[1:] = choose_profile(sys.argv[1:], prog)
    if not _printed_again(prog):
        from hermes.cli.app import main as cli_main

        cli_main(prog_name=prog)


def distro_main(distro: str, prog_name: "str | None" = None) -> None:
    """The console script of a distro package: ``hermes`` fixed to one distro.

    In the distro's pyproject.toml::

        [project.scripts]
        my-agent = "my_distro:main"     # def main(): hermes.cli.entry.distro_main("my-distro")
    """
    os.environ["HERMES_DISTRO"] = distro
    main(prog_name or os.path.basename(sys.argv[0]) or "hermes")
