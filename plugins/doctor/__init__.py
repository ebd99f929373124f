"""Built-in plugin doctor: ``hermes doctor``, whether this setup can work, a line per part.

The command checks config.yaml (as ``hermes config check``) and the plugins that failed to load, then asks every
plugin through ``doctor_checks`` (:mod:`plugins.doctor.hookspecs`): the model (this plugin: its provider built and,
unless ``--offline``, one short answer), the fallback, auxiliary and subagent models, the session store, the
sandbox. A plugin of yours answers for its own part (a database it needs, a key)."""

from kernel import hookimpl


@hookimpl
def register_hookspecs(add):
    from plugins.doctor import hookspecs

    add(hookspecs)


@hookimpl
def register_commands(cli):
    from plugins.doctor.command import doctor

    cli.add_command(doctor, repairs_config=True)  # a config.yaml with a wrong value is what it reports first


@hookimpl(tryfirst=True)  # the conversation's model before the others
def doctor_checks(agent, online):
    from plugins.auxiliary import probe

    return [probe(agent, agent.primary, "model", online)]
