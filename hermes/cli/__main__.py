"""``python -m hermes.cli``: the ``hermes`` command."""

from hermes.cli.entry import main

main()
