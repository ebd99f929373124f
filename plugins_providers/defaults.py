"""Provider defaults in one table, and how a ``ProviderConfig`` becomes a target.

``PROVIDERS`` maps a provider name (as in hermes-agent's profiles) to its API
mode, base URL and key variable. ``target(config, api_mode)`` works out what a
provider plugin talks to: which provider (explicit, or the prefix of a model
string such as ``anthropic/claude-...`` or ``openrouter/vendor/model``), the
base URL, the environment variable that holds the key, and the model name to
send (a prefix that only named the provider is stripped).

Credentials rule: the key comes from ``config.api_key_env`` if set, else the
provider's variable, else the API mode's (``OPENAI_API_KEY`` /
``ANTHROPIC_API_KEY``). A server on the local machine (base URL host
``127.0.0.1``, ``localhost`` or ``::1``) may run without a key: then a
placeholder is sent, because local servers (Ollama, llama.cpp, vLLM) ignore it
and the SDKs refuse to start without one. An ``api_key_env`` named explicitly
in config must exist, local or not: the user asked for that key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional
from urllib.parse import urlparse

from kernel.types import ProviderConfig

LOCAL_PLACEHOLDER_KEY = "local-no-key"


@dataclass(frozen=True)
class ProviderInfo:
    api_mode: str
    base_url: str  # "" = the SDK's own default
    env_var: str
    local: bool = False


PROVIDERS: dict = {
    "openai": ProviderInfo("codex_responses", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "openai-codex": ProviderInfo("codex_responses", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": ProviderInfo("anthropic_messages", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    "openrouter": ProviderInfo("chat_completions", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "deepseek": ProviderInfo("chat_completions", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "xai": ProviderInfo("codex_responses", "https://api.x.ai/v1", "XAI_API_KEY"),
    "gemini": ProviderInfo("chat_completions", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
    "groq": ProviderInfo("chat_completions", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "mistral": ProviderInfo("chat_completions", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "together": ProviderInfo("chat_completions", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "fireworks": ProviderInfo("chat_completions", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "deepinfra": ProviderInfo("chat_completions", "https://api.deepinfra.com/v1/openai", "DEEPINFRA_API_KEY"),
    "huggingface": ProviderInfo("chat_completions", "https://router.huggingface.co/v1", "HF_TOKEN"),
    "zai": ProviderInfo("chat_completions", "https://api.z.ai/api/paas/v4", "ZAI_API_KEY"),
    "kimi-coding": ProviderInfo("anthropic_messages", "https://api.kimi.com/coding", "KIMI_API_KEY"),
    "minimax": ProviderInfo("anthropic_messages", "https://api.minimax.io/anthropic", "MINIMAX_API_KEY"),
    "ollama": ProviderInfo("chat_completions", "http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", local=True),
    "lmstudio": ProviderInfo("chat_completions", "http://127.0.0.1:1234/v1", "LMSTUDIO_API_KEY", local=True),
    "vllm": ProviderInfo("chat_completions", "http://127.0.0.1:8000/v1", "VLLM_API_KEY", local=True),
    "llamacpp": ProviderInfo("chat_completions", "http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY", local=True),
}
ALIASES = {"claude": "anthropic", "codex": "openai-codex", "grok": "xai", "google": "gemini", "llama.cpp": "llamacpp", "lm-studio": "lmstudio", "custom": ""}

# Key variable per API mode when no provider is known.
MODE_ENV = {"chat_completions": "OPENAI_API_KEY", "codex_responses": "OPENAI_API_KEY", "anthropic_messages": "ANTHROPIC_API_KEY"}

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def provider_name(name: str) -> str:
    name = (name or "").strip().lower()
    return ALIASES.get(name, name)


def model_prefix_provider(model: str) -> tuple:
    """``("anthropic", "claude-x")`` for ``anthropic/claude-x``; ``("", model)``
    when the prefix is not a provider. ``openrouter/`` is stripped only when
    the rest is itself ``vendor/model`` (``openrouter/auto`` is a real model)."""
    head, sep, rest = (model or "").partition("/")
    name = provider_name(head)
    if not sep or name not in PROVIDERS:
        return "", model
    if name == "openrouter" and "/" not in rest:
        return "openrouter", model
    return name, rest


def host_of(base_url: str) -> str:
    try:
        return (urlparse(base_url).hostname or "").lower()
    except ValueError:
        return ""


def is_local(base_url: str) -> bool:
    return host_of(base_url) in LOCAL_HOSTS


def on_own_network(base_url: str) -> bool:
    """A server on this machine or the user's own network (a private or Tailscale address, a name without a dot:
    a model box on the LAN, a compose service), as hermes-agent tells local endpoints."""
    host = host_of(base_url)
    if host in LOCAL_HOSTS or (host and "." not in host and ":" not in host) or host.endswith((".local", ".internal")):
        return True
    if not host or host[-1].isalpha() and ":" not in host:  # a name (api.openai.com): no address to look at
        return False
    import ipaddress  # here: a provider's name needs none of it

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_loopback or address in ipaddress.ip_network("100.64.0.0/10")


@dataclass(frozen=True)
class Target:
    provider: str  # "" when unknown (a custom endpoint)
    base_url: str
    env_var: str
    explicit_env: bool
    model: str
    local: bool
    prefix: str  # the provider prefix stripped from model strings

    def model_for(self, model: str) -> str:
        if self.prefix and model.startswith(self.prefix + "/"):
            return model[len(self.prefix) + 1 :]
        return model

    def read_key(self) -> Optional[str]:
        """The key from the environment, the local placeholder, or None."""
        key = os.environ.get(self.env_var, "").strip()
        if key:
            return key
        if self.local and not self.explicit_env:
            return LOCAL_PLACEHOLDER_KEY
        return None


# model name families and their provider: a model name alone is enough (as llm and hermes-agent read it)
FAMILIES = (("claude-", "anthropic", "anthropic_messages"), ("gpt-", "openai", "codex_responses"),
            ("o1", "openai", "codex_responses"), ("o3", "openai", "codex_responses"),
            ("o4-", "openai", "codex_responses"), ("gemini-", "gemini", "chat_completions"),
            ("grok-", "xai", "codex_responses"))


SDK_BASE_URL = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}  # honoured as the SDKs honour them


def family_of(model: str) -> str:
    """The provider whose models are named like ``model`` (``gpt-4.1``: openai), or ""."""
    lowered = (model or "").strip().lower()
    return next((family for prefix, family, _ in FAMILIES if lowered.startswith(prefix)), "")


def url_problem(url: str) -> str:
    """What makes ``url`` no endpoint an SDK can call, as the end of a sentence; "" when nothing does."""
    from urllib.parse import urlsplit

    if "://" not in url:
        return f"has no scheme: use http://{url} (or https://)"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not one
    except ValueError as exc:
        return f"is not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    if not parts.hostname or any(char.isspace() for char in url):
        return "has no host name" if not parts.hostname else "has a space in it"
    return ""


def mistake(config: ProviderConfig, api_mode: str) -> Optional[str]:
    """A configuration that cannot work, said in one line with what to do,
    before any key is read or request made; None when it may work."""
    from kernel.hints import did_you_mean

    name = provider_name(config.provider)
    if name and name not in PROVIDERS and not config.base_url:
        return (f"unknown provider '{config.provider}'{did_you_mean(name, PROVIDERS, n=1)}; known: {', '.join(sorted(PROVIDERS))} "
                f"(or give --base-url for another endpoint)")
    url = target(config, api_mode).base_url  # also the SDK's variable's (OPENAI_BASE_URL), which the SDK would use
    wrong_url = url and url_problem(url)
    if wrong_url:
        var = "" if config.base_url else next((v for v in SDK_BASE_URL.values() if os.environ.get(v) == url), "")
        return f"the base URL '{url}'{f' (from {var})' if var else ''} {wrong_url}"
    model = (config.model or "").strip()
    if not model:
        return "no model: pass -m MODEL, or choose one with `hermes setup` (`hermes model set MODEL` in a script)"
    return None


def target(config: ProviderConfig, api_mode: str) -> Target:
    provider = provider_name(config.provider)
    prefix_provider, stripped = model_prefix_provider(config.model)
    model, prefix = config.model, ""
    # a model string that names its provider, unless a custom base URL says the
    # string is that endpoint's own model id (OpenRouter style "vendor/model")
    if prefix_provider and (not provider or provider == prefix_provider):
        if not config.base_url or host_of(config.base_url) == host_of(PROVIDERS[prefix_provider].base_url):
            provider = prefix_provider
            if stripped != config.model:
                model, prefix = stripped, config.model.split("/", 1)[0]
    if not provider and not config.base_url:  # a model name alone: its family's provider
        provider = family_of(model)
    info = PROVIDERS.get(provider)
    base_url = config.base_url or os.environ.get(SDK_BASE_URL.get(provider, ""), "") or (info.base_url if info else "")
    env_var = config.api_key_env or (info.env_var if info else MODE_ENV.get(api_mode, "OPENAI_API_KEY"))
    local = is_local(base_url) if base_url else bool(info and info.local)
    return Target(provider, base_url, env_var, bool(config.api_key_env), model, local, prefix)
