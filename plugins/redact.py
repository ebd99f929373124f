"""Built-in plugin redact: credentials that turn up in a tool's result are hidden before the model reads them.

The kernel already masks the values of the keys hermes knows (its environment's). A tool's output holds others: a
project's ``.env``, ``git remote -v`` with a token in the URL, ``curl -v`` with an ``Authorization`` header, a private
key. Those would go to the model's provider, the session store and the display. Every tool's result (the built-in
tools', MCP servers', plugins') is read before any ``post_tool_call`` hook sees it, and each credential is replaced by
a marker saying what it was: ``⟦redacted GitHub token⟧``. hermes-agent's ``security.redact_secrets`` (on) turns it off.

What counts as a credential is kept narrow, so code reads as it is: a key in a shape only its issuer uses
(``ghp_...``, ``sk-...``, ``AKIA...``, a JWT), a private key block, an ``Authorization`` or ``x-api-key`` header, the
password in a URL. ``NAME=value`` with a secret-sounding name is hidden only where a file is a secret store (``.env``,
``.netrc``, ``credentials`` ...) or a command prints the environment (``env``, ``printenv``, ``export -p``), since in
code ``MAX_TOKENS=100`` is no secret.

A marker written back would replace the real secret: a call of ``write_file``, ``patch``, ``terminal``,
``execute_code`` or ``process`` whose arguments hold one (or the kernel's ``[hermes: the value of $X was masked]``) is
blocked with a message saying so, and the file keeps its secret."""

from __future__ import annotations

import functools
import json
import re

from kernel import hookimpl
from kernel.types import Block
from plugins.tool_args import each_string

MARK = "⟦redacted "
KERNEL_MARK = "[hermes: the value of $"  # kernel.secrets.Secrets.mask's marker
WRITERS = frozenset({"write_file", "patch", "terminal", "execute_code", "process"})

