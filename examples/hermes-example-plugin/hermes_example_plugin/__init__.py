"""Example hermes plugin: a word_count tool, a guard hook and a command."""

import json

from kernel import hookimpl
from kernel.types import Tool, ToolError


def word_count(args, ctx):
    text = args.get("text")
    if not isinstance(text, str):
        raise ToolError("word_count needs a 'text' string argument")
    return json.dumps({"words": len(text.split()), "characters": len(text)})


@hookimpl
def register_tools(register):
    register(
        Tool(
            name="word_count",
            description="Count the words and characters of a text.",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text to count."}},
                "required": ["text"],
            },
            handler=word_count,
            toolset="example",
            parallel_safe=True,
        )
    )


@hookimpl
def pre_tool_call(tool_name, args):
    if tool_name == "word_count" and "FORBIDDEN" in str(args.get("text", "")):
        return {"action": "block", "message": "the example plugin refuses to count forbidden text"}
    return None


@hookimpl
def register_commands(cli):
    import click

    @cli.command("example-hello")
    @click.option("--name", default="world")
    def example_hello(name):
        """Say hello from the example plugin."""
        click.echo(f"hello, {name}, from hermes-example-plugin")
