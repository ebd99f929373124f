"""Build fake installed distributions (dist-info + module) in a folder, so
entry-point discovery is tested the way pip-installed plugins are found."""

import textwrap
from pathlib import Path


def make_dist(root: Path, dist: str, version: str, plugins: dict, summary: str = "a test plugin",
              group: str = "hermes.plugins") -> None:
    """``plugins`` maps entry-point name -> (module name, module source)."""
    meta = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\nSummary: {summary}\n\n")
    lines = [f"[{group}]"]
    for ep_name, (module, source) in plugins.items():
        lines.append(f"{ep_name} = {module}")
        (root / f"{module}.py").write_text(textwrap.dedent(source))
    (meta / "entry_points.txt").write_text("\n".join(lines) + "\n")
