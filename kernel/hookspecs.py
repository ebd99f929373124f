"""Every hook of the kernel, in one module.

A plugin is any object (usually a module) with functions marked
``@kernel.hookimpl`` whose names match these specs. pluggy passes an
implementation only the arguments it names, so declare just what you use.
The kernel always passes the full keyword set, so hermes-agent style callbacks
that require every keyword also work.

Order: implementations run LIFO by load order within a tier;
``tryfirst``/``trylast`` move them between tiers. For ``firstresult`` hooks the
first non-``None`` answer wins.

Groups:

* registration hooks (``register_*``), called once when the plugin host is built
  or when a command line is parsed;
* lifecycle hooks with hermes-agent's names and keyword arguments;
* callbacks (streaming, status, tool progress) that UIs implement;
* questions (``firstresult``): ask the user, approve a tool call, choose a provider;
* the fallback policy (``choose_provider``, ``on_provider_error``);
* persistence (``append_messages``, ``load_session``, ``latest_session``).

Every spec takes ``agent`` where the kernel has one: it is the
:class:`kernel.agent.Agent` the event belongs to (read ``agent.session_id``,
``agent.config``, ``agent.state`` ...). Callbacks registered on one Agent never
fire for another Agent.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("hermes")

# ==========================================================================
# Registration


@hookspec
def register_tools(register, config):
    """Register tools the model may call.

    Called once per plugin host. ``register(tool)`` takes a
    :class:`kernel.types.Tool`. ``config`` is the loaded
    :class:`kernel.config.Config`. Registration runs in hook order (the plugin
    loaded last goes first), so on a name clash the plugin loaded first keeps
    the name: built-ins load first, so a third-party tool never silently
    replaces a built-in one (the clash is logged). Return value: ignored.

    Example::

        @hookimpl
        def register_tools(register):
            register(Tool("echo", "Echo the text", {"type": "object", ...}, handler))
    """


@hookspec
def register_model_providers(register, config):
    """Register model providers (one per API mode, or custom ones).

    ``register(name, factory, description="")``: ``factory(ProviderConfig)``
    returns an object with ``complete(request, emit) -> ModelResponse`` and may
    raise :class:`kernel.types.ProviderError` with reason ``config`` (for
    example a missing API key). Import SDKs inside the factory, not at module
    level. Return value: ignored.
    """


@hookspec
def register_toolsets(register, config):
    """Register named groups of tools: ``register(name, tools, description="")``
    where ``tools`` lists tool names and/or other toolset names.

    Every tool also belongs to the toolset named by its ``Tool.toolset``. The
    agent offers the tools of the toolsets chosen by ``toolsets`` in config or
    ``-t`` on the command line (all tools when neither is set). Return value:
    ignored.
    """


@hookspec
def register_memory_backends(register, config):
    """Register memory backends by name: ``register(name, factory, description="")``.

    The memory plugin selects one by ``memory.provider``. Return value: ignored.
    """


@hookspec
def register_context_engines(register, config):
    """Register context engines by name: ``register(name, factory, description="")``.

    ``factory(agent)`` returns an engine with ``update_from_response(usage)``,
    ``should_compress(messages) -> bool``, ``compress(messages, *, agent,
    reason) -> list`` and optionally ``tools() -> list[Tool]``. The kernel uses
    the one named by ``context.engine`` (default ``compressor``). Return value:
    ignored.
    """


@hookspec
def register_commands(cli, config):
    """Add subcommands to the ``hermes`` click group ``cli``.

    Called when the command line names a command the kernel does not know, and
    when help is shown. Keep the imports of heavy libraries inside the command
    functions. Return value: ignored.
    """


@hookspec
def register_slash_commands(register, config):
    """Add in-chat commands: ``register(name, handler, description="")``.

    ``hermes chat`` runs ``handler(raw_args: str, agent) -> str | None`` when
    the user types ``/name args`` and prints a returned string; the model is
    not called. Return value: ignored.
    """


@hookspec
def discover_plugins(config):
    """Return extra plugin candidates from other sources (directories, other
    entry-point groups) as a list of :class:`kernel.plugins.Candidate`.

    Called by the plugin host after the ``hermes.plugins`` entry points were
    loaded; the candidates go through the same resolver (enabled / disabled /
    not enabled) as native plugins, and ``hermes plugins list`` shows them.
    Must not import the candidates. Return value: a list (may be empty).
    """


@hookspec(firstresult=True)
def adapt_plugin(candidate, error, config):
    """A third-party ``hermes.plugins`` entry point cannot be used as it is:
    its import failed (``error`` says why), or it implements no hook but has
    the shape of another host's plugin (a ``register`` function, a callable).

    Return an object to register in its place (an adapter with hook
    implementations), or ``None``. Asked after every plugin source was
    loaded. The built-in ``hermes-compat`` plugin adapts hermes-agent plugins
    published under this group.
    """


@hookspec(firstresult=True)
def resolve_api_mode(config):
    """Pick the registered provider name (API mode) for a ``ProviderConfig``
    whose ``api_mode`` is empty.

    Return the name, or ``None`` to let another plugin answer. Called when an
    Agent is built and whenever the loop switches provider.
    """


# ==========================================================================
# Lifecycle (hermes-agent names and keyword arguments; the kernel adds ``agent``)


@hookspec
def on_session_start(session_id, model, platform, provider, parent_session_id, reason, agent):
    """A session begins: the first turn of a new session, a resumed session's
    first turn in this process, or the continuation after compression
    (``reason="compression"``, ``parent_session_id`` set). Return value: ignored.
    """


@hookspec
def on_session_end(session_id, task_id, turn_id, completed, interrupted, model, platform, exit_reason, usage, agent):
    """Fires at the end of every turn (every ``run_conversation`` call), as in
    hermes-agent. ``completed`` is True when the turn produced a final answer.
    Return value: ignored.
    """


@hookspec
def on_session_finalize(session_id, platform, reason, agent):
    """A true session boundary: the Agent is closed (``reason="shutdown"``),
    or the session is replaced (``"new_session"``, ``"compression"``).
    Return value: ignored.
    """


@hookspec
def pre_llm_call(
    session_id, task_id, turn_id, user_message, conversation_history, is_first_turn, model, platform, sender_id, agent
):
    """Once per turn, before the first model call.

    Return ``{"context": str}`` or a non-empty ``str`` to add context to the
    current user message for this turn only: it goes into the request, never
    into the stored history or the system prompt (so prompt caching holds).
    All answers are joined with blank lines.
    """


@hookspec
def post_llm_call(
    session_id, task_id, turn_id, user_message, assistant_response, conversation_history, model, platform, agent
):
    """Once per turn, after the final answer (not when the turn was
    interrupted or failed). Return value: ignored."""


@hookspec
def transform_llm_output(response_text, session_id, model, platform, agent):
    """Before ``post_llm_call``. The first non-empty ``str`` returned replaces
    the final answer (stored and returned)."""


@hookspec
def pre_api_request(
    task_id,
    turn_id,
    api_request_id,
    session_id,
    user_message,
    conversation_history,
    platform,
    model,
    provider,
    base_url,
    api_mode,
    api_call_count,
    request_messages,
    message_count,
    tool_count,
    approx_input_tokens,
    request_char_count,
    max_tokens,
    started_at,
    middleware_trace,
    request,
    agent,
):
    """Before every model call, on every path (first call, retries, fallbacks,
    the grace call). ``request`` is ``{"method": "POST", "body": {...}}`` with
    no credentials. Return value: ignored."""


@hookspec
def post_api_request(
    task_id,
    turn_id,
    api_request_id,
    session_id,
    platform,
    model,
    provider,
    base_url,
    api_mode,
    api_call_count,
    api_duration,
    started_at,
    ended_at,
    finish_reason,
    message_count,
    response_model,
    response,
    usage,
    assistant_message,
    assistant_content_chars,
    assistant_tool_call_count,
    agent,
):
    """After every successful model call. ``usage`` is the normalized shape
    (see :func:`kernel.types.normalize_usage`). Return value: ignored."""


@hookspec
def api_request_error(
    task_id,
    turn_id,
    api_request_id,
    session_id,
    platform,
    model,
    provider,
    base_url,
    api_mode,
    api_call_count,
    api_duration,
    started_at,
    ended_at,
    status_code,
    retry_count,
    max_retries,
    retryable,
    reason,
    error,
    request,
    agent,
):
    """After every failed model call, before the fallback policy decides.
    ``error`` is ``{"type", "message"}``. Return value: ignored."""


@hookspec
def pre_tool_call(tool_name, args, task_id, session_id, tool_call_id, turn_id, api_request_id, middleware_trace, agent):
    """Before every tool execution (exactly once per call, on every path).

    ``args`` is the same dict object the tool will receive: changing it in
    place rewrites the call. Return:

    * ``{"action": "block", "message": str}``: the tool does not run; the model
      reads ``{"error": message}``;
    * ``{"action": "approve", "message": str, "rule_key": str}``: ask
      ``approve_tool_call``; nobody answering means no (fails closed);
    * ``{"action": "rewrite", "args": {...}}``: replace the arguments;
    * ``None``: no opinion.

    The first block wins. When an argument rewrite came by ``"rewrite"``
    action, the hook fires once more with the final arguments so guards judge
    what will run (guards should also be ``trylast`` to see in-place
    rewrites). A ``pre_tool_call`` implementation that raises blocks the call
    (fails closed).
    """


@hookspec
def post_tool_call(
    tool_name,
    args,
    result,
    task_id,
    session_id,
    tool_call_id,
    turn_id,
    api_request_id,
    duration_ms,
    status,
    error_type,
    error_message,
    middleware_trace,
    agent,
):
    """After every tool execution, also for blocked calls (``status="blocked"``).
    ``status`` is ``ok``, ``error`` or ``blocked``. Return value: ignored."""


@hookspec
def transform_tool_result(
    tool_name,
    args,
    result,
    task_id,
    session_id,
    tool_call_id,
    turn_id,
    api_request_id,
    duration_ms,
    status,
    error_type,
    error_message,
    agent,
):
    """After ``post_tool_call``. The first ``str`` returned replaces the result
    the model reads."""


@hookspec
def transform_terminal_output(command, output, returncode, task_id, env_type, agent):
    """After the ``terminal`` tool ran a command (``env_type`` is ``"local"``),
    before its result is built. The first ``str`` returned replaces the
    output the model reads."""


@hookspec
def on_pre_compress(session_id, messages, agent):
    """Before the context engine compresses the history (flush memories now).
    Return value: ignored."""


@hookspec
def subagent_start(
    parent_session_id, parent_turn_id, parent_subagent_id, child_session_id, child_subagent_id, child_role, child_goal, agent
):
    """A child agent was built (``delegate_task``). ``agent`` is the parent.
    Return value: ignored."""


@hookspec
def subagent_stop(
    parent_session_id, parent_turn_id, child_session_id, child_role, child_summary, child_status, duration_ms, agent
):
    """A child agent finished. ``agent`` is the parent. Return value: ignored."""


@hookspec
def system_prompt(agent, session_id, model, platform):
    """Contribute a part of the system prompt. Called once per session (the
    prompt is then cached so prompt caching holds). Return a ``str`` or
    ``None``; parts are joined with blank lines in hook order, after the
    configured identity."""


# ==========================================================================
# Callbacks (what a UI or a test probe implements)


@hookspec
def on_stream_delta(text, agent):
    """A piece of the answer streamed from the model. Return value: ignored."""


@hookspec
def on_reasoning(text, agent):
    """A piece of the model's reasoning (extended thinking). Return value: ignored."""


