"""The ``hermes`` program: the console script (:mod:`hermes.cli.entry`), the
root click group (:mod:`hermes.cli.app`), remembered outputs and the process's
output and exit (see :mod:`hermes`). Importing this package imports nothing."""
