import logging
import sys

import pytest

from hermes.host.config import Config
from hermes.host.plugins import DISABLED, ENABLED, ERROR, NOT_ENABLED, PluginHost, entry_points
from kernel.types import Block, ProviderConfig, Tool

from .fakedist import make_dist

GOOD = """
from kernel import hookimpl
from kernel.types import Tool

@hookimpl
def register_tools(register):
    register(Tool("good_tool", "A tool", {"type": "object", "properties": {}}, lambda a, c: "ok"))
"""
BROKEN_IMPORT = "import definitely_not_a_module_xyz\n"
MISSPELLED = """
from kernel import hookimpl

@hookimpl
def pre_tool_cal(tool_name):
    return None
"""
BAD_ARGS = """
from kernel import hookimpl

@hookimpl
def pre_tool_call(call, argz):
    return None
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    make_dist(root, "hermes-good", "1.2.3", {"good": ("hermes_good_mod", GOOD)}, summary="Good plugin")
    make_dist(root, "hermes-broken", "0.1", {"broken": ("hermes_broken_mod", BROKEN_IMPORT)})
    make_dist(root, "hermes-typo", "0.1", {"typo": ("hermes_typo_mod", MISSPELLED)})
    make_dist(root, "hermes-badargs", "0.1", {"badargs": ("hermes_badargs_mod", BAD_ARGS)})
    monkeypatch.syspath_prepend(str(root))
    yield root
    for mod in [m for m in sys.modules if m.startswith("hermes_") and m.endswith("_mod")]:
        del sys.modules[mod]


def by_name(records):
    return {r.name: r for r in records}


def test_entry_points_are_read_from_metadata(site):
    found = {ep.name: (ep.target, ep.dist, ep.version) for ep in entry_points("hermes.plugins")
             if ep.dist.startswith("hermes-")}
    assert found["good"] == ("hermes_good_mod", "hermes-good", "1.2.3")  # the name from METADATA, not the folder
    assert {"good", "broken", "typo", "badargs"} <= set(found)


def test_broken_plugins_are_isolated_and_attributed(site):
    host = PluginHost.discover(Config({}))
    recs = by_name(host.records)
    assert recs["good"].status == ENABLED and recs["good"].source == "entrypoint"
    assert "good_tool" in host.registry.tools and host.registry.tools["good_tool"].plugin == "good"
    assert recs["broken"].status == ERROR and "definitely_not_a_module_xyz" in recs["broken"].error
    assert recs["typo"].status == ERROR
    assert recs["typo"].error == "unknown hook 'pre_tool_cal' (did you mean 'pre_tool_call'?)"
    assert recs["badargs"].status == ERROR and "argz" in recs["badargs"].error
    # the misspelled and invalid ones are not left half-registered
    names = [name for name, _ in host.objects]
    assert "typo" not in names and "badargs" not in names and "good" in names


def test_listing_imports_nothing(site):
    recs = by_name(PluginHost.discover(Config({}), import_third_party=False).records)
    assert recs["broken"].status == ENABLED  # not imported, so not known broken yet
    assert "hermes_broken_mod" not in sys.modules and "hermes_good_mod" not in sys.modules
    assert recs["good"].summary() == "Good plugin" and recs["good"].version == "1.2.3"


def test_disabled_wins_and_enabled_list(site):
    cfg = Config({"plugins": {"enabled": ["good"], "disabled": ["good", "broken"]}})
    recs = by_name(PluginHost.discover(cfg, import_third_party=False).records)
    assert recs["good"].status == DISABLED and recs["broken"].status == DISABLED
    assert recs["typo"].status == ENABLED


def test_hermes_plugins_env_loads_only_that_set(site, monkeypatch):
    monkeypatch.setenv("HERMES_PLUGINS", "good, typo")
    recs = by_name(PluginHost.discover(Config({"plugins": {"disabled": ["typo"]}}), import_third_party=False).records)
    assert recs["good"].status == ENABLED
    assert recs["broken"].status == NOT_ENABLED and "HERMES_PLUGINS" in recs["broken"].reason
    assert recs["typo"].status == DISABLED  # disabled still wins


def test_safe_mode_loads_builtins_only(site, monkeypatch):
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    recs = PluginHost.discover(Config({}), import_third_party=False).records
    assert all(r.status == NOT_ENABLED for r in recs if r.source != "builtin")
    assert any(r.source == "builtin" and r.status == ENABLED for r in recs)


def test_trace_hooks_writes_each_call_with_duration_to_stderr_or_a_file(make_agent, monkeypatch, capsys, recorder,
                                                                       tmp_path, caplog):
    monkeypatch.setenv("HERMES_TRACE_HOOKS", "1")
    agent = make_agent(script=["x"], callbacks=[recorder("pre_api_request")])
    agent.run_conversation("hi")
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert any(line.startswith("hermes-trace: hook pre_api_request: ") and line.endswith(" ms") for line in lines)
    assert "WARNING" not in captured.err and "hermes-trace" not in captured.out
    trace = tmp_path / "hooks.log"
    monkeypatch.setenv("HERMES_TRACE_HOOKS", str(trace))
    make_agent(script=["x"], callbacks=[recorder("pre_api_request")]).run_conversation("hi")
    assert "hermes-trace: hook pre_api_request: " in trace.read_text() and "hermes-trace" not in capsys.readouterr().err
    monkeypatch.setenv("HERMES_TRACE_HOOKS", str(tmp_path / "no-such-folder" / "hooks.log"))
    with caplog.at_level(logging.WARNING):
        make_agent(script=["x"]).run_conversation("hi")  # a file that cannot be written: stderr, with a warning
    assert "cannot write" in caplog.text and "hermes-trace: hook " in capsys.readouterr().err


def test_on_a_terminal_trace_lines_never_land_inside_the_streamed_answer(tmp_path):
    """In a pseudo-terminal (stdout and stderr one tty), the streamed answer's
    line stays whole: the hook lines of the call come after it."""
    import json
    import os
    import pty
    import subprocess

    from tests.conftest import ROOT, hermes_command

    script = tmp_path / "script.json"
    script.write_text(json.dumps(["one two three four five six seven"]))  # streamed in pieces of 16 characters
    home = tmp_path / "home"
    home.mkdir()
    leader, follower = pty.openpty()
    env = {**os.environ, "HERMES_TRACE_HOOKS": "1", "HERMES_HOME": str(home),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([*hermes_command(), "run", "--api-mode", "scripted", "--base-url", str(script), "hi"],
                            stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(leader)
    text = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n").replace("\x1b[K", "")
    shown = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]  # what stays on screen (the spinner is erased)
    answer = [line for line in shown if "one" in line]
    assert answer and answer[0].strip() == "one two three four five six seven", text
    assert "hermes-trace: hook on_stream_delta" in text


HALF_REGISTERED = """
from kernel import hookimpl
from kernel.types import Tool

