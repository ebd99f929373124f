"""``config.yaml`` (found through :mod:`hermes.host.paths`). Key names follow hermes-agent where it has them; each
is declared by the part that reads it (the kernel's :data:`KERNEL_KEYS`, a plugin's ``register_config``). A wrong
type or invalid YAML is one :class:`ConfigError` naming file, key and what was expected; a key no one declares
warns with a did-you-mean (:meth:`Config.unknown`)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Iterable, Optional

from hermes.host.essential import ESSENTIAL
from hermes.host.paths import config_dir, data_dir, hermes_home  # noqa: F401 - where config.yaml and the data live
from kernel.hints import did_you_mean
from kernel.keys import KERNEL_KEYS, Key

# a variable of these names, or ending so, holds a secret: tools never see it, its value is masked
SECRET_NAMES = frozenset({
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY", "COHERE_API_KEY", "AZURE_OPENAI_API_KEY", "NOUS_API_KEY", "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN",
})
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")


def is_secret_name(name: str) -> bool:
    return name.upper() in SECRET_NAMES or name.upper().endswith(SECRET_SUFFIXES)

# the keys the plugin host reads (the loop's are kernel.keys.KERNEL_KEYS)
HOST_KEYS = [
    Key("plugins.enabled", list[str], None, "opt-in plugins to load", owner="host"),
    Key("plugins.disabled", list[str], [], "plugins never to load", owner="host"),
    Key("plugins.entries", dict, {}, "per-plugin settings, plugins.entries.<plugin>.settings.<key>", owner="host"),
    Key("plugins.hook_timeout", float, 30, "seconds one hook call may take before it is abandoned (0: no limit)",
        owner="host", minimum=0),
    Key("tools.prefer", dict, {}, "which plugin's tool wins a name clash: {tool: plugin}", owner="host"),
    Key("tools.timeout", float, 300, "seconds a third-party plugin's tool may run before it is stopped (0: no limit)",
        owner="host", minimum=0),
]


_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list",
          list[str]: "a list of strings", dict: "a mapping"}


def kind(key: Key) -> str:
    """What a key's values must be, in words (``an integer of at least 1``)."""
    types = key.type if isinstance(key.type, tuple) else (key.type,)
    words = " or ".join(_KINDS.get(t, t.__name__) for t in types)
    if key.choices:
        return "one of " + ", ".join(c or "''" for c in key.choices if isinstance(c, str))  # '': unset
    return words if key.minimum is None else f"{words} of at least {key.minimum:g}"


def accepts(key: Key, value: Any) -> bool:
    """Is ``value`` one the key takes? An empty value means "use the default"."""
    if value is None:
        return True
    types = key.type if isinstance(key.type, tuple) else (key.type,)
    if isinstance(value, bool):
        return bool in types
    if list[str] in types and isinstance(value, list):  # names, paths, patterns: `[5]` is a typo, not a name
        return all(isinstance(item, str) for item in value)
    types = tuple(list if t == list[str] else t for t in types)
    types += (int,) if float in types else ()
    if key.minimum is not None and isinstance(value, (int, float)) and value < key.minimum:
        return False
    if isinstance(value, float) and not math.isfinite(value):  # nan and inf are no timeout, delay or budget
        return False
    if key.choices and (value.strip().lower() if isinstance(value, str) else value) not in key.choices:
        return False
    return isinstance(value, types)


class ConfigError(Exception):
    """A config problem, already phrased for the user (one line)."""


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{text if len(text) <= 40 else text[:37] + '...'} ({type(value).__name__})"


_MISSING = object()


