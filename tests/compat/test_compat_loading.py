"""Loading details: lazy host imports, project and category folders, context
extras and misuse."""

from __future__ import annotations

import importlib
import json
import shutil
import sys

import pytest

from hermes.host.config import Config
from kernel.hookspecs import MODEL_PROVIDERS
from plugins.commands.hookspecs import SLASH_COMMANDS

from .conftest import FIXTURES
from .test_compat_agent import load_compat, tool_results


def test_lazy_host_imports_async_handlers_and_skills(compat_site, hermes_home, make_agent):
    cfg = Config({"model": "m-1", "plugins": {"enabled": ["lazy"], "entries": {"lazy": {"flavour": "spicy"}}}})
    cands, adapters = load_compat(cfg)
    assert cands["lazy"].status == "enabled", cands["lazy"].error
    import hxfix_lazy

    assert hxfix_lazy.RESULTS["config"] == "spicy"
    assert hxfix_lazy.RESULTS["ctx.config"] == {"flavour": "spicy"}
    assert hxfix_lazy.RESULTS["has_llm"] is False
    assert hxfix_lazy.RESULTS["built"] == 1  # plugins.plugin_utils.lazy_singleton
    for name in ("tools", "hermes_cli", "hermes_constants"):
        assert name not in sys.modules
    import plugins.skills as skills_plugin

    agent = make_agent(skills_plugin, *adapters, config=cfg, script=[
        {"tool_calls": [("aecho", {"text": "hi"}), ("skill_view", {"name": "lazy:lazy-notes"}),
                        ("skill_view", {"name": "lazy-notes"}), ("skill_view", {"name": "nope"})]}, "ok"])
    echo, skill, short, missing = [json.loads(r) for r in tool_results(agent.run_conversation("go"))]
    assert echo == {"echo": "hi", "kwargs": ["session_id", "task_id", "user_task"]}
    # ctx.register_skill feeds the skills plugin: the same skill_view as the user's own skills
    assert skill["name"] == "lazy:lazy-notes" and "Imports host modules lazily" in skill["body"]
    assert skill["source"] == "lazy" and short["name"] == "lazy:lazy-notes"
    assert "no skill named 'nope'" in missing["error"] and "lazy:lazy-notes" in missing["error"]
    (hermes_home / "config.yaml").write_text("model: from-file\n")
    assert agent.host.registry[SLASH_COMMANDS]["later"].value("", agent) == "model is from-file"
    # a thread of the plugin importing a host module after loading still gets it
    hxfix_lazy.start_background()
    assert hxfix_lazy.RESULTS["home"] == str(hermes_home)
    assert hxfix_lazy.RESULTS["journal"] == "wal"


def test_other_code_never_gets_the_stand_ins(compat_site):
    load_compat(Config({"plugins": {"enabled": ["side"]}}))
    for name in ("tools.registry", "agent.memory_provider", "providers", "hermes_cli.plugins",
                 "plugins.plugin_utils"):
        sys.modules.pop(name, None)
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        raise AssertionError(f"{name} was importable outside hermes plugin code")


def test_project_plugins_only_when_enabled_by_env_and_category_folders(compat_site, hermes_home, tmp_path,
                                                                       monkeypatch):
    category = hermes_home / "plugins" / "greeting"
    category.mkdir(parents=True)
    shutil.copytree(FIXTURES / "hxfix_dirplugin", category / "formal")
    (category / "formal" / "plugin.yaml").unlink()  # a folder without a manifest is a plugin too
    project = tmp_path / "proj"
    shutil.copytree(FIXTURES / "hxfix_dirplugin", project / ".hermes" / "plugins" / "local")
    monkeypatch.chdir(project)
    cfg = Config({"plugins": {"enabled": ["greeting/formal", "greeter"]}})
    cands, _ = load_compat(cfg)
    assert cands["greeting/formal"].status == "enabled", cands["greeting/formal"].error
    assert "hermes_plugins.greeting__formal" in sys.modules
    assert "greeter" not in cands  # the project folder is ignored without the env switch
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    cands, adapters = load_compat(cfg)
    assert cands["greeter"].status == "enabled" and cands["greeter"].target.endswith("local")


def test_model_provider_folders_load_without_opt_in(compat_site, hermes_home, make_agent):
    folder = hermes_home / "plugins" / "model-providers" / "zeta"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        "from providers import register_provider\n"
        "from providers.base import ProviderProfile\n"
        "register_provider(ProviderProfile(name='zeta', base_url='http://127.0.0.1:9/v1', env_vars=('ZETA_KEY',)))\n")
    cfg = Config({})
    cands, adapters = load_compat(cfg)
    assert cands["model-providers/zeta"].status == "enabled"
    agent = make_agent(*adapters, config=cfg, script=["hi"])
    assert "zeta" in agent.host.registry[MODEL_PROVIDERS]
    from plugins.hermes_compat.profiles import profile_config
    from plugins.hermes_compat.host.providers import get_provider_profile

    pconf = profile_config(get_provider_profile("zeta"), agent.primary.with_(provider="zeta", base_url="", api_mode=""))
    assert (pconf.api_mode, pconf.base_url, pconf.api_key_env) == ("chat_completions", "http://127.0.0.1:9/v1",
                                                                   "ZETA_KEY")


