"""``hermes sandbox``: whether the terminal tool's commands run in a sandbox on
this machine, and if not, why (exit 1 when one is wanted and cannot start)."""

from __future__ import annotations

import click


@click.command("sandbox")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def sandbox_command(app, as_json: bool):
    """Whether tool commands run in a sandbox here, and if not, why."""
    import os
    import shutil

    from hermes.cli.app import Fail, echo_json
    from kernel.types import ToolError
    from plugins.core_tools.sandbox import Sandbox

    try:
        box = Sandbox.from_config(app.config)
    except ToolError as exc:
        raise Fail(str(exc), 2) from None
    why = box.why_not()
    info = {"mode": box.mode, "sandboxed": box.mode != "off" and why is None, "why_not": why, "bwrap": shutil.which("bwrap"),
            "network": box.network, "required": box.required, "workspace": box.workspace, "writable": list(box.writable),
            "hidden": list(box.hidden), "not_folders": [p for p in box.writable if not os.path.isdir(p)]}
    if as_json:
        echo_json(info)
    else:
        click.echo(box.describe().replace("It will run", "Tool commands run", 1).replace("It will not run",
                                                                                       "Tool commands do not run", 1))
        for key in ("bwrap", "workspace", "writable", "hidden") if info["sandboxed"] else ():
            if info[key]:
                click.echo(f"  {key}: {', '.join(info[key]) if isinstance(info[key], list) else info[key]}")
        for path in info["not_folders"] if info["sandboxed"] else ():  # a typo there: writes fail read-only
            click.echo(f"  not a folder (sandbox.writable): {path}: commands cannot write it")
    if why is not None:
        raise SystemExit(1)
