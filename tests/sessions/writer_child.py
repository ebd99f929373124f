"""A child process for the multi-process tests (run as a script, not collected).

    python writer_child.py loop SESSION          append steps forever, print each index
    python writer_child.py many SESSION N        wait for "go" on stdin, append N steps
"""

from __future__ import annotations

import os
import sys


def step(i: int, pad: int) -> list:
    call_id = f"call_{i}"
    return [
        {"role": "assistant", "content": None, "reasoning": f"step {i}",
         "tool_calls": [{"id": call_id, "type": "function",
                         "function": {"name": "echo", "arguments": '{"i": %d}' % i}}]},
        {"role": "tool", "tool_call_id": call_id, "content": f"result {i} " + "z" * pad},
    ]


def main() -> None:
    from plugins.sessions.store import SessionStore

    mode, session = sys.argv[1], sys.argv[2]
    store = SessionStore.for_data_dir(os.environ["HERMES_HOME"])
    if mode == "loop":
        start = len(store.load(session) or [])
        if start == 0:
            store.append(session, [{"role": "user", "content": "go on forever"}])
            start = 1
        i = (start - 1) // 2
        while True:
            store.append(session, step(i, 20_000))
            print(i, flush=True)
            i += 1
    elif mode == "many":
        n = int(sys.argv[3])
        print("ready", flush=True)
        sys.stdin.readline()  # both writers start together, on a fresh database
        store.append(session, [{"role": "user", "content": f"writer {session}"}])
        for i in range(n):
            store.append(session, step(i, 2_000))
        print("done", len(store.load(session)), flush=True)


if __name__ == "__main__":
    main()
