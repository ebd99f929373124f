"""Built-in plugin profiles: hermes-agent's profiles, agents side by side on one machine.

A profile is a data folder of its own (config.yaml, .env, SOUL.md, sessions, memory, skills, cron jobs), in
``profiles/NAME`` of the default data folder. ``hermes -p NAME ...`` runs as it (the console script sets
``HERMES_HOME`` to its folder before anything reads one: :func:`hermes.cli.entry.choose_profile`); ``hermes profile
use NAME`` makes it the one every command runs as until ``hermes profile use default``. This plugin adds
``hermes profile list|show|create|alias|use|rename|export|import|delete``, and ``/profile`` in a chat."""

from __future__ import annotations

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    from plugins.profiles.cli import profile

    cli.add_command(profile)


@hookimpl(optionalhook=True)  # the commands plugin's hook
def register_slash_commands(register):
    register("profile", _slash_profile, "the profile this chat runs as, and its folder (hermes-agent's)")


def _slash_profile(raw_args: str, agent) -> str:
    from hermes.cli.entry import profile_name

    return (f"profile {profile_name()}: {agent.config.data_dir}; `hermes -p NAME chat` chats as another "
            "(`hermes profile list`)")


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """The profile this runs as, beside the others; the one `profile use` kept, when it is gone."""
    from hermes.cli.entry import profile_name
    from plugins.doctor.hookspecs import OK, WARN, Check
    from plugins.profiles.cli import kept, names

    others = [name for name in names() if name != profile_name()]
    said = f"{profile_name()} ({agent.config.data_dir})" + (f"; the others: {', '.join(others)}" if others else "")
    if kept() not in names():
        return [Check("profile", WARN, f"{said}; the active profile '{kept()}' (`profile use`) is gone: "
                                       "`hermes profile use default` forgets it")]
    return [Check("profile", OK, said)]
