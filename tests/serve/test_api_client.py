"""hermes serve driven by the published hermes-agent API client (hermes-agent-api-client, Python >= 3.13):
its capability probe accepts the server, and a streamed chat gives it deltas, tool progress and a clean end.
scripts/test_compat_newest_python.sh installs the client and runs this on the newest Python here."""

import asyncio

import pytest

from plugins_providers.testserver import reply

client_module = pytest.importorskip("hermes_agent_api_client", reason="the client needs Python >= 3.13")


def test_the_published_client_probes_and_streams_a_chat(serve, wire_server):
    from hermes_agent_api_client import (AssistantDeltaEvent, HermesAgentApiClient, TerminalEvent, TerminalOutcome,
                                         ToolProgressEvent, ToolProgressStatus, UsageEvent)

    served = serve(key="k" * 32)
    wire_server.push(reply(tool_calls=[("terminal", {"command": "echo plum"})]), reply("It printed plum."))

    async def talk():
        async with HermesAgentApiClient(f"{served.url}", served.key) as client:
            capabilities = await client.probe_capabilities()
            events = [e async for e in client.stream_chat_events(
                {"model": "hermes-agent", "stream": True, "messages": [{"role": "user", "content": "run it"}]})]
            return capabilities, events

    capabilities, events = asyncio.run(talk())
    assert capabilities.model == "hermes-agent"
    progress = [(e.tool_name, e.status) for e in events if isinstance(e, ToolProgressEvent)]
    assert progress == [("terminal", ToolProgressStatus.RUNNING), ("terminal", ToolProgressStatus.COMPLETED)]
    assert "".join(e.text for e in events if isinstance(e, AssistantDeltaEvent)) == "It printed plum."
    assert any(isinstance(e, UsageEvent) for e in events)
    assert isinstance(events[-1], TerminalEvent) and events[-1].outcome == TerminalOutcome.SUCCESS
