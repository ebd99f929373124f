"""What a default install's first ``hermes --help`` and ``hermes plugins list`` show, shipped in ``first-run.json``
(``scripts/first_run.py`` writes it from a load of the built-ins): a fresh data folder prints them without importing
every plugin to learn them. Imports only ``os`` at the top: ``--help`` reads it before click renders anything."""

import os

SHIPPED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "first-run.json")


def first_run(what: str):
    """The built-ins' ``commands`` (name -> short help, as the program's command cache holds them) or ``records``
    (``plugins list``'s) as shipped, when this is a default install: no config.yaml, no plugin folder in the data
    folder, no distro or variable selecting plugins, and no plugin installed but the built-ins (another's commands and
    records would be missing). ``None`` otherwise: the plugins load to find out."""
    import json
    from importlib import metadata

    from hermes.host import loadstate
    from hermes.host.paths import config_dir, data_dir

    with open(SHIPPED, encoding="utf-8") as fh:
        shipped = json.load(fh)
    if loadstate.distro or any(v in os.environ for v in shipped["unset"]) or (config_dir() / "config.yaml").exists() \
            or (data_dir() / "plugins").exists():
        return None
    installed = metadata.entry_points()  # every group a plugin source reads holds exactly the shipped entry points
    if any(sorted(f"{ep.name} = {ep.value}" for ep in installed.select(group=group)) != entry_points
           for group, entry_points in shipped["entry_points"].items()):
        return None
    return shipped[what]
