"""Shared helpers for the provider tests (plain functions, no fixtures)."""

from kernel.types import ModelRequest, ProviderConfig

MODES = ("chat_completions", "codex_responses", "anthropic_messages")
WEATHER = {"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


class Recorder:
    """An ``emit`` that keeps what the provider streamed."""

    def __init__(self):
        self.events = []

    def delta(self, text):
        self.events.append(("delta", text))

    def reasoning(self, text):
        self.events.append(("reasoning", text))

    def tool_call(self, name, call_id):
        self.events.append(("tool_call", name, call_id))

    def text(self, kind="delta"):
        return "".join(e[1] for e in self.events if e[0] == kind)


def base_url(server, mode):
    return server.url if mode == "anthropic_messages" else server.openai_url


def config(server, mode, model="test-model", **options):
    options.setdefault("strict_response_validation", True)
    return ProviderConfig(model=model, base_url=base_url(server, mode), api_mode=mode, extra=tuple(sorted(options.items())))


def make_provider(server, mode, **options):
    from plugins_providers import anthropic_messages, openai_chat, openai_responses

    factories = {"chat_completions": openai_chat.factory, "codex_responses": openai_responses.factory, "anthropic_messages": anthropic_messages.factory}
    return factories[mode](config(server, mode, **options))


def request(messages=None, tools=(WEATHER,), stream=True, **kw):
    if messages is None:
        messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "weather in Paris?"}]
    return ModelRequest(model="test-model", messages=list(messages), tools=list(tools), stream=stream, **kw)
