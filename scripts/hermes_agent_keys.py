"""Write plugins/hermes_compat/agent_keys.py: the names of hermes-agent's config.yaml keys, from an installed
hermes-agent (a throwaway venv: `pip install hermes-agent==0.19.0`, then run this with that venv's python, or give
the unpacked wheel's folder). hermes-compat declares the ones a user's config.yaml holds and hermes does not read, so
a config.yaml of hermes-agent's does not warn of them on every run (`hermes config show` marks them).

    python scripts/hermes_agent_keys.py [FOLDER_OF_HERMES_AGENT]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "plugins" / "hermes_compat" / "agent_keys.py"


def leaves(node: dict, prefix: str = "") -> dict:
    """Every dotted key whose value is not a mapping of keys (an empty mapping is a free-form one: a leaf too), with
    its default."""
    found = {}
    for name, value in node.items():
        dotted = f"{prefix}{name}"
        found.update(leaves(value, dotted + ".") if isinstance(value, dict) and value else {dotted: value})
    return found


def main() -> None:
    if len(sys.argv) > 1:
        sys.path.insert(0, sys.argv[1])
    from hermes_cli.config import DEFAULT_CONFIG  # hermes-agent's own defaults

    import importlib.metadata

    try:
        version = importlib.metadata.version("hermes-agent")
    except importlib.metadata.PackageNotFoundError:
        version = "unpacked"
    found = leaves(DEFAULT_CONFIG)
    # and the keys it writes itself that its defaults lack (`/reasoning high --global` writes agent.reasoning_effort)
    package = Path(sys.modules["hermes_cli"].__file__).resolve().parents[1]
    for source in package.rglob("*.py"):
        text = source.read_text(encoding="utf-8", errors="replace")
        for name in re.findall(r'save_config_value\(\s*"([a-z_.]+)"', text):
            if not any(key == name or key.startswith(name + ".") or name.startswith(key + ".") for key in found):
                found[name] = ""
    body = "".join(f"    {name!r}: {found[name]!r},\n" for name in sorted(found))
    OUT.write_text(f'"""The keys of hermes-agent\'s config.yaml and their defaults: its DEFAULT_CONFIG and the keys it '
                   f'writes itself\n(hermes-agent {version}), written by scripts/hermes_agent_keys.py: do not edit by '
                   f'hand."""\n\nDEFAULTS = {{\n{body}}}\n')
    print(f"wrote {OUT} ({len(found)} keys)")


if __name__ == "__main__":
    main()