def test_a_broken_directory_plugin_is_an_error_not_a_crash(compat_site, hermes_home):
    broken = hermes_home / "plugins" / "broken"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("import not_a_real_module_xyz\n")
    no_init = hermes_home / "plugins" / "manifest-only"
    no_init.mkdir()
    (no_init / "plugin.yaml").write_text(": not yaml : [\n")
    from hermes.host.plugins import PluginHost

    cfg = Config({"plugins": {"enabled": ["broken", "manifest-only", "kitchen"]}})
    host = PluginHost(cfg)
    cands, _ = load_compat(Config({}))
    for name in ("broken", "manifest-only", "kitchen"):
        cands[name].status = "enabled"
    host._load_all([cands["broken"], cands["manifest-only"], cands["kitchen"]])
    assert cands["broken"].status == "error" and "not_a_real_module_xyz" in cands["broken"].error
    assert cands["manifest-only"].status == "error" and "no __init__.py" in cands["manifest-only"].error
    assert cands["kitchen"].status == "enabled"
    assert "shout" in host.registry.tools


def test_no_stand_ins_when_hermes_agent_is_installed(compat_site, monkeypatch):
    from plugins.hermes_compat import standins

    monkeypatch.setattr(standins, "_hermes_agent_installed", True)
    assert standins.StandinFinder().find_spec("tools.registry") is None
    with standins.window():
        assert "tools" not in sys.modules
        try:
            importlib.import_module("tools.registry")
        except ImportError:
            pass
        else:
            raise AssertionError("a stand-in was served although hermes-agent is installed")
    # a plugin that needs the host modules then fails to import, cleanly (the real ones are absent here)
    from hermes.host.plugins import PluginHost

    from plugins.hermes_compat.discovery import candidates

    side = {c.name: c for c in candidates(Config({}))}["side"]
    side.status = "enabled"
    PluginHost(Config({}))._load_all([side])
    assert side.status == "error" and "No module named 'tools'" in side.error


NATIVE_GROUP_PLUGIN = '''
from tools.registry import tool_result  # a host module: only a stand-in can serve it

SCHEMA = {"name": "tally", "description": "Count", "parameters": {"type": "object", "properties": {}}}


def register(ctx):
    ctx.register_tool("tally", "tally", SCHEMA, lambda args, **kw: tool_result(count=3))
'''


def test_hermes_plugin_published_under_the_kernel_group_is_adapted(compat_site, make_agent):
    from hermes.host.plugins import PluginHost

    from .conftest import write_dist

    (compat_site / "hxfix_native.py").write_text(NATIVE_GROUP_PLUGIN)
    write_dist(compat_site, "hermes-native-style", "0.2", {"hermes.plugins": {"native-style": "hxfix_native:register"}})
    write_dist(compat_site, "hermes-native-mod", "0.2", {"hermes.plugins": {"native-mod": "hxfix_native"}})
    host = PluginHost.discover(Config({}))
    recs = {r.name: r for r in host.records}
    for name in ("native-style", "native-mod"):
        assert recs[name].status == "enabled", recs[name].error
        assert recs[name].reason == "adapted" and recs[name].source == "entrypoint"
    assert "tally" in host.registry.tools
    assert "tools" not in sys.modules  # the stand-in was only lent while the plugin loaded


HOST_NAMES_PLUGIN = '''
# every host name the published plugins import, from the modules hermes-compat serves
from agent.memory_provider import MemoryProvider
from agent.context_engine import ContextEngine, MEMORY_CONTEXT_MAX_CHARS, sanitize_memory_context
from providers import register_provider, get_provider_profile, list_providers
from providers.base import ProviderProfile, OMIT_TEMPERATURE
from tools.registry import registry, tool_error, tool_result
from hermes_constants import get_hermes_home
from hermes_cli.config import load_config, load_config_readonly, save_config, cfg_get
from hermes_cli.plugins import (PluginContext, invoke_hook, get_plugin_manager, VALID_HOOKS,
                                OBSERVER_SCHEMA_VERSION, VALID_MIDDLEWARE)
from plugins.plugin_utils import lazy_singleton, SingletonSlot

from agent.context_compressor import ContextCompressor, _retire_stale_tool_result_images

SEEN = {}


def register(ctx):
    cfg = load_config()
    cfg.setdefault("plugins", {}).setdefault("entries", {})["names"] = {"saved": True}
    save_config({"plugins": cfg["plugins"]}, merge_existing=True)  # hermes' keyword
    SEEN.update(model=cfg_get(load_config(), "model"), saved=cfg_get(load_config(), "plugins.entries.names.saved"),
                home=str(get_hermes_home()), compressor=ContextCompressor(model="m").name,
                readonly=load_config_readonly()["model"], max_chars=MEMORY_CONTEXT_MAX_CHARS,
                schema=OBSERVER_SCHEMA_VERSION, middleware=sorted(VALID_MIDDLEWARE),
                manager=type(get_plugin_manager()).__name__)
'''


