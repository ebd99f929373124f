"""The kernel's hooks: the contract between the loop and its plugins.

A plugin is any object (usually a module) with functions marked
``@kernel.hookimpl`` whose names match these specs. pluggy passes an
implementation only the arguments it names, so declare just what you use.
Plugins add hooks of their own with ``register_hookspecs``; the built-ins do
(``clarify`` and the subagent hooks come with ``agent-tools``,
``transform_terminal_output`` with ``core-tools``, ``register_memory_backends``
with ``memory``). ``docs/hooks.md`` is generated from all of them
(``python scripts/hook_reference.py``).

Order: implementations run LIFO by load order within a tier;
``tryfirst``/``trylast`` move them between tiers. For ``firstresult`` hooks the
first non-``None`` answer wins.

Every spec takes ``agent`` where the kernel has one: the
:class:`kernel.agent.Agent` the event belongs to (read ``agent.session_id``,
``agent.config``, ``agent.state``, ``agent.turn`` ...). Callbacks registered on
one Agent never fire for another Agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Union

import pluggy

if TYPE_CHECKING:  # annotations only: importing this module stays cheap
    import click

    from kernel.agent import Agent
    from kernel.config import Config
    from kernel.plugins import Candidate
    from kernel.types import ApiCall, ModelResponse, ProviderConfig, ProviderError, ProviderFailure

hookspec = pluggy.HookspecMarker("hermes")

# ==========================================================================
# Registration


@hookspec(historic=True)
def register_hookspecs(add: Callable[[Any], None]) -> None:
    """Add hook specifications of your own (as pytest's ``pytest_addhooks``).

    Fires for each plugin as it registers, before the other plugins'
    implementations are checked, so they may implement the new hooks. Fire
    them with ``agent.emit(name, ...)`` or ``agent.ask(name, ...)``. A plugin
    implementing a hook whose owner may not be loaded marks it
    ``@hookimpl(optionalhook=True)``.

    :param add: ``add(namespace)`` takes a module whose functions are marked
        ``@kernel.hookspec``.
    :return: ignored.
    """


@hookspec
def register_config(declare: Callable[..., None]) -> None:
    """Declare the config keys your plugin reads; once per plugin host.
    ``hermes config`` shows, checks and sets them; a value of the wrong type
    in config.yaml is a one-line error naming the file and key, and a key no
    plugin declares is a warning with a did-you-mean.

    :param declare: ``declare(key, type, default=None, help="")``: a dotted
        key, its type (``int``, ``float``, ``str``, ``bool``, ``list``,
        ``dict``, or a tuple of them; below a ``dict`` key anything goes),
        the default ``config.get`` returns, and one line of help; or
        ``declare(kernel.config.Key(...))``.
    :return: ignored.
    """


@hookspec
def register_tools(register: Callable[[Any], None], config: Config) -> None:
    """Register tools the model may call; once per plugin host.

    On a name clash the plugin loaded first keeps the name (built-ins load
    first), with one warning; ``tools.prefer`` in config.yaml chooses.

    :param register: ``register(tool)`` takes a :class:`kernel.types.Tool`.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_toolsets(register: Callable[..., None], config: Config) -> None:
    """Register named groups of tools; once per plugin host.

    Every tool also belongs to the toolset named by its ``Tool.toolset``. The
    agent offers the tools of the toolsets chosen by ``toolsets`` in config or
    ``-t`` (all tools when neither is set).

    :param register: ``register(name, tools, description="")``; ``tools``
        lists tool names and/or other toolset names.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_model_providers(register: Callable[..., None], config: Config) -> None:
    """Register model providers (one per API mode, or custom ones); once per
    plugin host. Import SDKs inside the factory, not at module level.

    :param register: ``register(name, factory, description="")``;
        ``factory(ProviderConfig)`` returns a :class:`kernel.types.Provider`
        and may raise :class:`kernel.types.ProviderError` with reason
        ``config`` (a missing key, say).
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_context_engines(register: Callable[..., None], config: Config) -> None:
    """Register context engines by name; once per plugin host. The agent uses
    the one ``context.engine`` names (default ``compressor``).

    :param register: ``register(name, factory, description="")``;
        ``factory(agent)`` returns a :class:`kernel.types.ContextEngine`.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_commands(cli: click.Group, config: Config) -> None:
    """Add subcommands to the ``hermes`` command line. Fires when the command
    line names a command the kernel does not know, and when help is shown, so
    keep heavy imports inside the command functions.

    :param cli: the ``hermes`` click group.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_slash_commands(register: Callable[..., None], config: Config) -> None:
    """Add in-chat commands; once per plugin host. ``hermes chat`` runs the
    handler when the user types ``/name args``; the model is not called.

    :param register: ``register(name, handler, description="")``;
        ``handler(raw_args: str, agent) -> str | None``, a returned string is
        printed.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def discover_plugins(config: Config) -> list:
    """Offer plugin candidates from other sources (folders, other entry-point
    groups). Fires after the ``hermes.plugins`` entry points were loaded; the
    candidates go through the same resolver (enabled / disabled / not
    enabled) and ``hermes plugins list`` shows them. Must not import them.

    :param config: the loaded configuration.
    :return: a list of :class:`kernel.plugins.Candidate` (may be empty).
    """


@hookspec(firstresult=True)
def adapt_plugin(candidate: Candidate, error: str, config: Config) -> Optional[Any]:
    """A third-party ``hermes.plugins`` entry point cannot be used as it is:
    its import failed, or it implements no hook but has another host's plugin
    shape (a ``register`` function). Asked once every source was loaded; the
    built-in ``hermes-compat`` adapts hermes-agent plugins.

    :param candidate: the entry point as found.
    :param error: why it cannot be used as it is.
    :param config: the loaded configuration.
    :return: an object to register in its place, or ``None``.
    """


@hookspec(firstresult=True)
def resolve_api_mode(config: ProviderConfig) -> Optional[str]:
    """Pick the provider (API mode) for a provider config whose ``api_mode``
    is empty. Fires when an agent is built and whenever the loop switches
    provider.

    :param config: the provider config to resolve (not the whole configuration).
    :return: a registered provider name, or ``None`` to let another plugin answer.
    """


# ==========================================================================
# Lifecycle


@hookspec
def on_session_start(session_id: str, model: str, platform: str, provider: str, parent_session_id: Optional[str],
                     reason: str, agent: Agent) -> None:
    """A session begins: the first turn of a new session, a resumed session's
    first turn in this process, or the continuation after compression.

    :param session_id: the session that begins.
    :param model: the model of the current provider.
    :param platform: where the agent runs (``cli``, a gateway's name).
    :param provider: the current provider's label.
    :param parent_session_id: the session it continues after compression, else ``None``.
    :param reason: ``new``, ``resume`` or ``compression``.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_session_end(session_id: str, task_id: str, turn_id: str, completed: bool, interrupted: bool, model: str,
                   platform: str, exit_reason: str, usage: dict, agent: Agent) -> None:
    """A turn ended (every ``run_conversation`` call), as hermes-agent names it.

    :param session_id: the session.
    :param task_id: the turn's task id.
    :param turn_id: the turn's id.
    :param completed: the turn produced a final answer.
    :param interrupted: the user interrupted it.
    :param model: the model that answered last.
    :param platform: where the agent runs.
    :param exit_reason: ``completed``, ``interrupted_by_user``, ``budget_exhausted`` or ``error``.
    :param usage: the turn's summed, normalized usage (:func:`kernel.types.normalize_usage`).
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_session_finalize(session_id: str, platform: str, reason: str, agent: Agent) -> None:
    """A true session boundary: the agent is closed or the session replaced.

    :param session_id: the session that ends.
    :param platform: where the agent runs.
    :param reason: ``shutdown``, ``new_session`` or ``compression``.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def pre_llm_call(session_id: str, task_id: str, turn_id: str, user_message: str, conversation_history: list,
                 is_first_turn: bool, model: str, platform: str, agent: Agent) -> Union[dict, str, None]:
    """Once per turn, before the first model call. Context returned here goes
    into this turn's request only: never into the stored history or the
    system prompt, so prompt caching holds. All answers are joined.

    :param session_id: the session.
    :param task_id: the turn's task id.
    :param turn_id: the turn's id.
    :param user_message: the user's message of this turn.
    :param conversation_history: the history before this turn (a copy).
    :param is_first_turn: the session has no earlier turn.
    :param model: the current model.
    :param platform: where the agent runs.
    :param agent: the agent.
    :return: ``{"context": str}``, a non-empty ``str``, or ``None``.
    """


@hookspec
def post_llm_call(session_id: str, task_id: str, turn_id: str, user_message: str, assistant_response: str,
                  conversation_history: list, model: str, platform: str, agent: Agent) -> None:
    """Once per turn, after the final answer (not when the turn was
    interrupted or failed).

    :param session_id: the session.
    :param task_id: the turn's task id.
    :param turn_id: the turn's id.
    :param user_message: the user's message of this turn.
    :param assistant_response: the final answer, as stored.
    :param conversation_history: the whole history, this turn included (a copy).
    :param model: the model that answered.
    :param platform: where the agent runs.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def transform_llm_output(response_text: str, session_id: str, model: str, platform: str,
                         agent: Agent) -> Optional[str]:
    """The final answer is about to be stored and returned; fires before
    ``post_llm_call``.

    :param response_text: the model's final answer.
    :param session_id: the session.
    :param model: the model that answered.
    :param platform: where the agent runs.
    :param agent: the agent.
    :return: a non-empty ``str`` to replace the answer (the first wins), or ``None``.
    """


@hookspec
def pre_api_request(call: ApiCall, agent: Agent) -> None:
    """Before every model call, on every path (first call, retries,
    fallbacks, the grace call, auxiliary calls of plugins).

    :param call: the call: ids, provider, and the request as sent (``call.request``, ``call.body()``).
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def post_api_request(call: ApiCall, response: ModelResponse, agent: Agent) -> None:
    """After every successful model call.

    :param call: the call, with ``ended_at`` and ``duration`` set.
    :param response: the answer (``content``, ``tool_calls``, normalized ``usage``, ``finish_reason``).
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def api_request_error(call: ApiCall, error: ProviderError, attempt: int, agent: Agent) -> None:
    """After every failed model call, before the fallback policy decides.

    :param call: the call, with ``ended_at`` and ``duration`` set.
    :param error: the classified failure (``reason``, ``status_code``, ``message``, ``retryable``).
    :param attempt: consecutive failed attempts on this provider, from 1.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def pre_tool_call(tool_name: str, args: dict, task_id: str, session_id: str, tool_call_id: str, turn_id: str,
                  api_request_id: str, agent: Agent) -> Optional[dict]:
    """Before every tool call runs, exactly once per call, on the agent's
    thread. When a ``rewrite`` answer changed the arguments the hook fires
    once more with the final ones, so guards judge what will run (guards
    should be ``trylast`` to see in-place rewrites too). An implementation
    that raises or overruns its deadline blocks the call (fails closed).

    :param tool_name: the tool the model called.
    :param args: the very dict the tool will receive: changing it in place rewrites the call.
    :param task_id: the turn's task id.
    :param session_id: the session.
    :param tool_call_id: the call's id from the model.
    :param turn_id: the turn's id.
    :param api_request_id: the model call that asked for the tool.
    :param agent: the agent.
    :return: ``{"action": "block", "message": str}`` (the model reads the
        message; the first block wins), ``{"action": "approve", "message":
        str, "rule_key": str}`` (ask ``approve_tool_call``; nobody answering
        means no), ``{"action": "rewrite", "args": dict}``, or ``None``.
    """


@hookspec
def post_tool_call(tool_name: str, args: dict, result: str, task_id: str, session_id: str, tool_call_id: str,
                   turn_id: str, api_request_id: str, duration_ms: int, status: str, error_type: Optional[str],
                   error_message: Optional[str], agent: Agent) -> None:
    """After every tool call, once, on the agent's thread, on every outcome.

    :param tool_name: the tool the model called.
    :param args: the arguments it ran with (``{}`` when they did not parse).
    :param result: the result the model will read (secrets masked).
    :param task_id: the turn's task id.
    :param session_id: the session.
    :param tool_call_id: the call's id from the model.
    :param turn_id: the turn's id.
    :param api_request_id: the model call that asked for the tool.
    :param duration_ms: how long the handler ran (0 when it did not run).
    :param status: ``ok``, ``error``, ``blocked`` or ``interrupted``.
    :param error_type: for failures: ``plugin_block``, ``unknown_tool``, ``invalid_arguments``, ``exception`` ...
    :param error_message: for failures, the message the model reads.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def transform_tool_result(tool_name: str, args: dict, result: str, task_id: str, session_id: str,
                          tool_call_id: str, turn_id: str, api_request_id: str, duration_ms: int, status: str,
                          error_type: Optional[str], error_message: Optional[str], agent: Agent) -> Optional[str]:
    """After ``post_tool_call``: the last chance to change what the model reads.

    :param tool_name: the tool the model called.
    :param args: the arguments it ran with.
    :param result: the result the model would read.
    :param task_id: the turn's task id.
    :param session_id: the session.
    :param tool_call_id: the call's id from the model.
    :param turn_id: the turn's id.
    :param api_request_id: the model call that asked for the tool.
    :param duration_ms: how long the handler ran.
    :param status: ``ok``, ``error``, ``blocked`` or ``interrupted``.
    :param error_type: for failures, as in ``post_tool_call``.
    :param error_message: for failures, the message.
    :param agent: the agent.
    :return: a ``str`` to replace the result (the first wins), or ``None``.
    """


@hookspec
def on_pre_compress(session_id: str, messages: list, agent: Agent) -> Optional[str]:
    """The context engine is about to compress the history: flush memories
    now, and hand over what the summary must keep.

    :param session_id: the session about to be compressed.
    :param messages: the history as it is (a copy).
    :param agent: the agent.
    :return: notes for the summary (every answer goes to the engine's
        ``compress(..., notes=[...])``), or ``None``.
    """


@hookspec
def system_prompt(agent: Agent, session_id: str, model: str, platform: str) -> Optional[str]:
    """Contribute a part of the system prompt. Fires once per session; the
    prompt is then kept as it is so provider prompt caches hit. Parts are
    joined with blank lines in hook order, after the configured identity.

    :param agent: the agent.
    :param session_id: the session the prompt is for.
    :param model: the current model.
    :param platform: where the agent runs.
    :return: a ``str``, or ``None``.
    """


# ==========================================================================
# Callbacks (what a front end or a test probe implements)


@hookspec
def on_stream_delta(text: str, agent: Agent) -> None:
    """A piece of the answer streamed from the model, on the agent's thread.

    :param text: the new text.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_reasoning(text: str, agent: Agent) -> None:
    """A piece of the model's reasoning (extended thinking) streamed.

    :param text: the new reasoning text.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_thinking(active: bool, agent: Agent) -> None:
    """The agent started or stopped waiting on the model.

    :param active: ``True`` when the wait starts, ``False`` when it ends.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_status(status: str, detail: str, agent: Agent) -> None:
    """The loop changed state (a front end shows it as a status line).

    :param status: ``thinking``, ``tools``, ``retrying``, ``fallback``, ``compressing``, ``budget``, ``interrupted``.
    :param detail: a short sentence for a person.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_step(step: int, messages: list, agent: Agent) -> None:
    """One iteration ended (a model call and the tool calls it asked for).

    :param step: the iteration's number in this turn, from 1.
    :param messages: the messages this step added.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_tool_start(tool_name: str, args: dict, tool_call_id: str, agent: Agent) -> None:
    """A tool is about to run (``pre_tool_call`` allowed it).

    :param tool_name: the tool.
    :param args: its final arguments.
    :param tool_call_id: the call's id.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_tool_progress(tool_name: str, tool_call_id: str, message: str, agent: Agent) -> None:
    """A running tool reported progress (``ToolContext.progress``).

    :param tool_name: the tool.
    :param tool_call_id: the call's id.
    :param message: what the tool said.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_tool_complete(tool_name: str, tool_call_id: str, result: str, duration_ms: int, status: str,
                     agent: Agent) -> None:
    """A tool call finished, whatever the outcome.

    :param tool_name: the tool.
    :param tool_call_id: the call's id.
    :param result: the result the model reads.
    :param duration_ms: how long it ran.
    :param status: ``ok``, ``error``, ``blocked`` or ``interrupted``.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec
def on_tool_call_generated(tool_name: str, tool_call_id: str, agent: Agent) -> None:
    """A tool call was parsed from the model's stream, before it runs.

    :param tool_name: the tool.
    :param tool_call_id: the call's id.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec(firstresult=True)
def terminal_front_end(quiet: bool, config: Config) -> Optional[Any]:
    """``hermes run`` builds the display of its agent (the built-in
    ``terminal`` plugin answers). The object's hook implementations
    (``on_stream_delta``, ``approve_tool_call`` ...) become that agent's
    callbacks, so other agents of the process never see them.

    :param quiet: show nothing but the answer.
    :param config: the loaded configuration.
    :return: an object with hook implementations and ``end_answer(text)``
        (called with the final answer after the turn), or ``None``.
    """


# ==========================================================================
# Questions


@hookspec(firstresult=True)
def approve_tool_call(tool_name: str, args: dict, message: str, rule_key: str,
                      agent: Agent) -> Union[bool, str, None]:
    """May a tool call that ``pre_tool_call`` flagged run? Waiting for the
    person does not count against ``plugins.hook_timeout``. Nobody answering
    means no (fails closed).

    :param tool_name: the tool.
    :param args: its arguments.
    :param message: why it was flagged, for a person.
    :param rule_key: the rule that flagged it (``inline_code``, ...).
    :param agent: the agent.
    :return: ``True``/``"once"`` (this call), ``"session"`` (this rule for
        the rest of the session), ``"always"`` (saved in
        ``command_allowlist``), ``False``/``"deny"``, or ``None`` when you
        cannot ask.
    """


# ==========================================================================
# Fallback policy (the kernel executes, plugins decide)


@hookspec(firstresult=True)
def choose_provider(primary: ProviderConfig, agent: Agent) -> Optional[ProviderConfig]:
    """At the start of every turn: which provider to start on (the built-in
    fallback plugin picks a fallback while the primary cools down).

    :param primary: the configured primary provider.
    :param agent: the agent.
    :return: a provider config, or ``None`` for the primary.
    """


@hookspec(firstresult=True)
def on_provider_error(failure: ProviderFailure, agent: Agent) -> Optional[Any]:
    """A model call failed: decide what happens next.

    :param failure: the error, the provider, the attempt and the turn's history of failures.
    :param agent: the agent.
    :return: ``Retry(delay)``, ``SwitchProvider(config)``,
        ``RefreshCredentials()``, ``Compress()`` or ``GiveUp(message)``;
        ``None`` from every plugin means give up.
    """


# ==========================================================================
# Persistence


@hookspec
def append_messages(session_id: str, messages: list, agent: Agent) -> None:
    """New messages entered the history, as they happen: the user message,
    then each step's assistant message (before its tools run) and results.
    Append them; never rewrite what was stored.

    :param session_id: the session they belong to.
    :param messages: the new message dicts.
    :param agent: the agent.
    :return: ignored.
    """


@hookspec(firstresult=True)
def load_session(session_id: str, agent: Agent) -> Optional[list]:
    """Load a stored history to resume it. The kernel repairs what it gets.

    :param session_id: the full session id.
    :param agent: the agent.
    :return: the stored message dicts, or ``None`` if you do not know the session.
    """


@hookspec(firstresult=True)
def resolve_session(session_id: str, agent: Agent) -> Optional[str]:
    """Turn what the user typed (an id, a unique prefix) into a session id.

    :param session_id: what was typed.
    :param agent: the agent.
    :return: the full id, or ``None`` if it names none or several.
    """


@hookspec(firstresult=True)
def latest_session(platform: str, agent: Agent) -> Optional[str]:
    """The most recent session, for ``--continue``.

    :param platform: where the agent runs.
    :param agent: the agent.
    :return: its id, or ``None``.
    """


@hookspec(firstresult=True)
def claim_session(session_id: str, agent: Agent) -> Optional[str]:
    """Before a stored session is resumed, so that one process at a time
    writes it (a store takes a writer lock held until the session ends).

    :param session_id: the session to resume.
    :param agent: the agent.
    :return: ``None`` when this process may write it, or a one-line reason
        when another process is writing it (the turn is then refused).
    """
