"""hermes-agent's own endpoints in config.yaml: ``providers:`` (keyed) and the older ``custom_providers:`` (a list).

::

    model: {default: llama3, provider: local}
    providers:
      local:
        name: Local Ollama                  # shown; the provider may also be named by it, or as custom:<name>
        api: http://127.0.0.1:11434/v1      # or url, or base_url
        key_env: OLLAMA_API_KEY             # the variable holding its key (none needed: none)
        api_mode: chat_completions          # or transport; anthropic_messages and codex_responses too
        default_model: llama3               # the model when none is given
        extra_headers: {X-Team: agents}     # sent with every request (a value may be a secret: never shown)
        extra_body: {keep_alive: 5m}        # merged into every request's body
        ssl_ca_cert: ~/certs/box.pem        # the authority its certificate is checked with (ssl_verify: false: none)

Each enabled entry with a URL becomes a provider profile (:mod:`plugins.hermes_compat.profiles`), served by the
provider plugin of its API mode; they load as one plugin, ``custom-providers``. A key written in the entry itself
(``api_key``) still works, with a warning: it is handed to the provider through this process's environment only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from plugins.hermes_compat.host.provider_base import ProviderProfile
from plugins.hermes_compat.state import log

MODES = ("chat_completions", "codex_responses", "anthropic_messages")
_CAMEL = {"apiKey": "api_key", "baseUrl": "base_url", "apiMode": "api_mode", "keyEnv": "key_env",
          "apiKeyEnv": "key_env", "api_key_env": "key_env", "defaultModel": "default_model", "transport": "api_mode"}


@dataclass
class Profile(ProviderProfile):
    """hermes-agent's profile record, with the entry's model for when none is given and its provider options."""

    default_model: str = ""
    options: dict = field(default_factory=dict)  # the entry's provider options: extra_body, its TLS settings


def _norm(name: str) -> str:
    return name.strip().lower().replace(" ", "-")


def _profile(key: str, raw: Any, where: str) -> "Profile | None":
    if not isinstance(raw, dict) or raw.get("enabled") is False:
        return None
    entry = {**{_CAMEL[k]: v for k, v in raw.items() if k in _CAMEL}, **{k: v for k, v in raw.items()
                                                                        if k not in _CAMEL}}
    url = next((str(entry[k]).strip() for k in ("base_url", "url", "api") if str(entry.get(k) or "").strip()), "")
    parts = urlsplit(url)
    if not (parts.scheme and parts.netloc):
        log.warning("%s: no base URL with a scheme and a host (base_url, url or api); left out", where)
        return None
    display = str(entry.get("name") or "").strip()
    name = _norm(key or display)
    if not name:
        log.warning("%s: no name; left out", where)
        return None
    from plugins_providers.defaults import PROVIDERS

    if name in PROVIDERS:
        log.warning("%s: '%s' is a built-in provider's name, and the built-in one is used (as in hermes-agent); "
                    "give this endpoint another name", where, name)
        return None
    mode = str(entry.get("api_mode") or "chat_completions").strip().lower()
    if mode not in MODES:
        log.warning("%s: api_mode %r is not served here (%s); chat_completions is used", where, mode,
                    ", ".join(MODES))
        mode = "chat_completions"
    env = [str(entry["key_env"]).strip()] if str(entry.get("key_env") or "").strip() else []
    if str(entry.get("api_key") or "").strip() and not (env and os.environ.get(env[0])):
        env = [f"HERMES_PROVIDER_{re.sub(r'[^A-Z0-9]', '_', name.upper())}_API_KEY"]
        os.environ.setdefault(env[0], str(entry["api_key"]).strip())
        log.warning("%s: an API key written in config.yaml; it is used, but belongs in the environment (key_env)",
                    where)
    options = {k: entry[k] for k in ("extra_headers", "extra_body", "ssl_verify", "ssl_ca_cert")
               if entry.get(k) not in (None, "")}
    for option in [k for k in ("extra_headers", "extra_body") if k in options and not isinstance(options[k], dict)]:
        log.warning("%s: %s is not a mapping (name: value); it is not sent", where, option)
        del options[option]
    headers = options.pop("extra_headers", None) or {}  # hermes-agent's profile field for them
    aliases = sorted({a for a in (_norm(display), f"custom:{name}", f"custom:{_norm(display)}") if a and a != name
                      and a != "custom:"})
    return Profile(name=name, base_url=url, api_mode=mode, env_vars=tuple(env), aliases=tuple(aliases),
                   display_name=display, default_model=str(entry.get("default_model") or entry.get("model") or ""),
                   default_headers=headers, options=options)


def profiles(config: Any) -> list:
    """The profiles of ``providers`` (first) and ``custom_providers``; a later one of a taken name is left out."""
    found: dict = {}
    keyed = config.get("providers") if config is not None else None
    for key, raw in (keyed.items() if isinstance(keyed, dict) else ()):
        profile = _profile(str(key), raw, f"providers.{key}")
        found.setdefault(profile.name, profile) if profile else None
    listed = config.get("custom_providers") if config is not None else None
    for i, raw in enumerate(listed if isinstance(listed, list) else ()):
        profile = _profile(str(raw.get("provider_key") or "") if isinstance(raw, dict) else "", raw,
                           f"custom_providers[{i}]")
        found.setdefault(profile.name, profile) if profile else None
    return list(found.values())


def candidate(config: Any, make_candidate) -> Any:
    """The ``custom-providers`` plugin when config.yaml names any."""
    from plugins.hermes_compat.discovery import CUSTOM_PROVIDERS

    cand = make_candidate(name=CUSTOM_PROVIDERS, source="hermes-compat", target="config.yaml providers:",
                          description="hermes-agent's endpoints of config.yaml's providers: and custom_providers:")
    cand.load = lambda: load(config)
    return cand


def load(config: Any) -> Any:
    from plugins.hermes_compat import state
    from plugins.hermes_compat.bridge import build_adapter
    from plugins.hermes_compat.discovery import CUSTOM_PROVIDERS

    record = state.PluginRecord(name=CUSTOM_PROVIDERS, source="config")
    record.profiles = profiles(config)
    state.add(record)
    return build_adapter(record)