def test_every_host_name_plugins_import_is_served(compat_site, hermes_home):
    from .conftest import write_dist

    (hermes_home / "config.yaml").write_text("model: kept-model\nplugins:\n  enabled: [names]\n")
    (compat_site / "hxfix_names.py").write_text(HOST_NAMES_PLUGIN)
    write_dist(compat_site, "hermes-names", "0.1", {"hermes_agent.plugins": {"names": "hxfix_names"}})
    from hermes.host.config import load_config

    cands, _ = load_compat(load_config())
    assert cands["names"].status == "enabled", cands["names"].error
    import hxfix_names

    assert hxfix_names.SEEN == {"model": "kept-model", "saved": True, "home": str(hermes_home),
                                "compressor": "compressor", "readonly": "kept-model",
                                "max_chars": 6000, "schema": "hermes.observer.v1",
                                "middleware": ["llm_execution", "llm_request", "tool_execution", "tool_request"],
                                "manager": "PluginManager"}
    assert load_config().get("plugins.enabled") == ["names"]  # merge_existing kept the rest of the file
    # a config.yaml the user broke is never replaced by a plugin's save
    from plugins.hermes_compat import standins

    (hermes_home / "config.yaml").write_text("model: [unclosed\n")
    with standins.window():
        from hermes_cli.config import save_config

        with pytest.raises(RuntimeError, match="Refusing to overwrite"):
            save_config({"model": "x"})
    assert (hermes_home / "config.yaml").read_text() == "model: [unclosed\n"


def _folder_plugin(home, name: str, manifest: str, body: str = "") -> None:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(manifest)
    (folder / "__init__.py").write_text(
        "import builtins\n" + body + "\ndef register(ctx):\n"
        "    builtins.LOAD_ORDER = getattr(builtins, 'LOAD_ORDER', []) + [" + repr(name) + "]\n")


def test_requires_plugins_orders_the_loading_and_names_what_is_missing(compat_site, hermes_home):
    import builtins

    from hermes.host.config import Config

    _folder_plugin(hermes_home, "alpha", "name: alpha\nmanifest_version: 2\nrequires_plugins: [zeta]\n")
    _folder_plugin(hermes_home, "zeta", "name: zeta\nmanifest_version: 2\n")
    _folder_plugin(hermes_home, "lonely", "name: lonely\nrequires_plugins: [{id: nowhere, version_range: '>=1'}]\n")
    builtins.LOAD_ORDER = []
    cands, _ = load_compat(Config({"plugins": {"enabled": ["alpha", "zeta", "lonely"]}}))
    assert builtins.LOAD_ORDER == ["zeta", "alpha"]  # alphabetically first, but it needs zeta
    assert cands["lonely"].status == "error"
    assert cands["lonely"].error == "requires the plugin 'nowhere', which is not installed"
    builtins.LOAD_ORDER = []
    cands, _ = load_compat(Config({"plugins": {"enabled": ["alpha"]}}))
    assert builtins.LOAD_ORDER == [] and cands["alpha"].status == "error"
    assert cands["alpha"].error == ("requires the plugin 'zeta', which is not enabled: "
                                    "run `hermes plugins enable zeta`")


def test_a_required_plugin_of_the_wrong_version_is_an_error_naming_both(compat_site, hermes_home, caplog):
    from hermes.host.config import Config

    _folder_plugin(hermes_home, "base", "name: base\nversion: 1.4.0\n")
    _folder_plugin(hermes_home, "needs-new", "name: needs-new\nmanifest_version: 2\n"
                                             "requires_plugins: [{id: base, version_range: '>=2,<3'}]\n")
    _folder_plugin(hermes_home, "needs-old", "name: needs-old\nmanifest_version: 2\n"
                                             "requires_plugins: [{id: base, version_range: '~=1.2'}]\n")
    _folder_plugin(hermes_home, "odd-range", "name: odd-range\nmanifest_version: 2\n"
                                             "requires_plugins: [{id: base, version_range: 'newest please'}]\n")
    cands, _ = load_compat(Config({"plugins": {"enabled": ["base", "needs-new", "needs-old", "odd-range"]}}))
    assert cands["needs-new"].status == "error"
    assert cands["needs-new"].error == "requires the plugin 'base' <3,>=2, and 1.4.0 is installed"
    assert cands["needs-old"].status == "enabled" and cands["base"].status == "enabled"
    assert cands["odd-range"].status == "enabled"  # an unreadable range is warned about, not enforced
    assert "'newest please' of 'base' is not a version specifier" in caplog.text
