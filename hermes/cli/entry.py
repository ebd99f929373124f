"""The ``hermes`` console script.

``hermes --help`` and ``hermes plugins list [--json]`` (and a distro's
command's) are printed as they were printed the last time while nothing they
depend on changed (the keys in :mod:`hermes.cli.remembered`): they then cost no
import of click, of json or of the plugin host. Everything else, and an
output that must be made again, goes to :func:`hermes.cli.app.main`.
"""

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
    stream = sys.stderr if not sys.argv[1:] else sys.stdout
    stream.write(text + "\n")
    stream.flush()
    if not sys.argv[1:]:
        sys.exit(2)
    return True


def main(prog: str = "hermes") -> None:
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
