"""Generate plugins/commands/first-run.json: what a default install's first ``hermes --help`` and ``plugins list``
show (the built-in plugins' commands and records), found by loading the built-ins as ``hermes`` does with no
config.yaml. A fresh data folder prints them from this file instead of importing every plugin to learn them
(:func:`plugins.commands.first_run.first_run` says when the file holds: nothing but the built-ins installed, nothing
configured or selected).

    python scripts/first_run.py          # rewrite plugins/commands/first-run.json
    python scripts/first_run.py --check  # exit 1 when it is stale (a command's help or a plugin changed)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "plugins" / "commands" / "first-run.json"
UNSET = ["HERMES_PLUGINS", "HERMES_SAFE_MODE", "HERMES_ENABLE_PROJECT_PLUGINS"]  # each selects other plugins


def generate() -> str:
    from importlib import metadata

    from hermes.cli import remembered
    from hermes.cli.app import cli
    from hermes.host.config import Config
    from hermes.host.plugins import GROUP, OWN_DISTRIBUTION, PluginHost
    from plugins.hermes_compat.discovery import GROUPS

    with tempfile.TemporaryDirectory() as home:  # no plugin folder of anybody's data folder is found
        saved, os.environ["HERMES_HOME"] = os.environ.get("HERMES_HOME"), home
        try:
            host = PluginHost.discover(Config({}), environ={}, import_third_party=False)
            cli._add_essential_commands()
            essential = cli._essential()
            host.pm.hook.register_commands(cli=cli, config=host.config)
            remembered.save_command_cache(cli, essential)  # as a load remembers them, read back
            text = remembered.state_file(remembered.COMMANDS_CACHE).read_text(encoding="utf-8").partition("\n")[2]
        finally:
            os.environ.pop("HERMES_HOME") if saved is None else os.environ.update(HERMES_HOME=saved)
    own = metadata.distribution(OWN_DISTRIBUTION).entry_points
    shipped = {
        "unset": UNSET,
        # the entry points of every group a plugin source reads, exactly these: another installed plugin adds
        # commands and records
        "entry_points": {group: sorted(f"{ep.name} = {ep.value}" for ep in own.select(group=group))
                         for group in (GROUP, *GROUPS)},
        "commands": dict(line.split("\t", 1) for line in text.splitlines()),
        "records": [record.as_dict() for record in host.records if record.source == "builtin"],
    }
    return json.dumps(shipped, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed file is stale")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run python scripts/first_run.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(json.loads(text)['records'])} plugins)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
