"""hermes-compat: run unchanged hermes-agent plugins on this kernel.

A kernel plugin that finds hermes-agent plugins (entry-point groups
``hermes_agent.plugins``, ``hermes_agent.memory_providers``,
``hermes_agent.model_providers``, ``hermes.memory_provider``; folders in
``$HERMES_HOME/plugins/`` and, with ``HERMES_ENABLE_PROJECT_PLUGINS``,
``./.hermes/plugins/``) through the kernel's ``discover_plugins`` hook. They
go through the kernel's one resolver: opt-in as in hermes-agent (listed in
``plugins.enabled``; ``plugins.disabled`` wins), shown with source
``hermes-compat``. When one loads, its ``register(ctx)`` runs against a
hermes-style context and an adapter turns what it registered into kernel
hooks and registrations (see ``bridge.py`` with ``keywords.py``, ``adapters.py`` and the modules it
uses: ``tools_commands.py``, ``memory.py``, ``engines.py``, ``profiles.py``).

What config.yaml itself holds of hermes-agent's extensions loads as plugins of their own: its shell hooks
(``hooks:``, plugin ``shell-hooks``, :mod:`~plugins.hermes_compat.shell_hooks`, with ``hermes hooks``) and its
endpoints (``providers:``, ``custom_providers:``, plugin ``custom-providers``).

It also adds ``hermes plugins install`` and ``hermes plugins uninstall``.

Listing imports nothing of it but this package, its discovery module and its
manifest reader (and, when config.yaml holds hooks or endpoints, the module that
names them).
"""

import sys

from kernel import hookimpl

# hermes-agent's names of keys read here under other names: (its name, type, ours, minimum); its value is read
# when ours is not set, so a config.yaml of hermes-agent's keeps its meaning
RENAMED = (("plugins.hook_callback_timeout", float, "plugins.hook_timeout", 0),
           ("terminal.env_passthrough", list[str], "tools.env_passthrough", None),
           ("skills.external_dirs", list[str], "skills.paths", None),
           ("file_read_max_chars", int, "file.max_read_chars", 1000),
           ("tool_output.max_bytes", int, "terminal.max_output_chars", 1000),  # its cap of a command's output
           ("tool_output.max_lines", int, "file.max_read_lines", 1),  # its caps of read_file
           ("tool_output.max_line_length", int, "file.max_line_chars", 100),
           ("gateway.api_server.max_concurrent_runs", int, "api_server.max_concurrent_runs", 1),  # hermes serve's
           ("web.backend", str, "web.search_backend", None))  # its shared one; its search_backend is ours

# hermes-agent's toolsets of a whole platform that its config.yaml's `toolsets` names (`[hermes-cli]`, as it writes
# it; its gateways' own are under `platform_toolsets`, not read here): every tool
PLATFORM_TOOLSETS = ("hermes-cli", "hermes-api-server")

# hermes-agent's toolsets without a namesake here, with their tools: named in config.yaml's `toolsets` (it stopped
# every run here with "unknown toolset"), each takes in those of its tools that exist (a plugin's too); one with none
# of them adds nothing, said as a session starts
AGENT_TOOLSETS = {
    "search": ["web_search"], "debugging": ["terminal", "process", "web", "file"], "x_search": ["x_search"],
    "browser": ["browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
                "browser_back", "browser_press", "browser_get_images", "browser_vision", "browser_console",
                "browser_cdp", "browser_dialog", "web_search"],
    "video": ["video_analyze"],
    "video_gen": ["video_generate", "xai_video_edit", "xai_video_extend"], "computer_use": ["computer_use"],
    "project": ["project_list", "project_create", "project_switch"],
    "kanban": ["kanban_show", "kanban_list", "kanban_complete", "kanban_block", "kanban_heartbeat", "kanban_comment",
               "kanban_create", "kanban_link", "kanban_unblock", "kanban_attach", "kanban_attach_url",
               "kanban_attachments"],
    "discord": ["discord"], "discord_admin": ["discord_admin"], "feishu_doc": ["feishu_doc_read"],
    "feishu_drive": ["feishu_drive_list_comments", "feishu_drive_list_comment_replies", "feishu_drive_reply_comment",
                     "feishu_drive_add_comment"],
    "spotify": ["spotify_playback", "spotify_devices", "spotify_queue", "spotify_search", "spotify_playlists",
                "spotify_albums", "spotify_library"],
    "yuanbao": ["yb_query_group_info", "yb_query_group_members", "yb_send_dm", "yb_search_sticker", "yb_send_sticker"],
    "context_engine": [],
}
_said_empty: set = set()


