"""The ``hermes`` console script.

``hermes --help`` and ``hermes plugins list [--json]`` are printed as they
were printed the last time while nothing they depend on changed (the keys in
:mod:`kernel.clistate`): they then cost no import of click, of json or of
the plugin host. Everything else, and an output that must be made again,
goes to :func:`kernel.cli.main`.
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


# the command lines printed again, and the name of what they printed
REMEMBERED = {("--help",): "help", ("-h",): "help",
              ("plugins", "list"): "listing", ("plugins", "list", "--json"): "listing-json"}


def remembered_key(name: str) -> str:
    from kernel import clistate

    return clistate.help_key("hermes", terminal_width()) if name == "help" else clistate.listing_key()


def main() -> None:
    name = REMEMBERED.get(tuple(sys.argv[1:]))
    if name and not os.environ.get("HERMES_DISTRO"):  # a distro's output is made every time
        from kernel import clistate

        text = clistate.remembered_output(name, remembered_key(name))
        if text is not None:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
            return
    from kernel.cli import main as cli_main

    cli_main()
