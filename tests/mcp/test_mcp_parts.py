"""The MCP plugin's pure parts: tool names, schemas, ${VAR} references, entries and their problems."""

from plugins.mcp.config import configured, parse, problems, resolve
from plugins.mcp.tools import input_schema, sanitize, tool_name


def test_tool_names_are_hermes_agents_and_fit_the_providers_limit():
    assert tool_name("my-server", "get.time") == "mcp__my_server__get_time"
    assert sanitize("a b/c-d") == "a_b_c_d"
    long = tool_name("a-very-long-server-name-indeed", "an_even_longer_tool_name_that_goes_on_and_on")
    other = tool_name("a-very-long-server-name-indeed", "an_even_longer_tool_name_that_goes_on_and_off")
    assert len(long) == 64 and len(other) == 64 and long != other  # cut, and still told apart


def test_input_schemas_become_object_schemas():
    assert input_schema(None) == {"type": "object", "properties": {}}
    assert input_schema({"type": "string"}) == {"type": "object", "properties": {}}
    kept = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert input_schema(kept) == kept


def test_variable_references_resolve_from_the_environment_and_unset_ones_stay():
    env = {"TOKEN": "abc", "HOST": "example"}
    assert resolve("Bearer ${TOKEN}", env) == "Bearer abc"
    assert resolve("${env:HOST}:${ MISSING }", env) == "example:${ MISSING }"


def test_entries_parse_with_hermes_agents_defaults_and_problems_are_said():
    stdio = parse("t", {"command": "uvx", "args": ["x", 1], "tools": {"include": "one", "exclude": ["two"]},
                        "timeout": "soon", "connect_timeout": 5})
    assert stdio.transport == "stdio" and stdio.args == ["x", "1"] and stdio.timeout == 300.0
    assert stdio.connect_timeout == 5.0 and stdio.offers("one") and not stdio.offers("three")
    remote = parse("r", {"url": "https://x/mcp", "transport": "streamable-http"})
    assert remote.transport == "http" and problems(remote) == []
    assert problems(parse("u", {"url": "ftp://x"})) == ["url must start with http:// or https:// (got 'ftp://x')"]
    assert problems(parse("n", {"transport": "carrier-pigeon"})) == [
        "transport must be stdio, http or sse, not 'carrier-pigeon'"]
    assert parse("bad", "not a mapping") is None
    signed = parse("o", {"url": "https://x/mcp", "auth": "OAuth", "oauth": {"scope": "read"}})
    assert (signed.auth, signed.oauth, problems(signed)) == ("oauth", {"scope": "read"}, [])
    assert problems(parse("o", {"command": "uvx", "auth": "oauth"})) == [
        "auth: oauth is for a remote server (url), not a command"]
    assert problems(parse("o", {"url": "https://x/mcp", "auth": "basic"})) == [
        "auth 'basic' is not known here (auth: oauth signs in to a remote server)"]


def test_a_config_entry_changes_a_shipped_server_key_by_key():
    class Config:
        def __init__(self, data):
            self.data = data

        def get(self, key):
            return self.data.get(key)

    shipped = {"notes": ({"command": "notes-server", "timeout": 60}, "my-plugin")}
    found = configured(Config({"mcp_servers": {"notes": {"timeout": 5}}}), shipped)
    assert found["notes"].command == "notes-server" and found["notes"].timeout == 5.0
    assert found["notes"].source == "my-plugin"
    assert not configured(Config({"mcp_servers": {"notes": {"enabled": False}}}), shipped)["notes"].enabled


def test_a_url_replaces_a_shipped_command_and_an_entry_with_both_is_a_problem():
    """A url in config.yaml for a plugin's stdio server was merged beside its command, and the command won,
    unsaid; an entry with both ran the command (`python3` with no script: a wait for the connect timeout)."""
    class Config:
        def __init__(self, data):
            self.data = data

        def get(self, key):
            return self.data.get(key)

    shipped = {"notes": ({"command": "notes-server", "args": ["--stdio"], "timeout": 60}, "my-plugin")}
    remote = configured(Config({"mcp_servers": {"notes": {"url": "https://notes.example/mcp"}}}), shipped)["notes"]
    assert (remote.transport, remote.url, remote.command, remote.args, remote.timeout) == (
        "http", "https://notes.example/mcp", "", [], 60.0) and problems(remote) == []
    back = configured(Config({"mcp_servers": {"notes": {"command": "mine"}}}),
                      {"notes": ({"url": "https://x/mcp"}, "my-plugin")})["notes"]
    assert (back.transport, back.command, back.url) == ("stdio", "mine", "")
    assert problems(parse("both", {"command": "python3", "url": "http://127.0.0.1:1/mcp"})) == [
        "give a command (a local server) or a url (a remote one), not both"]