@hookimpl
def discover_plugins(config):
    from plugins.hermes_compat.discovery import candidates

    return candidates(config)


@hookimpl(trylast=True)  # last: a key of hermes-agent's that a plugin here reads is that plugin's
def register_config(declare, config):
    """hermes-agent's names of keys (:data:`RENAMED`), its shell hooks and endpoints (read by the plugins
    discovery makes of them), its ``.env`` of keys, the config_schema of every loaded hermes plugin (manifest v2),
    and the rest of its keys that config.yaml holds (:func:`agent_keys_in`), known but without effect here."""
    from kernel.keys import Key

    for name, kind, ours, minimum in RENAMED:
        declare(Key(name, kind, None, f"hermes-agent's name for {ours} (read when that is not set)", minimum=minimum,
                    alias_for=ours))
    declare(Key("hooks", dict, {}, "hermes-agent's shell hooks: event -> [{command, matcher, timeout}] "
                "(`hermes hooks`)"))
    declare(Key("providers", dict, {}, "hermes-agent's endpoints by name: {NAME: {api, key_env, api_mode, "
                "default_model}}; `provider: NAME` uses one"))
    declare(Key("custom_providers", list, [], "hermes-agent's older list of endpoints: [{name, base_url, ...}]"))
    declare(Key("hooks_auto_accept", bool, False, "run every shell hook of `hooks` without `hermes hooks approve`"))
    from hermes.host.paths import config_dir

    if (config_dir() / ".env").is_file():  # hermes-agent keeps the API keys in $HERMES_HOME/.env: read them before
        from plugins.hermes_compat.dotenv import load  # any provider is built (a listing imports no more without one)

        load(config_dir())
    data = getattr(config, "data", None) or {}
    if {"auxiliary", "delegation", "fallback_providers", "fallback_model"} & set(data):  # keys written in them, too
        from plugins.auxiliary import export_written_keys

        export_written_keys(config)
    for name in agent_keys_in(data):
        declare(Key(name, ANY, None, AGENT_KEY_HELP))
    state = sys.modules.get("plugins.hermes_compat.state")  # not imported: no hermes plugin loaded (a listing)
    if state is not None:
        from plugins.hermes_compat.manifests import declare_schemas

        declare_schemas(declare, state.records())


ANY = (str, int, float, bool, list, dict)
AGENT_KEY_HELP = "hermes-agent's key (`hermes doctor` says whether it has an effect here)"
_said_ignored: list = []


def agent_keys_in(data: dict, prefix: str = "") -> dict:
    """The keys of hermes-agent's (:mod:`plugins.hermes_compat.agent_keys`) that ``data`` (config.yaml) holds, with
    their values."""
    if not data:
        return {}
    from plugins.hermes_compat.agent_keys import DEFAULTS  # 0.3 ms: only with a config.yaml

    found = {}
    for name, value in data.items():
        dotted = f"{prefix}{name}"
        if dotted in DEFAULTS:
            found[dotted] = value
        elif isinstance(value, dict):
            found.update(agent_keys_in(value, dotted + "."))
    return found


def without_effect(config) -> list:
    """hermes-agent's settings of config.yaml that nothing here reads and that differ from its defaults: what the
    user set there and loses here (``terminal.backend: docker``)."""
    from plugins.hermes_compat.agent_keys import DEFAULTS

    keys = getattr(config, "keys", {})

    def read_here(name: str) -> bool:  # declared by a plugin here, or below a mapping one declares (auxiliary.approval)
        parts = name.split(".")
        return any(getattr(keys.get(".".join(parts[:i])), "help", AGENT_KEY_HELP) != AGENT_KEY_HELP for i in range(1, len(parts) + 1))

    return [name for name, value in agent_keys_in(getattr(config, "data", None) or {}).items()
            if value != DEFAULTS[name] and not read_here(name)]


@hookimpl
def register_toolsets(register, config):
    for name in PLATFORM_TOOLSETS:
        register(name, ["all"], "hermes-agent's toolset of a platform: every tool here, MCP servers' too")
    named = config.get("toolsets") if config is not None else None
    # only those config.yaml names: a plugin's tools whose own toolset is called `search` stay that toolset elsewhere
    for name in set(named if isinstance(named, list) else ()) & set(AGENT_TOOLSETS):
        register(name, AGENT_TOOLSETS[name], "hermes-agent's toolset: those of its tools that exist here")


