"""What the three SDK providers share: credentials, the client, error mapping.

A subclass sets ``api_mode``, implements ``_build_client(key)`` (importing its
SDK there, so nothing is imported before a provider is first built) and
``_complete(request, emit)``. Every failure leaves ``complete`` as a classified
:class:`ProviderError` with the key masked.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import os
import threading
import time
from typing import Any, Iterator, Optional

from hermes.host.plugins import paused_collector
from kernel.hints import did_you_mean
from kernel.keys import KERNEL_KEYS
from kernel.messages import valid_text
from kernel.protocols import Provider
from kernel.types import CONFIG, TRANSPORT, USAGE_KEYS, ModelRequest, ModelResponse, ProviderConfig, ProviderError, normalize_usage
from plugins_providers import defaults
from plugins_providers.errors import classify, missing_key

DEFAULT_TIMEOUT = 600.0
DEFAULT_IDLE = next(key.default for key in KERNEL_KEYS if key.name == "agent.stream_idle_timeout")
_SHARED: dict = {}  # (provider class, client settings) -> SDK client (SDKProvider._shared_client)
_SHARED_LOCK = threading.Lock()
SDK_REQUIREMENTS = {"openai": "openai>=3.51,<4", "anthropic": "anthropic>=2.10,<3"}


CLIENT_CERT = ("ssl_client_cert", "ssl_client_key")  # mutual TLS: the certificate this client shows, and its key
TLS_OPTIONS = ("ssl_ca_cert", *CLIENT_CERT)
COMMON_OPTIONS = ("timeout", "idle_timeout", "strict_response_validation", "ssl_verify", *TLS_OPTIONS)
NUMBER_OPTIONS = ("temperature", "top_p", "top_k", "max_tokens", "thinking_budget")
MAPPING_OPTIONS = ("extra_body", "extra_headers")
_warned_options: set = set()


def _proxy_for(url: str) -> str:
    """The proxy the SDKs' HTTP client takes ``url`` through: HTTPS_PROXY, ALL_PROXY ... unless NO_PROXY names its host,
    read as urllib reads them (so does httpx2's); "" when none (or no URL: the SDK's default one)."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url or "")
    if not parts.hostname or urllib.request.proxy_bypass_environment(parts.hostname):
        return ""
    proxies = urllib.request.getproxies_environment()
    return proxies.get(parts.scheme) or proxies.get("all") or ""