# Keys whose issuers give them a prefix of their own: a match is a key, not prose. (label, literal starts, pattern);
# a pattern runs only on a text that holds one of its starts, which keeps a long output's cost to substring searches
_ISSUED = (
    ("Anthropic key", ("sk-ant-",), r"sk-ant-[\w-]{20,}"),
    ("API key", ("sk-",), r"sk-[\w-]{20,}"),  # OpenAI, OpenRouter, DeepSeek and others
    ("GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"gh(?:[pousr]_[A-Za-z0-9]{30,}|ithub_pat_\w{30,})"),
    ("GitLab token", ("glpat-",), r"glpat-[\w-]{20,}"),
    ("Slack token", ("xox", "xapp-"), r"x(?:ox[abposr]|app-\d)-[\w-]{10,}"),
    ("AWS access key", ("AKIA", "ASIA"), r"A(?:KIA|SIA)[A-Z0-9]{16}"),
    ("Google API key", ("AIza",), r"AIza[\w-]{35}"),
    ("Hugging Face token", ("hf_",), r"hf_[A-Za-z0-9]{30,}"),
    ("Stripe key", ("k_live_", "k_test_"), r"[rs]k_(?:live|test)_[A-Za-z0-9]{20,}"),
    ("npm token", ("npm_",), r"npm_[A-Za-z0-9]{36}"),
    ("PyPI token", ("pypi-",), r"pypi-[\w-]{50,}"),
    ("SendGrid key", ("SG.",), r"SG\.[\w-]{16,}\.[\w-]{16,}"),
    ("Groq key", ("gsk_",), r"gsk_[A-Za-z0-9]{40,}"),
    ("xAI key", ("xai-",), r"xai-[A-Za-z0-9]{40,}"),
    ("Replicate token", ("r8_",), r"r8_[A-Za-z0-9]{30,}"),
    ("DigitalOcean token", ("_v1_",), r"do[opr]_v1_[a-f0-9]{40,}"),
    ("JWT", ("eyJ",), r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"),
)
_PRIVATE_KEY = (r"-----BEGIN[A-Z ]*PRIVATE KEY[A-Z ]*-----(?:.*?-----END[A-Z ]*PRIVATE KEY[A-Z ]*-----|"
                r"(?:\n[ \t]*(?:\d+\|)?[A-Za-z0-9+/=]+)*)")  # a block cut short (a file read in part): its base64 lines
_HEADERS = (  # (words that gate it, pattern): an Authorization header's credential, an API key header's value
    (("authoriz",), r"(authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest)\s+)?)([^\s\"',;]{8,})"),
    (("api-key", "auth-token"), r"(\b(?:x-api-key|x-auth-token|x-goog-api-key|api-key)[\"']?\s*:\s*[\"']?)([^\s\"',;]{8,})"),
)
_URL_PASSWORD = r"(://[^\s:/@]+:)([^\s@/]+)(?=@)"
_URL_TOKEN = r"(://)([\w-]{20,})(?=@)"  # a token as the URL's user, as git remotes carry them
_ASSIGNMENT = (r"(?<![\w.-])([\w.-]*(?:key|token|secret|passw(?:or)?d|pwd|credential|auth(?!or))[\w.-]*[\"']?\s*[:=]\s*)"
               r"(?:\"([^\"\n]+)\"|'([^'\n]+)'|([^\s\"',#]+))")
# files that exist to hold secrets, and commands that print the environment
_STORE = (r"(?:^|[\s/'\"=<])(?:\.env(?:\.[\w-]+)?|[\w-]+\.env|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|"
          r"credentials(?:\.\w+)?|secrets?\.(?:json|ya?ml|toml|ini)|auth\.json)(?=$|[\s'\";|&)>])")
_DUMP = r"(?:^|[;&|(]|\$\()\s*(?:env|printenv|(?:export|declare|set)(?:\s+-\w+)*)\s*(?:$|[;&|)])"
# a reference ($TOKEN, {password}, os.environ[...]), a default or example value, or a marker already
_PLACEHOLDER = (r"[$<{%*⟦]|(?:os\.environ|getenv|process\.env)|[xX*.-]+$|"
                r"(?:true|false|yes|no|on|off|none|null|password|secret|changeme|\d{1,6})$")
# (the patterns are compiled at their first use, by re's own cache: nothing at start; each starts with a literal
# where it can, which re searches for fast)


def _mark(label: str) -> str:
    return f"{MARK}{label}⟧"


def redact_text(text: str, store: bool = False) -> str:
    """``text`` with every credential it holds replaced by a marker; ``store``: it comes from a secret store or an
    environment dump, where ``NAME=value`` with a secret-sounding name is one too."""
    for label, starts, pattern in _ISSUED:
        if any(start in text for start in starts):
            text = re.sub(rf"(?:{pattern})(?![\w-])", functools.partial(_issued, _mark(label)), text)
    if "PRIVATE KEY" in text:
        text = re.sub(_PRIVATE_KEY, _mark("private key"), text, flags=re.DOTALL)
    lower = text.lower()
    for words, pattern in _HEADERS:
        if any(word in lower for word in words):
            text = re.sub(pattern, lambda m: m[0] if _placeholder(m[2]) else m[1] + _mark("credential"), text,
                          flags=re.IGNORECASE)
    if "://" in text and "@" in text:
        text = re.sub(_URL_PASSWORD, lambda m: m[0] if _placeholder(m[2]) else m[1] + _mark("password"), text)
        text = re.sub(_URL_TOKEN, lambda m: m[1] + _mark("token"), text)
    if store:
        text = re.sub(_ASSIGNMENT, _assignment, text, flags=re.IGNORECASE)
    return text


def _issued(mark: str, m: re.Match) -> str:
    """A key's marker, unless the match starts inside a word (``task-...``): the patterns start with their literal,
    for speed, so the word boundary before them is checked here."""
    before = m.string[m.start() - 1:m.start()]
    return m[0] if before and (before.isalnum() or before in "_-") else mark


def _placeholder(value: str) -> bool:
    return re.match(_PLACEHOLDER, value, re.IGNORECASE) is not None


def _assignment(m: re.Match) -> str:
    """``NAME=value`` (or ``name: "value"``) in a secret store: the value hidden, its quotes kept."""
    quote = '"' if m[2] is not None else "'" if m[3] is not None else ""
    value = m[2] or m[3] or m[4]
    if value.startswith("/") or _placeholder(value):  # a path (SSH_AUTH_SOCK), a reference, a default
        return m[0]
    return f"{m[1]}{quote}{_mark('secret')}{quote}"


def _from_store(call) -> bool:
    """Whether the call reads a secret store or prints the environment (see the module's docstring)."""
    args = call.args if isinstance(call.args, dict) else {}
    what = args.get("command") if call.name == "terminal" else args.get("path") if call.name in (
        "read_file", "search_files") else None
    return isinstance(what, str) and bool(re.search(_STORE, what) or (call.name == "terminal" and re.search(_DUMP, what)))


def redact_result(result: str, store: bool = False) -> str:
    """A tool's result as the model reads it, redacted. A JSON result is redacted string by string, so a secret
    store's lines are still lines (the text has them as ``\\n``) and the JSON stays whole."""
    if result[:1] in "{[":
        try:
            data = json.loads(result)
        except ValueError:
            data = None
        if isinstance(data, (dict, list)):
            changed = each_string(data, lambda s: redact_text(s, store))
            return result if changed == data else json.dumps(changed, ensure_ascii=False, default=str)
    return redact_text(result, store)


def _enabled(agent) -> bool:
    config = getattr(agent, "config", None)
    return config is None or config.get("security.redact_secrets", True) is not False


@hookimpl
def register_config(declare):
    declare("security.redact_secrets", bool, True, "hide credentials that turn up in tools' results (keys in the "
            "shapes their issuers give them, private keys, Authorization headers, passwords in URLs, and NAME=value "
            "in .env files and environment dumps) before the model, the store and the display see them")


@hookimpl(wrapper=True, tryfirst=True)
def post_tool_call(call, outcome, agent):
    """Before every other ``post_tool_call`` implementation: what they and the model read is redacted."""
    if _enabled(agent) and isinstance(outcome.result, str) and outcome.result:
        store = _from_store(call)
        outcome.result = redact_result(outcome.result, store)
        if isinstance(outcome.error_message, str):
            outcome.error_message = redact_text(outcome.error_message, store)
    return (yield)


@hookimpl
def pre_tool_call(call, agent):
    """A marker written to a file or run in a command would take the place of the secret it stands for."""
    if call.name not in WRITERS:
        return None
    found: list = []
    each_string(call.args, lambda s: found.append(s) if MARK in s or KERNEL_MARK in s else None)
    if not found:
        return None
    marker = MARK + "...⟧" if any(MARK in s for s in found) else KERNEL_MARK + "...]"
    return Block(f"not run: the arguments hold {marker}, which hermes put in place of a secret in what you read "
                 "(security.redact_secrets, or a key hermes knows). Written to a file or run, it would replace the "
                 "real secret. Leave the lines that hold it as they are (patch the lines around them), or ask the "
                 "user to make that change.")
