"""How big each layer of hermes is, and whether it keeps its limits.

Three layers (see ``hermes/__init__.py``) and the essential commands plugin,
each with a limit of lines, the kernel also of code lines (without
docstrings, comments and blank lines); no Python file of the project (tests
aside) over 600 lines; and ``kernel/`` importing nothing but the standard
library, pluggy and itself. ``tests/kernel/test_kernel_size.py`` fails when
one does not hold. The limits only go down: a change that would need more is
left out, or the room it needs is made elsewhere first.

    python scripts/kernel_size.py [--json]
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FILE_LINES = 600
# layer -> (folder, most lines, most code lines or None)
LAYERS = {
    "kernel": ("kernel", 2590, 1600),
    "host": ("hermes/host", 2000, None),
    "program": ("hermes/cli", 800, None),
    "commands plugin": ("plugins/commands", 500, None),
}
# what the kernel may import besides itself
KERNEL_MAY_IMPORT = {"pluggy"}
# files allowed over MAX_FILE_LINES for now, and their size when that was written: each only shrinks
OVER_TODAY: dict = {}
SKIP = {"tests", "build", "bench", ".git", "examples"}


def count(path: Path) -> tuple:
    """(lines, code lines) of a Python file."""
    source = path.read_text(encoding="utf-8")
    docs = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines = source.splitlines()
    code = sum(1 for number, line in enumerate(lines, 1)
               if line.strip() and not line.strip().startswith("#") and number not in docs)
    return len(lines), code


def imported(path: Path) -> set:
    """The top-level names of every module ``path`` imports (lazily or not; ``TYPE_CHECKING`` included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def kernel_imports() -> dict:
    """kernel file -> what it imports that is neither the standard library, pluggy nor the kernel."""
    allowed = set(sys.stdlib_module_names) | KERNEL_MAY_IMPORT | {"kernel", "__future__"}
    found = {}
    for path in sorted((ROOT / "kernel").rglob("*.py")):
        bad = sorted(imported(path) - allowed)
        if bad:
            found[path.relative_to(ROOT).as_posix()] = bad
    return found


def python_files() -> list:
    return sorted(p for p in ROOT.rglob("*.py") if not SKIP & set(p.relative_to(ROOT).parts))


def report() -> dict:
    files = {p.relative_to(ROOT).as_posix(): count(p) for p in python_files()}
    layers = {}
    for layer, (folder, most_lines, most_code) in LAYERS.items():
        mine = {name: size for name, size in files.items() if name.startswith(folder + "/")}
        layers[layer] = {"folder": folder, "files": len(mine), "lines": sum(s[0] for s in mine.values()),
                         "code": sum(s[1] for s in mine.values()), "max_lines": most_lines, "max_code": most_code}
    over = {name: size[0] for name, size in files.items() if size[0] > MAX_FILE_LINES}
    return {"layers": layers, "files_over_limit": over, "kernel_imports": kernel_imports(),
            "files": {name: {"lines": s[0], "code": s[1]} for name, s in files.items()}}


def problems(found: dict) -> list:
    """Every limit that does not hold, one line each."""
    out = []
    for layer, size in found["layers"].items():
        if size["lines"] > size["max_lines"]:
            out.append(f"{layer} ({size['folder']}/): {size['lines']} lines, more than {size['max_lines']}")
        if size["max_code"] is not None and size["code"] > size["max_code"]:
            out.append(f"{layer} ({size['folder']}/): {size['code']} code lines, more than {size['max_code']}")
    for name, lines in found["files_over_limit"].items():
        if name not in OVER_TODAY or lines > OVER_TODAY[name]:
            out.append(f"{name}: {lines} lines, more than {MAX_FILE_LINES}")
    for name, modules in found["kernel_imports"].items():
        out.append(f"{name} imports {', '.join(modules)}: the kernel imports only the standard library, pluggy "
                   "and itself")
    return out


def main() -> int:
    found = report()
    if "--json" in sys.argv[1:]:
        print(json.dumps(dict(found, problems=problems(found)), indent=2))
        return 0
    print(f"{'layer':18} {'folder':18} {'lines':>6} {'limit':>6} {'code':>6} {'limit':>6}")
    for layer, size in found["layers"].items():
        print(f"{layer:18} {size['folder'] + '/':18} {size['lines']:6} {size['max_lines']:6} {size['code']:6} "
              f"{size['max_code'] if size['max_code'] is not None else '-':>6}")
    for line in problems(found):
        print("  over: " + line)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except BrokenPipeError:  # | head
        raise SystemExit(0)
