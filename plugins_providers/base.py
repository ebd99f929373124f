"""What the three SDK providers share: credentials, the client, error mapping.

A subclass sets ``api_mode``, implements ``_build_client(key)`` (importing its
SDK there, so nothing is imported before a provider is first built) and
``_complete(request, emit)``. Every failure leaves ``complete`` as a classified
:class:`ProviderError` with the key masked.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from kernel.protocols import Provider
from kernel.types import CONFIG, ModelRequest, ModelResponse, ProviderConfig, ProviderError
from plugins_providers import defaults
from plugins_providers.errors import classify, missing_key

DEFAULT_TIMEOUT = 600.0
SDK_REQUIREMENTS = {"openai": "openai>=3.51,<4", "anthropic": "anthropic>=2.10,<3"}


class SDKProvider(Provider):
    api_mode = ""

    def __init__(self, config: ProviderConfig):
        wrong = defaults.mistake(config, self.api_mode)
        if wrong:
            raise ProviderError(wrong, reason=CONFIG, provider=config.label())
        self.config = config
        self.options = config.options()
        self.target = defaults.target(config, self.api_mode)
        self.label = config.label()
        self._key = self._read_key()
        try:
            self.client = self._build_client(self._key)
        except ImportError as exc:  # the SDK is an optional dependency
            package = (exc.name or "the SDK").split(".")[0]
            raise ProviderError(
                f"the {package} package is not installed: pip install '{SDK_REQUIREMENTS.get(package, package)}'",
                reason=CONFIG,
                provider=self.label,
            ) from None

    # -- credentials
    def _read_key(self) -> str:
        key = self.target.read_key()
        if not key:
            raise missing_key(self.label, self.target.env_var)
        return key

    def refresh_credentials(self) -> bool:
        """Re-read the key from its variable and rebuild the client.
        True when the key changed (a new key is worth another try)."""
        key = self._read_key()
        changed = key != self._key
        old, self._key = self.client, key
        self.client = self._build_client(key)
        _close(old)
        return changed

    def close(self) -> None:
        _close(self.client)

    # -- calls
    def complete(self, request: ModelRequest, emit: Any) -> ModelResponse:
        try:
            return self._complete(request, emit)
        except ProviderError as err:
            if not err.provider:
                err.provider = self.label
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is classified once, here
            err = classify(exc, provider=self.label, secrets=[self._key])
            if err.message.startswith("connection failed"):  # say where it tried to connect
                err.message = f"{err.message} ({self.target.base_url or 'the SDK default URL'})"
                err.args = (err.message,)
            raise err from None

    def _complete(self, request: ModelRequest, emit: Any) -> ModelResponse:
        raise NotImplementedError

    def _build_client(self, key: str) -> Any:
        raise NotImplementedError

    # -- helpers for subclasses
    def client_kwargs(self, key: str) -> dict:
        kwargs: dict = {
            "api_key": key,
            "max_retries": 0,  # retries are the fallback policy's, visible and bounded
            "timeout": self.timeout(),
        }
        if self.target.base_url:
            kwargs["base_url"] = self.target.base_url
        if self.options.get("strict_response_validation"):
            kwargs["_strict_response_validation"] = True  # tests: check the wire shapes
        return kwargs

    def timeout(self) -> Any:
        """The SDK's timeout: every read, write and pool wait ends after
        ``idle_timeout`` seconds without a byte (a silent provider fails fast);
        the whole call's limit is the kernel's (``agent.api_timeout``)."""
        import httpx2  # the SDKs' HTTP client, imported with them

        whole = self._seconds("timeout", DEFAULT_TIMEOUT)
        idle = min(whole, self._seconds("idle_timeout", whole))
        return httpx2.Timeout(idle, connect=min(10.0, idle))

    def _seconds(self, option: str, default: float) -> float:
        value = self.options.get(option)
        try:
            seconds = default if value in (None, "") else float(value)
        except (TypeError, ValueError):
            seconds = -1.0
        if seconds <= 0:
            raise ProviderError(f"the provider option '{option}' must be a number of seconds above 0, got {value!r}",
                                reason=CONFIG, provider=self.label)
        return seconds

    def model(self, request: ModelRequest) -> str:
        return self.target.model_for(request.model or self.target.model)


def _close(client: Any) -> None:
    close = getattr(client, "close", None)
    if close:
        try:
            close()
        except Exception:  # noqa: BLE001 - closing must not fail a refresh
            pass


def text_of(content: Any) -> str:
    """Plain text of a message content (a str, or a list of text parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return str(content)


def parse_args(arguments: Any) -> dict:
    """Tool-call arguments as a dict; unreadable JSON is kept, not lost."""
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        return {"_raw_arguments": str(arguments)}
    return value if isinstance(value, dict) else {"_value": value}


def get(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key access, for SDK models and plain dicts alike."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    value = getattr(obj, name, default)
    return default if value is None else value


def dump(obj: Any) -> dict:
    if isinstance(obj, dict):
        return obj
    return obj.model_dump(exclude_none=True, mode="json")


def emit_safe(emit: Optional[Any], kind: str, *args: Any) -> None:
    fn = getattr(emit, kind, None) if emit is not None else None
    if fn is not None:
        fn(*args)