def _lookup(data: dict, dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


class Config:
    """The loaded configuration. Read with ``get("agent.max_turns")``."""

    def __init__(self, data: Optional[dict] = None, path: Optional[Path] = None, overrides: Optional[dict] = None,
                 defaults: Optional[dict] = None, lenient: bool = False):
        self.path = path
        self.data = data if data is not None else {}
        self.overrides = dict(overrides or {})  # dotted keys that win over the file (a distro's blocks)
        self.defaults = defaults or {}  # nested keys the file may override (a distro's defaults)
        self.keys: dict = {k.name: k for k in KERNEL_KEYS + HOST_KEYS}  # plugins add theirs (declare)
        self._aliases: dict = {}  # key -> the declared key that is another name for it
        _normalize_model_block(self.defaults)
        _normalize_model_block(self.data)
        # lenient: wrong types are kept in ``problems``, not raised: the commands that repair config still run
        self.problems: Optional[list] = [] if lenient else None
        self._found(self.check())

    # -- reading
    def get(self, dotted: str, default: Any = _MISSING) -> Any:
        """The value of a dotted key: override > file > distro default > known default > ``default``;
        a lenient config skips a value of the wrong type (in ``problems``): plugin code never reads one."""
        known = self.keys.get(dotted)
        screen = known if known is not None and self.problems else None  # only while something is wrong
        if dotted in self.overrides and (screen is None or accepts(screen, self.overrides[dotted])):
            return self.overrides[dotted]
        for layer in (self.data, self.defaults):
            value = _lookup(layer, dotted)
            if value is not _MISSING and value is not None and (screen is None or accepts(screen, value)):
                return value
        alias = self._aliases.get(dotted)  # another part's name for this key (hermes-agent's, say)
        if alias is not None and self.get(alias, None) is not None:
            return self.get(alias)
        if default is not _MISSING:
            return default
        return known.default if known else None

    def section(self, name: str) -> dict:
        return value if isinstance(value := self.get(name, {}), dict) else {}

    def key_envs(self) -> set:
        """The variables every ``api_key_env`` names, at any depth of file, distro, overrides and declared keys,
        and those of the environment whose names say they hold a secret (:func:`is_secret_name`)."""
        found = {name for name in os.environ if is_secret_name(name)}
        stack = [self.data, self.defaults, self.overrides, {k: v.default for k, v in self.keys.items()}]
        while stack:
            node = stack.pop()
            for key, value in node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ():
                if str(key).endswith("api_key_env") and isinstance(value, str) and value:
                    found.add(value)
                stack.append(value)
        return found

    @property
    def data_dir(self) -> Path:
        return data_dir()

    def where(self) -> str:
        return str(self.path) if self.path else "config"

    def check(self, keys: Optional[Iterable[Key]] = None) -> list:
        """What is wrong in the file, the distro's defaults and the overrides with ``keys`` (default:
        every declared key, and the lists the kernel reads): a line each, naming where, the key, what is expected."""
        problems, given = [], keys is not None
        keys = list(self.keys.values() if keys is None else keys)
        for key in keys:
            for source, value in (("file", _lookup(self.data, key.name)), ("distro", _lookup(self.defaults, key.name)),
                                  ("override", self.overrides.get(key.name, _MISSING))):
                if value is not _MISSING and not accepts(key, value):
                    where = self.where() if source == "file" else f"{source} settings"
                    if isinstance(value, list) and accepts(key, []):  # a list[str] key: name the item that is not
                        value = next(item for item in value if not isinstance(item, str))
                    problems.append(f"{where}: {key.name}: expected {kind(key)}, got {_describe(value)}")
        for name in sorted(_sections(k.name for k in keys) - self.keys.keys()):  # `memory: false`: each memory.*
            for where, layer in ((self.where(), self.data), ("distro settings", self.defaults)):
                if (value := _lookup(layer, name)) not in (_MISSING, None) and not isinstance(value, dict):
                    problems.append(f"{where}: {name}: expected a mapping of {name}.* keys, got {_describe(value)}")
        if given:  # keys a plugin declares
            return problems
        lists = {k: v if isinstance(v := self.get(k), list) else [] for k in ("fallback_providers", "plugins.disabled")}
        for i, entry in enumerate(lists["fallback_providers"]):
            if not isinstance(entry, dict):
                problems.append(f"{self.where()}: fallback_providers[{i}]: expected a mapping, got {_describe(entry)}")
        for name in sorted({n for n in lists["plugins.disabled"] if isinstance(n, str)} & ESSENTIAL.keys()):
            problems.append(f"{self.where()}: plugins.disabled: {name} is essential and cannot be disabled "
                            "(it always loads)")
        return problems

    def _found(self, problems: list) -> None:
        """Raise the first of ``problems``, or keep them all when lenient."""
        if self.problems is None:
            if problems:
                raise ConfigError(problems[0])
        else:
            self.problems += [p for p in problems if p not in self.problems]

    def declare(self, keys: Iterable[Key]) -> None:
        """Add plugins' keys (the first of a name wins) and check their values (raised, or in ``problems``)."""
        added = list({k.name: k for k in reversed(list(keys)) if k.name not in self.keys}.values())[::-1]
        for key in added:
            self.keys[key.name] = key
            if key.alias_for:
                self._aliases.setdefault(key.alias_for, key.name)
        self._found(self.check(added))

    def unknown(self, layer: Optional[dict] = None) -> list:
        """``(dotted key, its did-you-mean)`` for each key of ``layer`` (the file) no declared key covers
        (below a ``dict`` or ``list`` key anything goes)."""
        names, sections, found = set(self.keys), _sections(self.keys), []

        def walk(node: dict, prefix: str) -> None:
            for name, value in node.items():
                dotted = f"{prefix}{name}"
                if "." in str(name) and dotted in names:  # `agent.max_turns: 5`: a key of that name, nobody's
                    found.append((dotted, f" (nest it: {': {'.join(dotted.split('.'))}: ...{'}' * dotted.count('.')})"))
                elif dotted in names or (dotted in sections and not isinstance(value, dict)):  # check() says that
                    continue
                elif dotted in sections:
                    walk(value, dotted + ".")
                else:
                    found.append((dotted, did_you_mean(dotted, names, n=1)))

        walk(self.data if layer is None else layer, "")
        return found

    def unknown_keys(self) -> list:
        """``(where, dotted key, its did-you-mean)`` of config.yaml's and the distro's defaults' unknown keys."""
        return [(where, name, hint) for where, layer in ((self.where(), self.data), ("distro config", self.defaults))
                for name, hint in self.unknown(layer)]

    def set_value(self, dotted: str, value: Any) -> None:
        """Change the loaded value (to check it); ``plugins.config_command.edit`` writes config.yaml."""
        set_nested(self.data, dotted.split("."), value)


def _sections(names: Iterable[str]) -> set:
    """What holds keys: ``agent`` of ``agent.max_turns``, ``mcp_servers`` and ``mcp_servers.NAME`` of its keys."""
    return {".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 1)}


def set_nested(data: dict, parts: list, value: Any) -> None:
    """Set ``data[parts[0]][parts[1]]... = value``, creating mappings on the way."""
    for part in parts[:-1]:
        if not isinstance(data.get(part), dict):
            data[part] = {}  # a value in the way (`memory: false`) gives way to the keys
        data = data[part]
    data[parts[-1]] = value


def _normalize_model_block(data: dict) -> None:
    """hermes-agent also accepts ``model: {default|model, provider, base_url, api_mode}``."""
    block = data.get("model")
    if isinstance(block, dict):
        data["model"] = str(block.get("default") or block.get("model") or "")
        for key in ("provider", "base_url", "api_mode", "api_key_env"):
            if block.get(key) and not data.get(key):
                data[key] = block[key]


def load_config(path: Optional[Path] = None, overrides: Optional[dict] = None, defaults: Optional[dict] = None,
                lenient: bool = False) -> Config:
    """Load ``config.yaml`` (missing: empty). Unreadable or invalid YAML is a ConfigError; a wrong type too,
    unless ``lenient`` (then it is in ``Config.problems``)."""
    path = Path(path) if path else config_dir() / "config.yaml"
    data: Any = {}
    if path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read: {exc}") from None
        import yaml

        try:
            data = {} if (loaded := yaml.safe_load(text)) is None else loaded  # an empty file: no keys
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of keys at the top level, got {_describe(data)}")
    return Config(data, path=path, overrides=overrides, defaults=defaults, lenient=lenient)
