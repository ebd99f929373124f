"""Built-in plugin profiles: hermes-agent's profiles, agents side by side on one machine.

A profile is a data folder of its own (config.yaml, .env, SOUL.md, sessions, memory, skills, cron jobs), in
``profiles/NAME`` of the default data folder. ``hermes -p NAME ...`` runs as it (the console script sets
``HERMES_HOME`` to its folder before anything reads one: :func:`hermes.cli.entry.choose_profile`); ``hermes profile
use NAME`` makes it the one every command runs as until ``hermes profile use default``. This plugin adds
``hermes profile list|show|create|use|rename|delete``."""

from __future__ import annotations

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    from plugins.profiles.cli import profile

    cli.add_command(profile)
