"""Built-in plugin terminal-ui: the terminal front end of ``hermes run`` and ``hermes chat``.

* ``terminal_front_end``: the :class:`~plugins.terminal.console.Console`
  that streams the answer, shows tool progress and asks for approvals, as the
  callbacks of the command line's agent;
* ``register_commands``: ``hermes chat``, the interactive conversation with
  the plugins' slash commands;
* ``register_hookspecs``: ``on_slash_command``, which chat fires before a
  command runs, and ``queue_user_message``, a plugin's next message for chat to send;
* ``register_config``: ``display.show_reasoning`` (chat's ``/reasoning`` turns it on and off), ``personalities``
  (chat's ``/personality``), ``display.busy_input_mode`` (chat's ``/busy``);
* ``post_tool_call``: a line typed in chat's ``steer`` mode enters the history after the tool call.

A distro can block it (``hermes run`` then prints only the answer, and no
approval can be asked, so flagged commands are refused) or replace it with a
plugin answering ``terminal_front_end`` first.
"""

from __future__ import annotations

from kernel import hookimpl
from kernel.keys import Key

SHOW_REASONING = Key("display.show_reasoning", bool, False,
                     "show the model's reasoning, dimmed, where it streams it (chat: /reasoning)")


STEER = "terminal-ui.steer"  # agent.state: the lines chat's steer mode has for the model (plugins.terminal.busy)
PERSONALITIES = "personalities"  # hermes-agent's: name -> a prompt, or {system_prompt, tone, style, description}


@hookimpl
def terminal_front_end(quiet, config):
    from plugins.terminal.console import Console

    return Console(quiet=quiet, show_reasoning=bool(config.get(SHOW_REASONING.name)),
                   markdown=config.get("display.final_response_markdown"))


@hookimpl
def register_config(declare):
    declare(SHOW_REASONING)
    declare("display.reasoning_full", bool, False, "reasoning that comes whole (not streamed) is shown in full, not "
            "its first 10 lines; chat's /reasoning full|clamp (hermes-agent's)")
    declare("quick_commands", dict, {}, "chat's own commands (hermes-agent's): {NAME: {type: exec, command: SHELL, "
            "description}} runs a command and shows its output, {NAME: {type: alias, target: /other}} another command")
    declare(PERSONALITIES, dict, {}, "chat's /personality NAME: {NAME: PROMPT} (hermes-agent's; the prompt is the "
            "identity, saved as agent.system_prompt)")
    declare("agent.personalities", dict, {}, f"hermes-agent's older place of {PERSONALITIES}")
    declare("display.resume_display", str, "full", "what a resumed chat shows first: full (the last exchanges) or "
            "minimal (its title alone)", choices=("full", "minimal"))
    declare("display.resume_exchanges", int, 2, "the exchanges a resumed chat shows", minimum=0)
    declare("display.resume_max_user_chars", int, 200, "characters of each of your messages it shows", minimum=10)
    declare("display.resume_max_assistant_chars", int, 200, "characters of each answer it shows (the last one: "
            "whole)", minimum=10)
    declare("display.resume_max_assistant_lines", int, 3, "lines of each answer it shows (the last one: whole)",
            minimum=1)
    declare("display.resume_skip_tool_only", bool, True, "it leaves out the answers that only called tools (false: "
            "shown as [N tool calls: NAMES])")
    declare("display.inline_diffs", bool, True, "chat and run show the change under a patch or write_file call's "
            "line, at most 40 lines of it (hermes-agent's)")
    declare("display.tool_progress", (str, bool), "all", "the tool calls chat and run show: all, new (a tool "
            "called again in a row gets no line), verbose (each call's arguments whole, and its result) or off; chat's "
            "/verbose goes round them (hermes-agent's)", choices=("off", "new", "all", "verbose", False, True))
    declare("display.tool_preview_length", int, 40, "characters of each argument a tool call's line shows (0: all, "
            "hermes-agent's default)", minimum=0)
    declare("display.final_response_markdown", str, "render", "how a terminal shows the answer's Markdown: render "
            "(bold, code in colour, markers gone), strip (markers gone) or raw; piped, it stays as written",
            choices=("render", "strip", "raw"))
    declare("auxiliary.title_generation", dict, {}, "chat's title from its first exchange, by a model call beside "
            "it: enabled (true), language (the user's), and the auxiliary blocks' model, provider, base_url ... "
            "(hermes-agent's)")
    declare("goals.max_turns", int, 20, "the steps chat's /goal asks for before the goal pauses (hermes-agent's)",
            minimum=0)
    declare("auxiliary.goal_judge", dict, {}, "the model that judges whether /goal's goal is done: model, provider, "
            "base_url ... as the auxiliary blocks (hermes-agent's; unset: the chat's)")
    declare("display.timestamps", bool, False, "chat's prompt says the time each message went (and so when the "
            "answer before it ended); chat's /timestamps (hermes-agent's)")
    declare("display.timestamp_format", str, "%H:%M", "how display.timestamps shows the time (strftime's codes)")
    declare("display.user_message_preview.first_lines", int, 2, "a long message chat sent stays on the screen as "
            "its first lines, a count of the rest ... (hermes-agent's)", minimum=1)
    declare("display.user_message_preview.last_lines", int, 2, "... and its last lines", minimum=0)
    declare("agent.clarify_timeout", (int, float), 3600, "seconds chat and run wait for the answer to the model's "
            "clarifying question; then it decides itself (hermes-agent's; 0: no limit)", minimum=0)
    declare("display.turn_completion_explainer", bool, True, "chat says why a turn ended without an answer (an "
            "empty one, the budget spent; hermes-agent's)")
    declare("paste_collapse_threshold", int, 5, "a paste into chat of this many line breaks or more stands in the "
            "line as [Pasted text #N: L lines -> FILE] (kept in the data folder's pastes/), sent whole (hermes-agent's; "
            "0: never)", minimum=0)
    declare("paste_collapse_char_threshold", int, 2000, "... or of this many characters or more (0: never)", minimum=0)
    declare("display.bell_on_complete", bool, False, "chat rings the terminal's bell when an answer is done")
    declare("display.busy_input_mode", str, "interrupt", "what a line typed while chat's turn runs does: interrupt "
            "(the turn stops; the line is the next message), queue (it is sent when the turn ends) or steer (the model "
            "reads it after its current tool call); chat's /busy", choices=("interrupt", "queue", "steer"))


@hookimpl
def post_tool_call(agent):
    """chat's ``steer`` mode: what the user typed during the call enters the history before the next model call."""
    if agent.state.get(STEER):
        from plugins.terminal.busy import steer

        steer(agent)


@hookimpl
def register_commands(cli, config):
    from plugins.terminal.chat import chat

    cli.add_command(chat)


@hookimpl
def register_hookspecs(add):
    from plugins.terminal import hookspecs

    add(hookspecs)