@hookspec
def on_thinking(active, agent):
    """The model started (``active=True``) or stopped waiting on the model.
    Return value: ignored."""


@hookspec
def on_status(status, detail, agent):
    """The loop changed state: ``thinking``, ``tools``, ``retrying``,
    ``fallback``, ``compressing``, ``budget``, ``interrupted``. ``detail`` is
    a short human sentence. Return value: ignored."""


@hookspec
def on_step(step, messages, agent):
    """One full iteration ended (model call plus its tool calls). ``messages``
    are the messages this step added. Return value: ignored."""


@hookspec
def on_tool_start(tool_name, args, tool_call_id, agent):
    """A tool is about to run (after ``pre_tool_call`` allowed it). Return value: ignored."""


@hookspec
def on_tool_progress(tool_name, tool_call_id, message, agent):
    """A running tool reported progress (``ToolContext.progress``). Return value: ignored."""


@hookspec
def on_tool_complete(tool_name, tool_call_id, result, duration_ms, status, agent):
    """A tool finished (``status`` ``ok``/``error``/``blocked``). Return value: ignored."""


@hookspec
def on_tool_call_generated(tool_name, tool_call_id, agent):
    """A tool call was parsed from the model's stream, before it runs.
    Return value: ignored."""


# ==========================================================================
# Questions


