"""Reads on a hot standby through the library: where reads and writes go, read-your-writes."""

from typing import Any

import anyio
import pytest

from tests.support import pg_cluster
from thoughtledger import InvalidInputError, open_ledger

pytestmark = pytest.mark.anyio


def thought(number: int) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thought_number": number,
        "total_thoughts": number,
        "next_thought_needed": True,
    }


def named(cluster: pg_cluster.Cluster, name: str) -> str:
    """The cluster's URL with its connections named ``name`` in ``pg_stat_activity``."""
    return f"{cluster.url}?application_name={name}"


def reads(cluster: pg_cluster.Cluster, name: str) -> list[str]:
    """The reads of the log ``name``'s connections ran on ``cluster``.

    The search index's catch-ups are not among them: they write what they read, so they run on
    the primary (each of their statements names the index's tables). Nor are the appends, which
    look up the event they go on from in their own statement, and the read of that event before
    a session's first append here (a session's head is its last event): a write's, on the
    primary.
    """
    return [
        line
        for line in pg_cluster.statements(cluster, name)
        if "FROM tl_events" in line
        and "tl_search" not in line
        and "INSERT INTO tl_events" not in line
        and "ORDER BY tl_events.version DESC" not in line
    ]


async def test_each_read_after_a_write_sees_it_and_is_answered_by_the_standby(
    replicated: pg_cluster.Pair,
) -> None:
    async with open_ledger(replicated.primary.url):
        pass  # creates the ledger's tables on the primary
    pg_cluster.wait_replayed(replicated)
    primary, standby = named(replicated.primary, "rw"), named(replicated.standby, "rw")
    async with open_ledger(primary, read_url=standby) as ledger:
        session_id = None
        for number in range(1, 31):
            outcome = await ledger.think(session_id, thought(number))
            session_id = outcome.session_id
            events = await ledger.events(session_id)
            assert len(events) == number + 1  # the session's start, then the thoughts
            assert (await ledger.verify(session_id)).ok
        assert session_id is not None
        listed = await ledger.list_sessions()
        assert [state.session_id for state in listed] == [session_id]
    # The reads ran on the standby; the primary only took appends and WAL positions.
    assert len(reads(replicated.standby, "rw")) >= 60
    assert reads(replicated.primary, "rw") == []
    written = pg_cluster.statements(replicated.primary, "rw")
    assert len([line for line in written if "INSERT INTO tl_events" in line]) == 30
    async with open_ledger(replicated.primary.url, read_only=True) as on_primary:
        assert len(await on_primary.events(session_id)) == 31


async def test_a_write_is_read_back_while_the_standby_has_stopped_replaying(
    replicated: pg_cluster.Pair,
) -> None:
    async with open_ledger(replicated.primary.url) as ledger:
        first = await ledger.think(None, thought(1))
    pg_cluster.wait_replayed(replicated)
    assert pg_cluster.value(replicated.standby, "SELECT pg_wal_replay_pause()") == ""
    async with open_ledger(replicated.primary.url, read_url=replicated.standby.url) as ledger:
        listed = await ledger.list_sessions()
        second = await ledger.think(None, thought(1))
        # The standby cannot have it (replay is paused): the read waits, then asks the primary.
        after = await ledger.list_sessions()
        assert len(await ledger.events(second.session_id)) == 2
    assert {state.session_id for state in after} - {s.session_id for s in listed} == {
        second.session_id
    }
    assert first.session_id in {state.session_id for state in after}
    pg_cluster.value(replicated.standby, "SELECT pg_wal_replay_resume()")


async def test_a_read_url_needs_a_postgresql_ledger(tmp_path: Any) -> None:
    with pytest.raises(InvalidInputError, match="needs a PostgreSQL ledger"):
        async with open_ledger(
            f"sqlite:///{tmp_path / 'l.db'}", read_url="postgresql://u@127.0.0.1/x"
        ):
            pass
    assert not (tmp_path / "l.db").exists()


