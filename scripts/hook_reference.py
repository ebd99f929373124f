"""Generate docs/hooks.md and docs/config.md from what the code declares.

docs/hooks.md: the kernel's specs (kernel/hookspecs/) and those the built-in
plugins add through ``register_hookspecs`` (found by loading the built-ins as
``hermes`` does), in source order, with their types, options, parameters and
returns. docs/config.md: every config key the kernel and the built-in plugins
declare (``register_config``), with type, default, owner and help.

    python scripts/hook_reference.py          # rewrite docs/hooks.md
    python scripts/hook_reference.py --check  # exit 1 when docs/hooks.md is stale
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "hooks.md"
CONFIG_TARGET = ROOT / "docs" / "config.md"
# the specs of the three layers (every host has them), before those plugins bring
LAYERS = {"kernel.hookspecs": "kernel", "hermes.host.hookspecs": "host", "hermes.cli.hookspecs": "program"}
LAYER_NAMES = tuple(LAYERS.values())
# a layer's hooks above its first ``# ===`` section title (a module of one section needs none)
LAYER_TITLES = {"kernel": "The kernel", "host": "The plugin host", "program": "The hermes program"}


@dataclass
class Spec:
    name: str
    function: object
    options: dict
    owner: str  # "kernel" or the plugin that adds it
    module: str
    section: str
    params: list = field(default_factory=list)  # (name, annotation)
    returns: str = ""

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.function) or ""


def _sections(module) -> dict:
    """Function name -> the ``# ===`` section title above it in the module's source."""
    title, found = "", {}
    lines = inspect.getsource(module).splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# ===") and i + 1 < len(lines) and lines[i + 1].startswith("# "):
            title = lines[i + 1][2:].strip()
        match = re.match(r"def (\w+)\(", line)
        if match:
            found[match.group(1)] = title
    return found


def _builtin_host():
    from hermes.host.config import Config
    from hermes.host.plugins import PluginHost

    return PluginHost.discover(Config({}), environ={"HERMES_SAFE_MODE": "1"}, import_third_party=False)


def collect(host=None) -> list:
    """Every hook spec of the kernel and the built-in plugins, in order."""
    import importlib

    host = host or _builtin_host()
    modules = {**LAYERS, **dict(sorted(host.spec_owners.items()))}
    specs = []
    for module_name, owner in modules.items():
        module = importlib.import_module(module_name)
        order = [m.__name__ for m in getattr(module, "MODULES", (module,))]  # kernel.hookspecs is a package
        functions = [f for f in vars(module).values() if inspect.isfunction(f) and hasattr(f, "hermes_spec")]
        functions.sort(key=lambda f: (order.index(f.__module__) if f.__module__ in order else len(order),
                                      f.__code__.co_firstlineno))
        for fn in functions:
            sections = _sections(sys.modules[fn.__module__])
            sig = inspect.signature(fn)
            specs.append(Spec(
                name=fn.__name__, function=fn, options={k: v for k, v in fn.hermes_spec.items() if v},
                owner=owner, module=module_name,
                section=(sections.get(fn.__name__) or LAYER_TITLES[owner]) if owner in LAYER_NAMES
                else f"Added by the {owner} plugin",
                params=[(p.name, "" if p.annotation is inspect.Parameter.empty else str(p.annotation))
                        for p in sig.parameters.values()],
                returns="" if sig.return_annotation is inspect.Signature.empty else str(sig.return_annotation),
            ))
    return specs


# the parameters many specs share, documented once (here and in ``kernel.hookspecs``) and filled in
# where a spec does not say more of them
SHARED = {
    "agent": "the :class:`kernel.agent.Agent` the event belongs to.",
    "session_id": "the session.",
    "task_id": "the turn's task id.",
    "turn_id": "the turn's id.",
    "platform": "where the agent runs (``cli`` for ``hermes chat``, ``run`` for ``hermes run``, a gateway's name).",
    "tool_name": "the tool.",
    "tool_call_id": "the tool call's id.",
}


