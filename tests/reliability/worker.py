"""A child process that writes to a ledger as fast as it can and reports every acknowledged write.

Usage: python -m tests.reliability.worker URL MODE NAME [TASKS] [COUNT]

MODE ``batches``: append batches of three events to session NAME through the store, printing
``ack <version>`` after each acknowledged batch (so a partial batch would show as a version count
that is not a multiple of three).
MODE ``think``: run TASKS tasks, each recording COUNT thoughts through the facade into sessions
shared with other processes (``shared-0`` .. ``shared-3``) and its own; print
``ack <session> <text>`` for each acknowledged thought, then ``done``.
"""

import asyncio
import sys

from thoughtledger.api.bootstrap import open_ledger, open_store
from thoughtledger.ledger.events import ThoughtRecorded


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def batches(url: str, name: str) -> None:
    store = await open_store(url)
    head = await store.stream_head(name)
    version = head.version if head else 0
    n = version
    while True:
        events = [
            ThoughtRecorded(
                thought=f"{name} thought {n + i}",
                thought_number=n + i,
                total_thoughts=n + i,
                next_thought_needed=True,
            )
            for i in (1, 2, 3)
        ]
        recorded = await store.append(name, events, expected_version=version)
        version = recorded[-1].version
        n += 3
        _say(f"ack {version}")


async def think(url: str, name: str, tasks: int, count: int) -> None:
    async with open_ledger(url) as ledger:

        async def task(t: int) -> None:
            for i in range(count):
                session = f"shared-{(t + i) % 4}" if i % 2 == 0 else f"{name}-own-{t}"
                text = f"{name}/{t}/{i}"
                outcome = await ledger.think(
                    session,
                    {
                        "thought": text,
                        "thought_number": i + 1,
                        "total_thoughts": count,
                        "next_thought_needed": True,
                    },
                )
                _say(f"ack {outcome.session_id} {text}")

        await asyncio.gather(*(task(t) for t in range(tasks)))
    _say("done")


def main(argv: list[str]) -> None:
    url, mode, name = argv[:3]
    if mode == "batches":
        asyncio.run(batches(url, name))
    else:
        asyncio.run(think(url, name, int(argv[3]), int(argv[4])))


if __name__ == "__main__":
    main(sys.argv[1:])