async def test_a_subscription_on_the_standby_hears_another_writers_appends(
    replicated: pg_cluster.Pair,
) -> None:
    async with open_ledger(replicated.primary.url):
        pass
    pg_cluster.wait_replayed(replicated)
    primary, standby = named(replicated.primary, "sub"), named(replicated.standby, "sub")
    async with (
        open_ledger(primary, read_url=standby, read_only=True) as reader,
        open_ledger(replicated.primary.url) as writer,
    ):
        heard: list[int] = []
        moved = anyio.Event()

        async def follow() -> None:
            nonlocal moved
            async for event in reader.subscribe():
                heard.append(event.position)
                moved.set()

        async with anyio.create_task_group() as group:
            group.start_soon(follow)
            session_id = None
            for number in range(1, 6):
                moved = anyio.Event()
                outcome = await writer.think(session_id, thought(number))
                session_id = outcome.session_id
                stored = [event.position for event in await writer.events(session_id)]
                with anyio.fail_after(10):
                    while heard != stored:
                        await moved.wait()
                        moved = anyio.Event()
            group.cancel_scope.cancel()
    # Woken by the standby's replay, not by NOTIFY: the reader never listened on the primary.
    assert not any("LISTEN" in line for line in pg_cluster.statements(replicated.primary, "sub"))
    assert reads(replicated.standby, "sub")


async def test_the_standby_is_read_in_the_ledgers_schema_and_no_other(
    replicated: pg_cluster.Pair,
) -> None:
    ledger_url = f"{replicated.primary.url}?schema=agents"
    async with open_ledger(ledger_url) as writer:
        outcome = await writer.think(None, thought(1))
    pg_cluster.wait_replayed(replicated)
    async with open_ledger(ledger_url, read_url=replicated.standby.url, read_only=True) as reader:
        assert [state.session_id for state in await reader.list_sessions()] == [outcome.session_id]
    other = f"{replicated.standby.url}?schema=elsewhere"
    with pytest.raises(InvalidInputError, match="another schema than the ledger's"):
        async with open_ledger(ledger_url, read_url=other, read_only=True):
            pass


async def test_concurrent_writers_through_one_ledger_each_read_their_own_write(
    replicated: pg_cluster.Pair,
) -> None:
    async with open_ledger(replicated.primary.url):
        pass
    pg_cluster.wait_replayed(replicated)
    seen: dict[int, int] = {}
    async with open_ledger(replicated.primary.url, read_url=replicated.standby.url) as ledger:

        async def agent(index: int) -> None:
            session_id = None
            for number in range(1, 6):
                session_id = (await ledger.think(session_id, thought(number))).session_id
                seen[index * 10 + number] = len(await ledger.events(session_id))

        async with anyio.create_task_group() as group:
            for index in range(16):
                group.start_soon(agent, index)
    assert seen == {
        index * 10 + number: number + 1 for index in range(16) for number in range(1, 6)
    }


async def test_a_thought_on_a_session_the_standby_has_not_caught_up_with_lands_after_its_head(
    replicated: pg_cluster.Pair,
) -> None:
    async with open_ledger(replicated.primary.url) as other:
        session_id = (await other.think(None, thought(1))).session_id
        await other.think(session_id, thought(2))
        pg_cluster.wait_replayed(replicated)
        pg_cluster.value(replicated.standby, "SELECT pg_wal_replay_pause()")
        await other.think(session_id, thought(3))  # the standby never sees this one
    async with open_ledger(replicated.primary.url, read_url=replicated.standby.url) as ledger:
        # Decided on the standby's stale state, refused by the primary, then retried on what
        # the primary holds (the standby does not catch up within the wait).
        await ledger.think(session_id, thought(4))
        events = await ledger.events(session_id)
    assert [event.version for event in events] == [1, 2, 3, 4, 5]
    assert [getattr(event.event, "thought_number", None) for event in events] == [None, 1, 2, 3, 4]
