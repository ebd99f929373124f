"""hermes model provider profiles (``providers.register_provider``) as kernel
model providers: each profile is served by the kernel provider of its
``api_mode`` with the profile's base URL and key variable."""

from __future__ import annotations

from typing import Any, Callable

from plugins.hermes_compat import state

# the kernel provider plugin serving each hermes api_mode
_MODE_FACTORIES = {
    "chat_completions": "plugins_providers.openai_chat:factory",
    "codex_responses": "plugins_providers.openai_responses:factory",
    "anthropic_messages": "plugins_providers.anthropic_messages:factory",
}


def _names(profile: Any) -> set:
    return {profile.name, *[a for a in (getattr(profile, "aliases", ()) or ()) if isinstance(a, str)]}


def profile_config(profile: Any, pconf: Any):
    """The ``ProviderConfig`` the api-mode provider needs for this profile: its base URL and key variable
    unless the user's config names them, and its provider options (``default_headers``, hermes-agent's field, as
    ``extra_headers``) under the user's ``provider_options``, which win key by key (a mapping's keys too)."""
    import os

    env_vars = [v for v in (getattr(profile, "env_vars", ()) or ()) if isinstance(v, str)]
    key_env = pconf.api_key_env or next((v for v in env_vars if os.environ.get(v)), env_vars[0] if env_vars else "")
    own = dict(getattr(profile, "options", None) or {})
    if isinstance(getattr(profile, "default_headers", None), dict) and profile.default_headers:
        own["extra_headers"] = profile.default_headers
    options = pconf.options()
    for key, value in own.items():
        given = options.get(key)
        options[key] = {**value, **given} if isinstance(value, dict) and isinstance(given, dict) else \
            value if given is None else given
    return pconf.with_(api_mode=getattr(profile, "api_mode", "") or "chat_completions",
                       base_url=pconf.base_url or getattr(profile, "base_url", "") or "", api_key_env=key_env,
                       model=pconf.model or getattr(profile, "default_model", "") or "",
                       extra=tuple(sorted(options.items())))


def profile_factory(profile: Any) -> Callable:
    def factory(pconf: Any):
        from hermes.host.plugins import load_target
        from kernel.types import CONFIG, ProviderError

        inner = profile_config(profile, pconf)
        target = _MODE_FACTORIES.get(inner.api_mode)
        if target is None:
            raise ProviderError(f"hermes provider profile {profile.name!r} uses api_mode {inner.api_mode!r}, "
                                f"which hermes-compat cannot serve", reason=CONFIG, provider=profile.name)
        try:
            make = load_target(target)
        except ImportError as exc:
            raise ProviderError(f"hermes provider profile {profile.name!r} needs the {inner.api_mode} provider "
                                f"plugin ({exc})", reason=CONFIG, provider=profile.name) from None
        return make(inner)

    return factory


def register_profiles(record: state.PluginRecord, register: Callable) -> None:
    for profile in record.profiles:
        label = getattr(profile, "display_name", "") or getattr(profile, "description", "") or profile.name
        register(profile.name, profile_factory(profile), f"{label} (hermes provider profile, {profile.api_mode})")


def resolve_mode(record: state.PluginRecord, pconf: Any):
    provider = (getattr(pconf, "provider", "") or "").strip().lower()
    for profile in record.profiles:
        if provider and provider in {n.lower() for n in _names(profile)}:
            return profile.name
    return None
