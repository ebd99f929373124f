"""``python -m hermes.cli``: the ``hermes`` command."""

from hermes.cli.app import main

main()
