import pytest

from kernel.types import ProviderConfig
from plugins_providers.resolve import api_mode_for, resolve_api_mode

CASES = [
    (dict(provider="anthropic", model="claude-x"), "anthropic_messages"),
    (dict(provider="openai-codex", model="gpt-5-codex"), "codex_responses"),
    (dict(provider="codex", model="gpt-5-codex"), "codex_responses"),
    (dict(provider="openrouter", model="anthropic/claude-x"), "chat_completions"),
    (dict(provider="anthropic", base_url="https://api.openai.com/v1"), "anthropic_messages"),  # provider wins
    (dict(base_url="https://api.anthropic.com"), "anthropic_messages"),
    (dict(base_url="https://api.minimax.io/anthropic"), "anthropic_messages"),
    (dict(base_url="https://gateway.example.com/anthropic/v1/"), "anthropic_messages"),
    (dict(base_url="https://api.kimi.com/coding/"), "anthropic_messages"),
    (dict(base_url="https://api.openai.com/v1"), "codex_responses"),
    (dict(base_url="https://api.x.ai/v1"), "codex_responses"),
    (dict(base_url="https://openrouter.ai/api/v1", model="anthropic/claude-x"), "chat_completions"),
    (dict(base_url="http://127.0.0.1:11434/v1", model="llama3"), "chat_completions"),
    (dict(base_url="http://127.0.0.1:8080/v1", model="anthropic/claude-x"), "chat_completions"),
    (dict(model="anthropic/claude-sonnet-4"), "anthropic_messages"),
    (dict(model="openrouter/anthropic/claude-x"), "chat_completions"),
    (dict(model="openai/gpt-5"), "codex_responses"),
    (dict(model="gpt-4o"), "codex_responses"),  # a model name alone: its family's provider (openai)
    (dict(model="claude-sonnet-4-5"), "anthropic_messages"), (dict(model="gemini-2.0-flash"), "chat_completions"),
    (dict(provider="some-unknown", model="m"), "chat_completions"),
]


@pytest.mark.parametrize("fields,mode", CASES)
def test_resolution_order(fields, mode):
    assert api_mode_for(ProviderConfig(**fields)) == mode
    assert resolve_api_mode(config=ProviderConfig(**fields)) == mode