class SDKProvider(Provider):
    api_mode = ""
    sdk = ""  # the package _build_client imports ("openai", "anthropic")
    options_read: tuple = ()  # the options (provider_options, a fallback entry's other keys) this provider reads

    def __init__(self, config: ProviderConfig):
        """Everything a wrong setting or a missing key or SDK breaks is checked here, at once; the SDK itself is
        imported at the first call (:attr:`client`): a chat draws its prompt without waiting for it."""
        wrong = defaults.mistake(config, self.api_mode)
        if wrong:
            raise ProviderError(wrong, reason=CONFIG, provider=config.label())
        self.config = config
        self.options = config.options()
        self.target = defaults.target(config, self.api_mode)
        self.label = config.label()
        self._key = self._read_key()
        self._client: Any = None
        for option in ("timeout", "idle_timeout"):  # what the client is built with: a wrong one is said now
            self._seconds(option, DEFAULT_TIMEOUT)
        self._check_options()
        try:
            missing = bool(self.sdk) and importlib.util.find_spec(self.sdk) is None
        except ValueError:  # imported already, without a spec (a stand-in someone put there): it imports
            missing = False
        if missing:
            raise self._not_installed(self.sdk)

    @property
    def client(self) -> Any:
        """The SDK client, built (and its SDK imported) the first time it is asked for."""
        if self._client is None:
            try:
                self._client = self._shared_client(self._key)
            except ImportError as exc:  # a package the SDK needs is missing
                raise self._not_installed((exc.name or "the SDK").split(".")[0]) from None
        return self._client

    def _not_installed(self, package: str) -> ProviderError:
        return ProviderError(f"the {package} package is not installed: pip install "
                             f"'{SDK_REQUIREMENTS.get(package, package)}'", reason=CONFIG, provider=self.label)

    # -- credentials
    def _read_key(self) -> str:
        key = self.target.read_key()
        if not key:
            raise missing_key(self.label, self.target.env_var)
        bad = next(((i, c) for i, c in enumerate(key) if not c.isascii() or not c.isprintable()), None)
        if bad:  # pasted with a curly quote, an ellipsis or a line break: no header can carry it
            raise ProviderError(f"the key in {self.target.env_var} has a character no API key has ({bad[1]!r} at "
                                f"position {bad[0] + 1}): set it again", reason=CONFIG, provider=self.label)
        return key

    def refresh_credentials(self) -> bool:
        """Re-read the key from its variable and rebuild the client.
        True when the key changed (a new key is worth another try)."""
        key = self._read_key()
        changed = key != self._key
        self._key, self._client = key, self._shared_client(key)
        return changed

    def close(self) -> None:
        """Nothing: the SDK client is shared by every provider of this process with the same settings."""

    def _shared_client(self, key: str) -> Any:
        """The SDK client for these settings, built once per process: an agent per request (hermes serve)
        pays neither an SDK client's construction (its TLS context, ~20 ms) nor new connections to the model."""
        settings = (type(self), repr(sorted(self.client_kwargs(key).items(), key=lambda item: item[0])),
                    repr(self._tls()), repr([self.options.get(key) for key in CLIENT_CERT]))
        with _SHARED_LOCK:
            client = _SHARED.get(settings)
            if client is None:
                with paused_collector():  # the first client imports its SDK, after the command's start
                    client = _SHARED[settings] = self._build_client(key)
        return client

    # -- calls
    def complete(self, request: ModelRequest, emit: Any) -> ModelResponse:
        try:
            response = self._complete(request, emit)
            # a server that split an emoji's surrogate pair across chunks, or sent half of one, would stop the turn
            response.content, response.reasoning = valid_text(response.content), valid_text(response.reasoning)
            return response
        except ProviderError as err:
            if not err.provider:
                err.provider = self.label
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is classified once, here
            err = classify(exc, provider=self.label, secrets=[self._key])
            if err.message.startswith("connection failed"):  # say where it tried to connect
                url, via = self.target.base_url, _proxy_for(self.target.base_url)  # a dead proxy refuses too
                refused_here = "refused" in err.message.lower() and self.target.local and not via
                where = f"{url or 'the SDK default URL'}" + (f", through the proxy {via}" if via else "")
                err.message = f"{err.message} ({where})" + (
                    ": nothing listens there; is the local server running?" if refused_here else "")
                err.args = (err.message,)
                if refused_here:  # certain until the user starts it: no retries with backoff (7 s), fallback at once
                    err.reason = CONFIG
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

    def http_client(self, sdk: Any) -> dict:
        """``{"http_client": ...}`` for the SDK's constructor when the options say how to check the server's
        certificate (hermes-agent's ``ssl_verify: false``, or an authority's bundle: ``ssl_ca_cert: PATH`` or
        ``ssl_verify: PATH``) or give the client's own (``ssl_client_cert``, its key in it or in ``ssl_client_key``:
        a gateway asking for one), else nothing: the SDK's own client (``SSL_CERT_FILE`` works there too)."""
        from plugins import tls

        verify = self._tls()
        if verify is False:
            warn_once((self.target.base_url, "ssl"), "%s: the server's certificate is not checked (ssl_verify: "
                      "false)", self.target.base_url or self.label)
        try:
            context = tls.context(verify, *(self.options.get(key) for key in CLIENT_CERT), names=TLS_OPTIONS)
        except tls.TLSError as exc:
            raise ProviderError(f"the provider option {exc}", reason=CONFIG, provider=self.label) from None
        return {} if context is None else {"http_client": sdk.DefaultHttpxClient(verify=context)}

    def _tls(self) -> Any:
        """None (the default check), False (none) or the path of an authority's bundle."""
        from plugins.tls import verify_of

        return verify_of(self.options.get("ssl_verify"), self.options.get("ssl_ca_cert"))

    def idle(self) -> float:
        """Seconds without a byte before the call is given up: ``idle_timeout`` (``agent.stream_idle_timeout``), never
        past the whole call's limit (``agent.api_timeout``). Left at the default, that limit for a server on this
        machine or network (a local model reading a long prompt sends nothing for minutes; hermes-agent: 900 s) and
        for a model that reasons (OpenAI's say nothing while they think, in chat completions, and OpenRouter only
        keep-alive comments: a minute of thought was cut off and paid for again; hermes-agent waits 3 to 10 minutes)."""
        whole = self._seconds("timeout", DEFAULT_TIMEOUT)
        idle = self._seconds("idle_timeout", whole)
        if idle == DEFAULT_IDLE and (defaults.on_own_network(self.target.base_url) or self._reasons()):
            return whole
        return min(whole, idle)

    def _reasons(self) -> bool:
        """Does the configured model think before it answers (it takes a reasoning effort here)?"""
        from plugins_providers import reasoning

        host, model = defaults.host_of(self.target.base_url), self.target.model_for(self.target.model)
        return bool(reasoning.arguments(self.api_mode, host, model, "high"))

    def timeout(self) -> Any:
        """The SDK's timeout: every read, write and pool wait ends after :meth:`idle` seconds without a byte (a
        silent provider fails fast); the whole call's limit is the kernel's (``agent.api_timeout``)."""
        import httpx2  # the SDKs' HTTP client, imported with them

        idle = self.idle()
        return httpx2.Timeout(idle, connect=min(10.0, idle))

    def answer_timeout(self) -> Any:
        """The SDK's timeout for a call that is not streamed: it sends nothing until its whole answer, so it may take
        the call's whole limit (``agent.api_timeout``); the idle one would fail every answer slower than it (a
        subagent's, never streamed; a long summary)."""
        import httpx2

        whole = self._seconds("timeout", DEFAULT_TIMEOUT)
        return httpx2.Timeout(whole, connect=min(10.0, whole))

    def events(self, stream: Any) -> Iterator:
        """The stream's events. When none comes for ``idle_timeout`` seconds the
        stream is closed and the call fails as a silent one: keep-alive
        comments are bytes, so the read timeout alone never fires on them."""
        entry = IDLE.watch(stream, self.idle())
        try:
            for event in stream:
                entry[0] = time.monotonic()
                yield event
        except Exception:
            if not entry[3]:
                raise
        finally:
            IDLE.done(entry)
        if entry[3]:
            raise ProviderError(f"no event within {entry[1]:g}s (agent.stream_idle_timeout, --timeout): the provider "
                                "sent nothing, or only keep-alive comments", reason=TRANSPORT, silent=True,
                                provider=self.label)

    def _check_options(self) -> None:
        """A number option that is no number fails now, not as the server's 400; a name this provider does not read
        (a typo: ``tempreature``) is said once instead of being dropped unsaid."""
        known = COMMON_OPTIONS + self.options_read
        for option, value in self.options.items():
            if option in NUMBER_OPTIONS and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ProviderError(f"the provider option '{option}' must be a number, got {value!r}", reason=CONFIG,
                                    provider=self.label)
            if option in MAPPING_OPTIONS and not isinstance(value, dict):  # its value may be a secret: not shown
                raise ProviderError(f"the provider option '{option}' must be a mapping (name: value), got a "
                                    f"{type(value).__name__}", reason=CONFIG, provider=self.label)
            if option not in known:
                warn_once((self.api_mode, option), "the provider option '%s' is not one the %s provider reads%s; it is "
                          "ignored (it reads: %s)", option, self.api_mode, did_you_mean(option, known, n=1),
                          ", ".join(sorted(known)))
        tls = self._tls()
        if tls and not os.path.exists(tls):
            raise ProviderError(f"the certificate authority file {tls} (ssl_ca_cert or ssl_verify) does not exist",
                                reason=CONFIG, provider=self.label)
        for option in CLIENT_CERT:  # the rest of what is wrong with them is said as the client is built
            given = self.options.get(option)
            if isinstance(given, str) and not os.path.exists(os.path.expanduser(given)):
                raise ProviderError(f"the provider option {option}: {self.options[option]} does not exist",
                                    reason=CONFIG, provider=self.label)
        if "extra_headers" in self.options:  # a header is text (YAML reads `X-Retries: 1` as a number); None: not sent
            self.options["extra_headers"] = {str(k): str(v) for k, v in self.options["extra_headers"].items()
                                             if v is not None}

    def max_tokens(self, request: ModelRequest) -> Optional[int]:
        """The answer's token limit per call: ``agent.max_tokens`` (the request's), else this provider's option."""
        limit = request.max_tokens or self.options.get("max_tokens")
        return int(limit) if limit else None

    def sampling(self, request: ModelRequest, keys: tuple) -> dict:
        """Those of ``keys`` the request's ``extra`` or else this provider's options set (temperature, ...); a
        call's headers or body fields add to the provider's."""
        given = {**self.options, **request.extra}
        for key in MAPPING_OPTIONS:
            if isinstance(self.options.get(key), dict) and isinstance(request.extra.get(key), dict):
                given[key] = {**request.extra[key], **self.options[key]}
        return {key: given[key] for key in keys if key in given}

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

    def with_reasoning(self, request: ModelRequest, kwargs: dict, said_by: str) -> dict:
        """``kwargs`` with agent.reasoning_effort's level (``request.extra["reasoning"]``) in this API's words
        (:mod:`plugins_providers.reasoning`), unless the provider option behind ``said_by`` put it there already."""
        if request.extra.get("reasoning") and said_by not in kwargs:
            from plugins_providers import reasoning

            reasoning.apply(kwargs, self.api_mode, defaults.host_of(self.target.base_url), request.extra["reasoning"])
        return kwargs


