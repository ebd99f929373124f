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

It also adds ``hermes plugins install`` and ``hermes plugins uninstall``.

Listing imports nothing of it but this package, its discovery module and its
manifest reader.
"""

from kernel import hookimpl

# hermes-agent's names of keys read here under other names: (its name, type, ours, minimum); its value is read
# when ours is not set, so a config.yaml of hermes-agent's keeps its meaning
RENAMED = (("plugins.hook_callback_timeout", float, "plugins.hook_timeout", 0),
           ("terminal.env_passthrough", list[str], "tools.env_passthrough", None),
           ("skills.external_dirs", list[str], "skills.paths", None),
           ("file_read_max_chars", int, "file.max_read_chars", 1000),
           ("web.backend", str, "web.search_backend", None))  # its shared one; its search_backend is ours

# hermes-agent's toolsets of a whole platform that its config.yaml's `toolsets` names (`[hermes-cli]`, as it writes
# it; its gateways' own are under `platform_toolsets`, not read here): every tool
PLATFORM_TOOLSETS = ("hermes-cli", "hermes-api-server")


@hookimpl
def discover_plugins(config):
    from plugins.hermes_compat.discovery import candidates

    return candidates(config)


@hookimpl
def register_config(declare):
    """hermes-agent's names of keys (:data:`RENAMED`), its ``.env`` of keys, and the config_schema of
    every loaded hermes plugin (manifest v2)."""
    import sys

    from kernel.keys import Key

    for name, kind, ours, minimum in RENAMED:
        declare(Key(name, kind, None, f"hermes-agent's name for {ours} (read when that is not set)", minimum=minimum,
                    alias_for=ours))
    from hermes.host.paths import config_dir

    if (config_dir() / ".env").is_file():  # hermes-agent keeps the API keys in $HERMES_HOME/.env: read them before
        from plugins.hermes_compat.dotenv import load  # any provider is built (a listing imports no more without one)

        load(config_dir())
    state = sys.modules.get("plugins.hermes_compat.state")  # not imported: no hermes plugin loaded (a listing)
    if state is not None:
        from plugins.hermes_compat.manifests import declare_schemas

        declare_schemas(declare, state.records())


@hookimpl
def register_toolsets(register):
    for name in PLATFORM_TOOLSETS:
        register(name, ["all"], "hermes-agent's toolset of a platform: every tool here, MCP servers' too")


@hookimpl
def register_commands(cli, config):
    from plugins.hermes_compat.manage import add_commands

    add_commands(cli)


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