@hookspec(firstresult=True)
def clarify(question, choices, agent):
    """Ask the user a question (the ``clarify`` tool). Return the answer
    ``str``, or ``None`` if you cannot ask (the tool then tells the model
    nobody answered)."""


@hookspec(firstresult=True)
def approve_tool_call(tool_name, args, message, rule_key, agent):
    """Ask whether a tool call flagged by ``pre_tool_call`` may run. Return
    ``True`` or ``"once"`` (allow this call), ``"session"`` (allow calls flagged
    with this ``rule_key`` for the rest of the session), ``"always"`` (allow
    them from now on: the approval plugin saves the key in
    ``command_allowlist``), ``False`` or ``"deny"`` (deny); ``None`` means you
    cannot ask. If nobody answers the call is denied (fails closed)."""


# ==========================================================================
# Fallback policy (the kernel executes, plugins decide)


@hookspec(firstresult=True)
def choose_provider(primary, agent):
    """At the start of every turn: which ``ProviderConfig`` to start on.
    Return a config, or ``None`` for the primary. (The built-in fallback
    plugin returns a fallback entry while the primary cools down after a rate
    limit.)"""


@hookspec(firstresult=True)
def on_provider_error(failure, agent):
    """A model call failed with a :class:`kernel.types.ProviderError`.
    ``failure`` is a :class:`kernel.types.ProviderFailure`. Return one of
    ``Retry(delay)``, ``SwitchProvider(config)``, ``RefreshCredentials()``,
    ``Compress()``, ``GiveUp(message)``; ``None`` from every plugin means give up.
    """


# ==========================================================================
# Persistence


@hookspec
def append_messages(session_id, messages, agent):
    """New messages entered the history of ``session_id`` (the user message,
    then each step's assistant message and tool results, as they happen).
    Append them; never rewrite what was stored. Return value: ignored."""


@hookspec(firstresult=True)
def load_session(session_id, agent):
    """Return the stored messages of ``session_id`` (a list of message dicts),
    or ``None`` if you do not know it. The kernel repairs the history."""


@hookspec(firstresult=True)
def resolve_session(session_id, agent):
    """Return the full id of the stored session that ``session_id`` names
    (an exact id, or a unique prefix typed on the command line), or ``None``
    if it names none or several."""


@hookspec(firstresult=True)
def latest_session(platform, agent):
    """Return the id of the most recent session (for ``--continue``), or ``None``."""


@hookspec(firstresult=True)
def claim_session(session_id, agent):
    """Fires before a stored session is resumed, so that one process at a time
    writes it. Return ``None`` when this process may write ``session_id`` (a
    store takes a writer lock it holds until the session ends), or a one-line
    reason when another process is writing it; the kernel then refuses the
    turn with that reason instead of interleaving two histories."""