class _IdleWatch:
    """One thread for every stream in flight: a stream with no event for its
    idle seconds is closed (its reader then fails). An event costs the reader
    one clock read; a stream costs no thread of its own."""

    TICK = 0.25

    def __init__(self):
        self.active: dict = {}  # id -> [last event, idle seconds, stream, closed for idleness]
        self.lock = threading.Lock()
        self.thread: Optional[threading.Thread] = None

    def watch(self, stream: Any, seconds: float) -> list:
        entry = [time.monotonic(), seconds, stream, False]
        with self.lock:
            self.active[id(entry)] = entry
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="hermes-stream-idle", daemon=True)
                self.thread.start()
        return entry

    def done(self, entry: list) -> None:
        with self.lock:
            self.active.pop(id(entry), None)

    def _run(self) -> None:
        while True:
            time.sleep(self.TICK)
            now = time.monotonic()
            with self.lock:
                expired = [e for e in self.active.values() if now - e[0] >= e[1]]
                for entry in expired:
                    entry[3] = True
                    del self.active[id(entry)]
            for entry in expired:
                _close(entry[2])


IDLE = _IdleWatch()
log = logging.getLogger("hermes.providers")


def warn_once(key: tuple, message: str, *args: Any) -> None:
    """A warning said once a process for ``key`` (a setting said on every request would drown the output)."""
    if key not in _warned_options:
        _warned_options.add(key)
        log.warning(message, *args)


def counts(usage_of):
    """A provider's usage reader that never costs the answer: a usage block
    whose counts are not numbers is not counted, a negative count is 0 (each
    with a warning); the answer is kept either way."""

    @functools.wraps(usage_of)
    def read(*args: Any) -> dict:
        try:
            usage = usage_of(*args)
        except (TypeError, ValueError, ArithmeticError) as exc:
            log.warning("the provider's usage block is not numbers (%s); this call's usage is not counted", exc)
            return normalize_usage()
        if any(isinstance(usage.get(k), (int, float)) and usage[k] < 0 for k in USAGE_KEYS):
            log.warning("the provider's usage block has a negative count; it counts as 0")
            usage = normalize_usage(**{k: max(0, usage.get(k) or 0) for k in USAGE_KEYS},
                                    request_count=usage.get("request_count", 1))
        return usage

    return read


def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if close:
        try:
            close()
        except Exception:  # noqa: BLE001 - a stream already broken
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
        fn(*map(valid_text, args))  # half a split pair shows as U+FFFD, not as the terminal's UnicodeEncodeError