@hookimpl
def register_tools(register):
    register(Tool("half_tool", "A tool", {"type": "object", "properties": {}}, lambda a, c: "ok"))
    raise RuntimeError("registration blew up half way")

@hookimpl
def pre_tool_call(call):
    from kernel.types import Block

    return Block("should never run")
"""


def test_a_plugin_failing_in_registration_is_dropped_whole(site, tmp_path, make_agent, echo_plugin):
    from .fakedist import make_dist

    make_dist(site, "hermes-half", "0.1", {"half": ("hermes_half_mod", HALF_REGISTERED)})
    host = PluginHost.discover(Config({"plugins": {"disabled": ["typo", "badargs", "broken"]}}))
    assert "half_tool" not in host.registry.tools and "good_tool" in host.registry.tools
    rec = host.record("half")
    assert rec.status == ERROR and rec.error == "register_tools failed: RuntimeError: registration blew up half way"
    assert "half" not in [name for name, _ in host.objects]
    assert not any(i.plugin_name == "half" for i in host.pm.hook.pre_tool_call.get_hookimpls())


@pytest.mark.parametrize("make, why", [
    (lambda h: Tool("read file", "Read", {"type": "object"}, h),
     "its name must be 1-64 letters, digits, '_' or '-' (what the providers accept)"),
    (lambda h: Tool("x" * 65, "Long", {"type": "object"}, h), "its name must be 1-64 letters"),
    (lambda h: Tool("odd", None, {"type": "object"}, h), "its description must be a string, not NoneType"),
    (lambda h: Tool("odd", "Odd", "object", h), "its parameters must be a JSON Schema mapping, not str"),
    (lambda h: Tool("odd", "Odd", {"type": "object", "enum": {1, 2}}, h), "its parameters are not JSON"),
    (lambda h: Tool("odd", "Odd", {"type": "object"}, "not a function"), "its handler is not callable"),
])
def test_a_tool_no_provider_could_offer_drops_its_plugin_and_the_turn_goes_on(make, why, make_agent, echo_plugin):
    """Offered, such a tool makes every model call of the conversation fail (a
    provider refuses the whole request), so a plugin registering one is
    broken: it is dropped at registration with the reason, the rest work."""
    from kernel import hookimpl

    class Odd:
        __name__ = "odd-tools"

        @hookimpl
        def register_tools(self, register):
            register(make(lambda args, ctx: "ok"))

    agent = make_agent(echo_plugin, Odd(), script=[{"tool_calls": [["echo", {"text": "hi"}]]}, "done"])
    rec = agent.host.record("odd-tools")
    assert rec.status == ERROR and rec.error.startswith("register_tools failed: ValueError: tool ") and why in rec.error
    assert "echo" in agent.tools and agent.run_conversation("go").final_response == "done"
    offered = [t["name"] for t in agent.scripted.requests[0].tools]
    assert "echo" in offered and len(offered) == len(agent.tools)


@pytest.mark.parametrize("hook, args, error", [
    ("register_model_providers", ("weird", "not callable"),
     "register_model_providers: register('weird', factory): a name and a callable factory, got str"),
    ("register_context_engines", ("eng", 42),
     "register_context_engines: register('eng', factory): a name and a callable factory, got int"),
    ("register_toolsets", ("mine", "echo"),  # a string: its letters became the members, the agent had no tools
     "register_toolsets: register('mine', tools): tools must be a list of names"),
])
def test_a_registration_that_could_not_work_drops_its_plugin_at_once(make_agent, echo_plugin, hook, args, error):
    from kernel import hookimpl

    def register_hook(self, register):
        register(*args)

    wrong = type("Wrong", (), {"__name__": "wrong", hook: hookimpl(specname=hook)(register_hook)})()
    agent = make_agent(echo_plugin, wrong, script=["done"])
    rec = agent.host.record("wrong")
    assert rec.status == ERROR and rec.error == f"{hook} failed: TypeError: {error}"
    assert agent.run_conversation("go").final_response == "done" and "echo" in agent.tools


def test_built_ins_load_first_then_packages_by_distribution_name(site):
    """The site folder comes first on sys.path, so importlib.metadata yields
    its packages before the built-ins: they used to load first, their
    firstresult answers came last and a built-in kept a tool name the
    documentation gives to the first loaded. Now the order is the same on
    every machine."""
    from hermes.host.plugins import entry_point_candidates

    found = entry_point_candidates()
    kinds = [c.source for c in found]
    assert kinds == sorted(kinds, key=lambda k: k != "builtin")  # every built-in before any package
    builtins = [c.name for c in found if c.source == "builtin"]
    assert builtins == sorted(builtins) and {"core-tools", "terminal-ui", "openai-chat"} <= set(builtins)
    packages = [(c.dist, c.name) for c in found if c.source != "builtin"]
    assert packages == sorted(packages, key=lambda p: (p[0].replace("-", "_").lower(), p[1]))
    assert {"broken", "good"} <= {name for _, name in packages}


def test_a_plugin_that_fails_to_import_is_not_blamed_on_hermes_compat(site):
    """hermes-compat's adapt_plugin tries a failed entry point again under its
    loader; when that import fails too, the failure stays the plugin's. It used
    to leave hermes-compat marked as failed in adapt_plugin."""
    host = PluginHost.discover(Config({"plugins": {"disabled": ["typo", "badargs"]}}))
    rec = host.record("broken")
    assert rec.status == ERROR and "definitely_not_a_module_xyz" in rec.error
    assert not host.failures.of("hermes-compat"), host.failures.seen
    assert host.record("hermes-compat").status == ENABLED


def test_an_entry_point_whose_value_is_not_a_module_says_so(site):
    (site / "hermes_empty-0.1.dist-info").mkdir()
    (site / "hermes_empty-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-empty\nVersion: 0.1\n")
    (site / "hermes_empty-0.1.dist-info" / "entry_points.txt").write_text("[hermes.plugins]\nempty =\nspaced = a b\n")
    from hermes.host.plugins import forget_entry_points

    forget_entry_points()
    host = PluginHost.discover(Config({"plugins": {"disabled": ["typo", "badargs", "broken"]}}))
    assert host.record("empty").error == "its entry point's value '' is not 'module' or 'module:attr'"
    assert host.record("spaced").error == "its entry point's value 'a b' is not 'module' or 'module:attr'"
    assert host.record("good").status == ENABLED  # it was AttributeError: 'NoneType' object has no attribute 'group'


def test_a_plugin_whose_specs_or_config_declarations_fail_is_unloaded(make_agent):
    """Like a failure in register_tools: the plugin is broken, none of it stays
    loaded. It used to stay enabled with only a warning."""
    import types

    from kernel import hookimpl, hookspec

    specs = types.ModuleType("dup_specs")
    specs.on_status = hookspec(lambda status: None)  # the kernel's own name again

    class Dup:
        __name__ = "dup"

        @hookimpl
        def register_hookspecs(self, add):
            add(specs)

        @hookimpl
        def pre_tool_call(self, call):
            return Block("never")

    class BadKey:
        __name__ = "bad-key"

        @hookimpl
        def register_config(self, declare):
            declare("weather.days", "an integer")

    agent = make_agent(Dup(), BadKey(), script=["fine"])
    dup, bad = agent.host.record("dup"), agent.host.record("bad-key")
    assert dup.status == ERROR and dup.error.startswith("register_hookspecs failed: ValueError: Hook 'on_status'")
    assert bad.status == ERROR and bad.error.startswith("register_config failed: TypeError: declare('weather.days')")
    assert not agent.hook.pre_tool_call.get_hookimpls() and agent.run_conversation("go").final_response == "fine"


def test_a_plugins_registration_table_is_read_with_the_table_its_spec_module_exports():
    import types

    from kernel import hookimpl, hookspec
    from kernel.hookspecs import Table

    specs = types.ModuleType("voice_specs")
    specs.VOICES = Table("register_voices", callable=True)

    def register_voices(register, config):
        """Voices by name. :param register: register(name, speak). :param config: the config. :return: ignored."""

    specs.register_voices = hookspec(register_voices)
    specs.register_accents = hookspec(lambda register: None)  # a table nobody exports a Table for
    specs.register_accents.__name__ = "register_accents"

    class Owner:
        __name__ = "voices"

        @hookimpl
        def register_hookspecs(self, add):
            add(specs)

        @hookimpl
        def register_voices(self, register):
            register("calm", lambda text: text.lower(), "a quiet voice")

        @hookimpl
        def register_accents(self, register):
            register("plain", "not callable, and need not be")

    class NotCallable:
        __name__ = "bad-voice"

        @hookimpl
        def register_voices(self, register):
            register("loud", "SHOUT")

    host = PluginHost.from_objects([Owner(), NotCallable()], Config({}))
    registry = host.registry
    assert registry[specs.VOICES]["calm"].value("HI") == "hi" and registry[specs.VOICES]["calm"].plugin == "voices"
    assert registry[Table("register_accents")]["plain"].value == "not callable, and need not be"
    assert host.record("bad-voice").error.startswith("register_voices failed: TypeError")
    assert registry[Table("register_nothing")] == {}  # no loaded plugin specifies it
    with pytest.raises(TypeError, match="takes a kernel.hookspecs.Table"):
        registry["voices"]  # noqa: B018 - a string is a mistake, not an empty table


def test_cli_shows_a_plugin_that_failed_in_registration(hermes, tmp_path):
    from tests.conftest import ROOT

    from .fakedist import make_dist

    site = tmp_path / "site2"
    site.mkdir()
    make_dist(site, "hermes-half", "0.1", {"half": ("hermes_half_cli_mod", HALF_REGISTERED)})
    env = {"PYTHONPATH": f"{ROOT}{__import__('os').pathsep}{site}"}
    out = hermes("plugins", "list", "--json", "--hooks", env=env)
    rows = {r["name"]: r for r in __import__("json").loads(out.stdout)}
    assert rows["half"]["status"] == "error" and "registration blew up" in rows["half"]["error"]


def test_plugins_bring_their_own_hook_specs():
    """register_hookspecs (pytest_addhooks): a plugin adds a spec; another
    plugin implements it, even when it registered first; the owner fires it.
    An implementation of a spec nobody brought is an error with a
    did-you-mean, unless it is marked optionalhook; one that does not fit the
    spec is dropped, and the others keep working."""
    import types

    from kernel import hookimpl, hookspec
    from kernel.agent import Agent

    specs = types.ModuleType("weather_hookspecs")

    @hookspec(firstresult=True)
    def forecast_for(city, agent):
        """Return a forecast for ``city``."""

    specs.forecast_for = forecast_for

    class Owner:
        __name__ = "owner"

        @hookimpl
        def register_hookspecs(self, add):
            add(specs)

    class Answer:
        __name__ = "answer"

        @hookimpl
        def forecast_for(self, city):
            return f"sun in {city}"

    class Optional:
        __name__ = "optional"

        @hookimpl(optionalhook=True)
        def rain_for(self, city):
            return "rain"

    class Typo:
        __name__ = "typo"

        @hookimpl
        def forcast_for(self, city):
            return "?"

    class Misfit:
        __name__ = "misfit"

        @hookimpl
        def forecast_for(self, town):
            return "?"

    from plugins_providers.scripted import scripted_plugin

    host = PluginHost.from_objects([scripted_plugin([]), Answer(), Misfit(), Optional(), Typo(), Owner()], Config({}))
    status = {r.name: (r.status, r.error) for r in host.records}
    assert status["answer"] == (ENABLED, "") and status["optional"] == (ENABLED, "") and status["owner"] == (ENABLED, "")
    assert status["typo"] == (ERROR, "unknown hook 'forcast_for' (did you mean 'forecast_for'?)")
    assert status["misfit"][0] == ERROR and "town" in status["misfit"][1] and "\n" not in status["misfit"][1]
    agent = Agent(host, ProviderConfig(api_mode="scripted", model="m"))
    assert agent.ask("forecast_for", city="Oslo") == "sun in Oslo"
    # a per-agent manager (callbacks) gets the plugin's specs too
    listener = Agent(host, ProviderConfig(api_mode="scripted", model="m"), callbacks=[Answer()])
    assert listener.ask("forecast_for", city="Rome") == "sun in Rome"


FOREIGN = """
def register(ctx):
    ctx.register_tool("foreign_tool")
