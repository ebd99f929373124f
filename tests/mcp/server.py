"""A real MCP server (the `mcp` SDK's MCPServer) for the tests, its behaviour chosen by its first argument:

    normal        tools echo, add, env_of, slow, die, picture, weather (structured); a resource and a prompt
    crash-start   exits before it answers anything
    hang-start    never answers the handshake
    stubborn      as normal, but it and a child it starts ignore SIGTERM (the pids go to a file: argv[2])
    changing      as normal, plus `grow`, which adds a tool and says the list changed
    slow-start    as normal, after waiting argv[2] seconds (a server that waits on its backend first)
    sampling      as normal, plus `ask_model`, which asks the client's model (sampling)

Run over stdio, streamable HTTP with `--http PORT`, or SSE with `--sse PORT`; over HTTPS that asks for the client's
certificate (mutual TLS) with `--https PORT CERT KEY CLIENT_AUTHORITY`.
"""

import os
import signal
import subprocess
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ImageContent, SamplingMessage, TextContent, ToolAnnotations

mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
if mode == "crash-start":
    print("crash-start: giving up before the handshake", file=sys.stderr)
    sys.exit(3)
if mode == "hang-start":
    time.sleep(3600)
if mode == "slow-start":
    time.sleep(float(sys.argv[2]))

server = MCPServer("hermes-test", log_level="WARNING")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def env_of(name: str) -> str:
    """The value of a variable of this server's environment, in brackets ([] when unset)."""
    return f"[{os.environ.get(name, '')}]"


@server.tool()
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def die() -> str:
    """The server exits in the middle of this call."""
    os._exit(7)


@server.tool()
def picture() -> list:
    """A one-pixel PNG and a caption."""
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    return [TextContent(type="text", text="a pixel"), ImageContent(type="image", data=png, mime_type="image/png")]


@server.tool()
def weather(city: str) -> dict:
    """Structured weather."""
    return {"city": city, "celsius": 21}


@server.resource("note://hello", mime_type="text/plain")
def hello_note() -> str:
    """A short note."""
    return "hello from a resource"


@server.prompt()
def greet(name: str) -> str:
    """A greeting prompt."""
    return f"Please greet {name} warmly."


if mode == "changing":
    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool `grown` and tell the client its list changed."""
        server.add_tool(lambda: "grown ran", name="grown", description="A tool that appeared later.")
        await ctx.session.send_tool_list_changed()
        return "grew"

if mode == "sampling":
    @server.tool()
    async def ask_model(question: str, ctx: Context) -> str:
        """Ask the client's model and return its answer."""
        result = await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=50)
        return f"the model said: {result.content.text} ({result.model})"

    @server.tool()
    async def ask_twice(ctx: Context) -> str:
        """Ask the client's model twice; say what came back each time."""
        said = []
        for question in ("one?", "two?"):
            try:
                result = await ctx.session.create_message(
                    [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=50)
                said.append(result.content.text)
            except Exception as exc:  # the client refused: its message
                said.append(f"refused: {exc}")
        return " | ".join(said)

if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                              "signal.SIG_IGN); time.sleep(3600)"], stdin=subprocess.DEVNULL)
    with open(sys.argv[2], "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")

if __name__ == "__main__":
    if "--http" in sys.argv:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    elif "--https" in sys.argv:
        import ssl

        import uvicorn

        port, cert, key, authority = sys.argv[sys.argv.index("--https") + 1:][:4]
        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(port), log_level="warning",
                    ssl_certfile=cert, ssl_keyfile=key, ssl_ca_certs=authority, ssl_cert_reqs=ssl.CERT_REQUIRED)
    elif "--sse" in sys.argv:
        server.run("sse", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--sse") + 1]))
    else:
        server.run()