def parse_doc(doc: str, returns_annotation: str = "") -> tuple:
    """(prose, {param: text}, return text) of a docstring with ``:param:``
    lines; a :data:`SHARED` parameter without one gets the shared text, and a
    hook annotated ``-> None`` without a ``:return:`` line returns nothing read."""
    prose, params, returns, current = [], dict(SHARED), "", None
    for line in doc.splitlines():
        param = re.match(r":param (\w+):\s*(.*)", line)
        ret = re.match(r":returns?:\s*(.*)", line)
        if param:
            current = param.group(1)
            params[current] = param.group(2)
        elif ret:
            current = ":return"
            returns = ret.group(1)
        elif current and line.startswith("    "):
            if current == ":return":
                returns += " " + line.strip()
            else:
                params[current] += " " + line.strip()
        else:
            current = None
            prose.append(line)
    if not returns.strip() and returns_annotation == "None":
        returns = "ignored."
    return "\n".join(prose).strip(), params, returns.strip()


def _md(text: str) -> str:
    """reStructuredText roles and literals of the docstrings as Markdown."""
    text = re.sub(r":(?:class|func|mod|meth|attr):`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def render(specs: list) -> str:
    out = [
        "# Hook reference",
        "",
        "Generated by `python scripts/hook_reference.py` from the specs of the kernel",
        "(`kernel/hookspecs/`: the loop's), the plugin host (`hermes/host/hookspecs.py`), the",
        "program (`hermes/cli/hookspecs.py`) and those the built-in plugins add with",
        "`register_hookspecs`; do not edit by hand.",
        "An implementation declares only the arguments it uses:",
        "`@hookimpl def post_tool_call(outcome): ...`.",
        "",
    ]
    section = None
    for spec in specs:
        if spec.section != section:
            section = spec.section
            out += [f"## {section}", ""]
        args = ", ".join(f"{n}: {a}" if a else n for n, a in spec.params)
        out.append(f"### `{spec.name}({args})" + (f" -> {spec.returns}`" if spec.returns else "`"))
        out.append("")
        flags = [f"*{name}*" for name in ("firstresult", "historic") if spec.options.get(name)]
        meaning = {"firstresult": "the first non-`None` answer wins", "historic": "also called for plugins registered later"}
        if flags:
            out += ["; ".join(f"{flag}: {meaning[flag.strip('*')]}" for flag in flags), ""]
        if spec.owner != "kernel":
            out += [f"Spec in `{spec.module}`.", ""]
        prose, params, returns = parse_doc(spec.doc, spec.returns)
        out += [_md(prose), ""]
        for name, _annotation in spec.params:
            out.append(f"- `{name}`: {_md(params.get(name, ''))}")
        if returns:
            out.append(f"- returns: {_md(returns)}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_config(host=None) -> str:
    import json

    from hermes.host.config import kind

    keys = sorted((host or _builtin_host()).config.keys.values(), key=lambda k: (k.owner not in LAYER_NAMES, LAYER_NAMES.index(k.owner) if k.owner in LAYER_NAMES else 0, k.owner, k.name))
    out = [
        "# Config keys",
        "",
        "Generated by `python scripts/hook_reference.py` from the keys the kernel, the plugin",
        "host and the built-in plugins declare (`register_config`); do not edit by hand. `hermes config",
        "show` lists the keys of the plugins you have loaded, with their values.",
        "",
        "| key | type | default | declared by | what it does |",
        "|---|---|---|---|---|",
    ]
    for k in keys:
        default = "" if k.default is None else json.dumps(k.default)
        names = f": the name of one of the {k.names.replace('_', ' ')}" if k.names else ""
        out.append(f"| `{k.name}` | {kind(k)}{names} | {f'`{default}`' if default else ''} | {k.owner} | "
                   f"{k.help.replace('|', '/')} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed reference is stale")
    args = parser.parse_args(argv)
    host = _builtin_host()
    stale = 0
    for target, text in ((TARGET, render(collect(host))), (CONFIG_TARGET, render_config(host))):
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                print(f"{target.relative_to(ROOT)} is stale: run python scripts/hook_reference.py", file=sys.stderr)
                stale = 1
            continue
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target.relative_to(ROOT)} ({len(text.splitlines())} lines)")
    return stale


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
