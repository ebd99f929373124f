"""hermes: the plugin host and the ``hermes`` program around the kernel.

Three layers, each in its own folder, imports pointing one way:

* ``kernel/``: the loop, the budget, the message schema and records, the
  loop's hook specs. Imports only the standard library, pluggy and itself.
* ``hermes.host``: finds, selects, loads and contains plugins; config files;
  distros. Imports the kernel; usable without click (an HTTP server or a
  batch worker embeds it).
* ``hermes.cli``: the ``hermes`` console script, the root click group,
  remembered outputs, ``--json``'s stdout and the bounded exit. Imports both.

The built-in plugins (``plugins*/``) stand beside them and may use all three.
"""