"""
ADAPTER = """
from kernel import hookimpl
from kernel.types import Tool

SEEN = []

class Adapted:
    def __init__(self, target):
        self.target = target

    @hookimpl
    def register_tools(self, register):
        register(Tool("foreign_tool", "adapted", {"type": "object", "properties": {}}, lambda a, c: "ok"))

@hookimpl
def adapt_plugin(candidate, error, config):
    SEEN.append((candidate.name, error))
    if candidate.name == "foreign":
        return Adapted(candidate.target)
    return None
"""


def test_adapt_plugin_turns_a_foreign_shape_into_a_plugin(tmp_path, monkeypatch):
    """An entry point with another host's shape (a register() function) is
    offered to adapt_plugin with the reason; the returned object is
    registered in its place and listed as adapted."""
    root = tmp_path / "site"
    root.mkdir()
    make_dist(root, "hermes-foreign", "1.0", {"foreign": ("hermes_foreign_mod", FOREIGN)})
    make_dist(root, "hermes-adapter", "1.0", {"adapter": ("hermes_adapter_mod", ADAPTER)})
    monkeypatch.syspath_prepend(str(root))
    try:
        host = PluginHost.discover(Config({"plugins": {"disabled": ["hermes-compat"]}}))  # it adapts this shape too
        import hermes_adapter_mod

        recs = by_name(host.records)
        assert recs["foreign"].status == ENABLED and recs["foreign"].reason == "adapted"
        assert host.registry.tools["foreign_tool"].description == "adapted"
        assert ("foreign", "implements no hermes hook (it looks like another host's plugin: a register() function)") \
            in hermes_adapter_mod.SEEN
    finally:
        for mod in ("hermes_foreign_mod", "hermes_adapter_mod"):
            sys.modules.pop(mod, None)


def test_a_plugin_whose_owner_is_absent_is_not_loaded_and_says_so_quietly(caplog):
    from kernel import hookimpl

    """``requires_plugins`` names the plugin whose specs it implements; without it: one line in the
    listing, no warning; and a did-you-mean proposes only a hook of the same kind."""
    class Backend:
        __name__ = "backend"
        requires_plugins = ["memory-owner"]

        @hookimpl
        def register_widget_backends(self, register):
            pass

    class Stray:
        __name__ = "stray"

        @hookimpl
        def register_widget_backends(self, register):  # no requires_plugins: an unknown hook
            pass

        @hookimpl
        def on_sesion_start(self):
            pass

    with caplog.at_level("WARNING", logger="hermes.plugins"):
        host = PluginHost.from_objects([Backend(), Stray()], Config({}))
    status = {r.name: (r.status, r.error) for r in host.records}
    assert status["backend"] == (ERROR, "not loaded: needs memory-owner (`hermes plugins enable memory-owner`)")
    assert status["stray"] == (ERROR, "unknown hook 'register_widget_backends', "  # never 'register_commands'
                                      "'on_sesion_start' (did you mean 'on_session_start'?)")
    assert "plugin backend:" not in caplog.text and "plugin stray:" in caplog.text


def test_a_plugin_that_fails_after_loading_takes_its_extensions_along_and_callbacks_still_work(make_agent):
    """An owner of specs whose register_tools raises is dropped after its extensions were checked against
    its specs: they go with it (listed as needing it), and an agent with callbacks is still built (it was
    "callback object module: unknown hook(s) ..." and exit 1, from `memory.memory_char_limit: 0`)."""
    import types

    from kernel import hookimpl, hookspec

    specs = types.ModuleType("widget_specs")
    specs.register_widget_backends = hookspec(lambda register: None)

    class Owner:
        __name__ = "widget-owner"

        @hookimpl
        def register_hookspecs(self, add):
            add(specs)

        @hookimpl
        def register_tools(self, register):
            raise RuntimeError("widget.size: expected a positive integer, got 0")

    class Backend:
        __name__ = "widget-backend"
        requires_plugins = ["widget-owner"]

        @hookimpl
        def register_widget_backends(self, register):
            pass

    class Stray:  # implements the owner's hook without saying it needs the owner
        __name__ = "widget-stray"

        @hookimpl
        def register_widget_backends(self, register):
            pass

    class Probe:
        def on_step(self, step):
            pass

    agent = make_agent(Owner(), Backend(), Stray(), script=["fine"], callbacks=[Probe()])
    assert agent.run_conversation("go").final_response == "fine"
    status = {r.name: (r.status, r.error or r.reason) for r in agent.host.records}
    assert status["widget-owner"] == (ERROR, "register_tools failed: RuntimeError: widget.size: expected a "
                                             "positive integer, got 0")
    assert status["widget-backend"] == (DISABLED, "needs widget-owner, which failed")
