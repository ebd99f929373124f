"""``hermes serve`` with durable turns (``durable.engine: dbos`` on a real PostgreSQL): each request's turn is a
DBOS workflow, checkpointed step by step, also when requests come at once (each on its own thread)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from plugins_providers.testserver import reply


def test_each_served_turn_is_a_durable_workflow(serve, wire_server, postgres_url):
    import psycopg

    served = serve(config={"durable": {"engine": "dbos", "database_url": postgres_url}})
    wire_server.push(reply("one"), reply("two"), reply("three"))

    def ask(text):
        return served.client().chat.completions.create(model="hermes-agent",
                                                       messages=[{"role": "user", "content": text}])

    with ThreadPoolExecutor(3) as pool:
        answers = sorted(a.choices[0].message.content for a in pool.map(ask, ["a", "b", "c"]))
    assert answers == ["one", "three", "two"]
    with psycopg.connect(postgres_url) as db:
        turns = db.execute("select status from dbos.workflow_status where name = 'hermes.turn'").fetchall()
        steps = db.execute("select function_name, count(*) from dbos.operation_outputs group by 1").fetchall()
    assert [status for (status,) in turns] == ["SUCCESS"] * 3
    assert dict(steps) == {"hermes.model": 3}  # one model call each; store writes are not checkpointed
