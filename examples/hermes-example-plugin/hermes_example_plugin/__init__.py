"""Example hermes plugin: a word_count tool, a guard hook and a command."""

import json

from kernel import hookimpl
from kernel.types import Block, Tool, ToolError


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
def pre_tool_call(call):
    if call.name == "word_count" and "FORBIDDEN" in str(call.args.get("text", "")):
        return Block("the example plugin refuses to count forbidden text")
    return None


@hookimpl
def register_commands(cli):
    import click

    @cli.command("example-hello")
    @click.option("--name", default="world")
    def example_hello(name):
        """Say hello from the example plugin."""
        click.echo(f"hello, {name}, from hermes-example-plugin")
