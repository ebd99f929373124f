"""``providers.base``: the provider profile data class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import urlparse

OMIT_TEMPERATURE = object()  # sentinel: never send a temperature


@dataclass
class ProviderProfile:
    """How to reach one model provider (hermes-agent's fields and defaults)."""

    name: str
    api_mode: str = "chat_completions"
    aliases: tuple = ()
    display_name: str = ""
    description: str = ""
    signup_url: str = ""
    env_vars: tuple = ()
    base_url: str = ""
    models_url: str = ""
    auth_type: str = "api_key"
    supports_health_check: bool = True
    supports_vision: bool = False
    supports_vision_tool_messages: bool = True
    fallback_models: tuple = ()
    hostname: str = ""
    default_headers: dict = field(default_factory=dict)
    fixed_temperature: Any = None
    default_max_tokens: Optional[int] = None
    default_aux_model: str = ""

    def get_hostname(self) -> str:
        if self.hostname:
            return self.hostname
        try:
            return (urlparse(self.base_url).hostname or "").lower()
        except ValueError:
            return ""

    def prepare_messages(self, messages: list) -> list:
        return messages

    def build_extra_body(self, *, session_id: Optional[str] = None, **ctx: Any) -> dict:
        return {}

    def build_api_kwargs_extras(self, *, reasoning_config: Any = None, **ctx: Any) -> tuple:
        return {}, {}

    def default_vision_model(self) -> Optional[str]:
        return None

    def get_max_tokens(self, model: Optional[str]) -> Optional[int]:
        return self.default_max_tokens

    def fetch_models(self, *, api_key: Optional[str] = None, base_url: Optional[str] = None,
                     timeout: float = 8.0) -> Optional[list]:
        return None