@hookimpl
def on_session_start(agent):
    from plugins.hermes_compat.state import log

    shell_hooks = sys.modules.get("plugins.hermes_compat.shell_hooks")  # loaded: config.yaml has hooks
    if shell_hooks is not None:
        shell_hooks.say_problems()
    if not _said_ignored and (lost := without_effect(agent.config)):
        _said_ignored.append(lost)
        more = f" and {len(lost) - 3} more" if len(lost) > 3 else ""
        log.warning("config.yaml: hermes-agent's settings with no effect here: %s%s (`hermes doctor` lists them)",
                    ", ".join(lost[:3]), more)
    registry = agent.host.registry
    for name in set(agent.toolsets or ()) & set(AGENT_TOOLSETS) - _said_empty:
        if not registry.expand_toolsets([name]):
            _said_empty.add(name)
            log.warning("toolsets: hermes-agent's '%s' has none of its tools here (%s); it adds nothing", name,
                        ", ".join(AGENT_TOOLSETS[name]) or "it had none")


@hookimpl
def register_commands(cli, config):
    from plugins.hermes_compat import agent_commands
    from plugins.hermes_compat.hooks_cli import hooks
    from plugins.hermes_compat.manage import add_commands

    add_commands(cli)
    cli.add_command(hooks)
    agent_commands.add_commands(cli)


@hookimpl(optionalhook=True)  # the commands plugin's hook: a listing loads this plugin (a source of plugins) alone
def register_slash_commands(register):
    register("reload", _slash_reload, description="read the .env beside config.yaml again (a key added or changed "
             "there): hermes-agent's /reload")


def _slash_reload(raw_args: str, agent) -> str:
    from hermes.host.paths import config_dir
    from kernel.types import ProviderError
    from plugins.hermes_compat.dotenv import reload

    added, changed, removed = reload(config_dir())
    if not added and not changed and not removed:
        return f"{config_dir() / '.env'}: nothing new (a variable exported in your shell wins over it)"
    agent.read_secrets()  # the keys it masks, now with the new values
    try:  # the model's client takes its key again (one built with the old key would keep it)
        getattr(agent.provider_for(agent.provider_config), "refresh_credentials", lambda: None)()
    except ProviderError:  # still no usable key: the next call says so
        pass
    said = [f"{', '.join(names)} {verb}" for names, verb in ((added, "added"), (changed, "changed"),
                                                              (removed, "removed")) if names]
    return f"{config_dir() / '.env'} read again: {'; '.join(said)} (the next model call uses them)"


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """hermes-agent's settings that have no effect here; the shell hooks: how many, and any not approved or whose
    command cannot run."""
    from plugins.doctor.hookspecs import OK, WARN, Check
    from plugins.hermes_compat.shell_hooks import accepts_all, approval_of, approvals, parse, script_problem

    lost = without_effect(agent.config)
    checks = [Check("hermes-agent", WARN, f"settings of config.yaml with no effect here: {', '.join(lost)}")] \
        if lost else []
    specs, problems = parse(agent.config.get("hooks"))
    if not specs and not problems:
        return checks or None
    entries, every = approvals(), accepts_all(agent.config)
    waiting = [s for s in specs if not every and approval_of(s, entries) is None]
    broken = [f"{s.label()}: {why}" for s in specs if (why := script_problem(s.command))]
    said = problems + broken + ([f"{len(waiting)} not approved, so not run (`hermes hooks approve`)"]
                                if waiting else [])
    return checks + [Check("shell hooks", WARN if said else OK, f"{len(specs)} configured"
                           + (f"; {'; '.join(said)}" if said else ", all approved"))]


@hookimpl
def adapt_plugin(candidate, error, config):
    """A hermes-agent plugin published under the kernel's own ``hermes.plugins``
    group: load it like one from ``hermes_agent.plugins``."""
    from plugins.hermes_compat.context import PluginManifest
    from plugins.hermes_compat.loader import load

    from hermes.host.isolation import HookTimeout
    from kernel.types import is_user_interrupt

    manifest = PluginManifest(name=candidate.name, version=candidate.version, source="entrypoint",
                              path=candidate.target, key=candidate.name)
    try:
        return load(candidate, "entrypoint", candidate.target, manifest, config)
    except BaseException as exc:  # it does not import here either: its failure (already recorded), not ours
        if is_user_interrupt(exc) or isinstance(exc, HookTimeout):
            raise
        return None
