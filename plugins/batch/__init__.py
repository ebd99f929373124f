"""``hermes batch``: many prompts, each its own run, written as trajectories.

It runs the prompts of a JSON-lines file, each as an independent run (its own agent, session and budget), on
a pool of local worker processes, and writes their trajectories in hermes-agent's batch-runner format
(:mod:`plugins.batch.trajectory`). Rerunning the same command skips what is written.
"""

from __future__ import annotations

from kernel import hookimpl


@hookimpl
def register_config(declare):
    declare("batch.concurrency", int, None, "prompts of a batch on the DBOS queue running at once on all workers "
                                            "together (none: each worker's --workers)", minimum=1)


@hookimpl
def register_commands(cli):
    from plugins.batch.cli import batch

    cli.add_command(batch)
