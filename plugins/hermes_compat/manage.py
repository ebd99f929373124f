"""``hermes plugins install`` / ``uninstall`` (filled in below)."""


def add_commands(cli):
    return None
