"""``hermes plugins new NAME [--dir FOLDER]``: write a plugin package to start from (see :mod:`plugins.scaffold`)."""

from __future__ import annotations

import re
from pathlib import Path

import click

NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")

PYPROJECT = '''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "hermes-{name}"
version = "0.1.0"
description = "{description}"
# no dependency on hermes: the plugin runs inside the hermes it is installed beside

[project.entry-points."hermes.plugins"]
{name} = "{module}"
'''

MODULE = '''"""{description}"""
import json

from kernel import hookimpl
from kernel.types import Tool, ToolError


def {tool}(args, ctx):
    """The tool: ``args`` is what the model sent (check it), ``ctx.agent.config`` the settings, read now."""
    text = args.get("text")
    if not isinstance(text, str):
        raise ToolError("{tool} needs a 'text' string")  # the model reads this and can try again
    greeting = ctx.agent.config.get("{name}.greeting")
    return json.dumps({{"reply": f"{{greeting}}, {{text}}"}})


@hookimpl
def register_config(declare):
    declare("{name}.greeting", str, "Hello", "what {tool} says first")


@hookimpl
def register_tools(register):
    register(Tool("{tool}", "Greet the text it is given.", {{"type": "object",
                  "properties": {{"text": {{"type": "string"}}}}, "required": ["text"]}},
                  {tool}, toolset="{name}", parallel_safe=True))
'''

TESTS = '''import json

from hermes.host.config import Config
from hermes.host.plugins import PluginHost
from kernel.agent import Agent
from kernel.types import ProviderConfig
from plugins_providers.scripted import scripted_plugin

import {module}


def test_the_tool_reads_its_setting_when_called(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    script = scripted_plugin([{{"tool_calls": [["{tool}", {{"text": "world"}}]]}}, "done"])
    host = PluginHost.from_objects([script, {module}], Config({{"{name}": {{"greeting": "Hi"}}}}))
    result = Agent(host, ProviderConfig(api_mode="scripted", model="test")).run_conversation("greet the world")
    assert json.loads(result["messages"][2]["content"]) == {{"reply": "Hi, world"}}


def test_a_bad_argument_is_an_error_the_model_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    script = scripted_plugin([{{"tool_calls": [["{tool}", {{"text": 5}}]]}}, "sorry"])
    host = PluginHost.from_objects([script, {module}], Config({{}}))
    result = Agent(host, ProviderConfig(api_mode="scripted", model="test")).run_conversation("greet 5")
    assert "needs a 'text' string" in result["messages"][2]["content"]


def test_hermes_lists_it(hermes_cli):  # the package must be installed (pip install -e .)
    info = hermes_cli("plugins", "info", "{name}")
    assert info.returncode == 0, info.stderr
    assert "tools: {tool}" in info.stdout and "config_keys: {name}.greeting" in info.stdout
'''

README = '''# hermes-{name}

{description}

    pip install -e .        # beside hermes, in its environment
    hermes plugins info {name}
    pytest                  # the tests use hermes' fixtures (hermes_cli, wire_server)

CONTRIBUTING.md and docs/plugins.md of hermes say what a plugin can do.
'''


@click.command("new")
@click.argument("name")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), metavar="FOLDER",
              help="Where to write it (default: ./hermes-NAME; it must not exist).")
@click.option("--description", default="", help="One line: what the plugin does.")
def new(name: str, folder, description: str):
    """Write a plugin package to start from: a tool, a config key, tests, the entry point."""
    from hermes.cli.app import EXIT_USAGE, Fail, program

    if not NAME.fullmatch(name) or len(name) > 40:
        raise Fail(f"{name!r} is not a plugin name: lowercase letters and digits, words joined by '-' (my-tool)",
                   EXIT_USAGE)
    folder = folder or Path(f"hermes-{name}")
    if folder.exists():
        raise Fail(f"{folder} exists already: choose another --dir, or remove it")
    module, tool = "hermes_" + name.replace("-", "_"), name.replace("-", "_") + "_greet"
    fields = {"name": name, "module": module, "tool": tool,
              "description": description.strip().replace('"', "'") or f"A hermes plugin: {name}."}
    files = {"pyproject.toml": PYPROJECT, f"{module}/__init__.py": MODULE, f"tests/test_{module}.py": TESTS,
             "README.md": README}
    for relative, template in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**fields), encoding="utf-8")
    click.echo(f"Wrote {folder}/ ({', '.join(files)}). Next:\n"
               f"  pip install -e {folder}\n  {program()} plugins info {name}\n  pytest {folder}")
