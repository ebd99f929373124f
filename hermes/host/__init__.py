"""The plugin host: discovery, selection, loading, isolation, the registry,
config files and distros (see :mod:`hermes`). It imports the kernel and never
the program: ``hermes serve`` and batch workers embed it without click."""
