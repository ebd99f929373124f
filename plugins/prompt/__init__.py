"""Built-in plugin prompt: the system prompt, assembled in named layers.

The layers: identity, tool guidance, the other plugins' parts such as the memory block,
the project's context files, platform hints, the date and model; see :mod:`plugins.prompt.layers`.

It wraps the kernel's ``system_prompt`` hook: the other plugins' parts come
in, one prompt goes out, so a distro that blocks this plugin gets just the
parts (and its ``agent.system_prompt``). Plugins add named layers of their
own with ``prompt_layer`` (the skills index is one). ``hermes prompt show [--json]``
prints what a session here would send, layer by layer.

Config: ``prompt.identity`` (replaces SOUL.md and the default identity; the
kernel's ``agent.system_prompt``, when set, is the identity instead),
``prompt.disabled_layers``, ``prompt.context_files`` (more files to read),
``prompt.max_layer_chars``; ``prefill_messages_file`` (hermes-agent's: messages put before the conversation in each
request, never stored).
"""

from __future__ import annotations

from kernel import hookimpl

LAYERS_KEY = "prompt.layers"  # agent.state: the layers of the last assembly, for `hermes prompt show`


@hookimpl
def register_hookspecs(add):
    from plugins.prompt import hookspecs

    add(hookspecs)


@hookimpl
def register_config(declare):
    declare("prompt.identity", str, "", "the agent's identity text; empty: SOUL.md in HERMES_HOME, else the default")
    declare("prompt.disabled_layers", list[str], [], "layers left out: identity, tools, plugins, context, platform, "
            "session")
    declare("timezone", str, "", "the user's IANA time zone, of the date the agent is told and of cron schedules "
            "(Europe/Berlin; empty: this machine's; HERMES_TIMEZONE wins)")
    declare("prompt.pass_session_id", bool, False, "the session layer names the session, for tools and skills "
            "that file things under it (chat's --pass-session-id, hermes-agent's)")
    declare("platform_hints", dict, {}, "per platform (cli, run, ...): {replace: TEXT} instead of the platform "
            "layer's words, or {append: TEXT} (or the text alone) after them (hermes-agent's)")
    declare("prompt.context_files", list[str], [], "more files for the context layer, relative to the working folder")
    declare("agent.environment_hint", str, "", "a line about this machine for the session layer (hermes-agent's: "
            "\"apt is not here, use nix\")")
    declare("agent.environment_probe", bool, True, "the session layer says when python3 on PATH is managed by the "
            "system (PEP 668), where pip install fails (hermes-agent's)")
    declare("agent.parallel_tool_call_guidance", bool, True, "the tools layer says independent calls may go in one "
            "step (hermes-agent's)")
    declare("agent.task_completion_guidance", bool, True, "the tools layer asks to see a task through and never to "
            "present a result no tool gave (hermes-agent's)")
    declare("agent.tool_use_enforcement", (str, bool, list), "auto", "the tools layer asks to call tools rather than "
            "describe them: auto (GPT, Codex, Gemini, Gemma, Grok models), true, false, or a list of model-name parts")
    declare("prompt.max_layer_chars", int, 20_000, "the most characters one layer may take (then it is cut, marked)", minimum=1)
    declare("context_file_max_chars", int, None, "the most characters the context files' layer may take (hermes-agent's; "
            "unset: prompt.max_layer_chars)", minimum=1)
    declare("prefill_messages_file", str, "", "a JSON file of messages, [{role, content}, ...] (a few-shot example), "
            "put after the system prompt in each request, never stored (hermes-agent's; relative to config.yaml's "
            "folder)")


@hookimpl(wrapper=True)
def system_prompt(agent, session_id, model, platform):
    from plugins.prompt.layers import assemble

    parts = yield
    added = [layer for layer in agent.hook.prompt_layer(agent=agent) if isinstance(layer, dict)]
    layers = assemble(agent, parts or [], added=added)
    agent.state[LAYERS_KEY] = layers
    return ["\n\n".join(layer.text for layer in layers)]


@hookimpl
def register_commands(cli, config):
    from plugins.prompt.command import prompt

    cli.add_command(prompt)


@hookimpl
def pre_api_request(call, agent):
    """hermes-agent's ``prefill_messages_file``: its messages (a few-shot example) go after the system prompt of each
    of the conversation's requests, never into the history or the store; a call beside it (a summary) goes without."""
    if call.aux_task or not agent.config.get("prefill_messages_file"):
        return
    from plugins.prompt.prefill import prefill

    if messages := prefill(agent.config):
        sent = call.request.messages
        head = 1 if sent and isinstance(sent[0], dict) and sent[0].get("role") == "system" else 0
        call.request.messages = [*sent[:head], *messages, *sent[head:]]  # a new list: a retry starts from the same


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """prefill_messages_file: can its messages be sent?"""
    if not agent.config.get("prefill_messages_file"):
        return None
    from plugins.doctor.hookspecs import OK, WARN, Check
    from plugins.prompt.prefill import problem_and_messages

    why, messages = problem_and_messages(agent.config)
    return [Check("prefill", WARN, f"prefill_messages_file: {why}; the requests go without it") if why else
            Check("prefill", OK, f"{len(messages)} messages before the conversation in each request")]
