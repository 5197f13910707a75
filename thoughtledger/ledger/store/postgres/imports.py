"""Imports into PostgreSQL: checked records written in one transaction, sessions locked.

Positions are numbered from the import's transaction id, as an append's are
(:mod:`thoughtledger.ledger.store.postgres.positions`), and each session goes on from its last
event: the log's (session, version) key makes an import racing an append or another import of a
session lose cleanly.
"""

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from thoughtledger.ledger.chain import GENESIS_HASH
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError, StoreError, StoreUnavailableError
from thoughtledger.ledger.store.heads_sql import last_event_select
from thoughtledger.ledger.store.imports import plan_import
from thoughtledger.ledger.store.postgres.positions import POSITION_SHIFT
from thoughtledger.ledger.store.postgres.search_follow import IMPORTED
from thoughtledger.ledger.store.postgres.setup import translate as _translate
from thoughtledger.ledger.store.rows import stored_row
from thoughtledger.ledger.store.schema import events as EVENTS
from thoughtledger.ledger.store.stored_forms import hash_text


async def import_streams(
    engine: AsyncEngine, where: str, streams: dict[str, list[RecordedEvent]]
) -> int:
    """Write checked records in one transaction (see :meth:`.Importing.import_records`).

    Returns:
        How many events were written.

    Raises:
        InvalidInputError: A stored session differs, or an event id is recorded elsewhere.
        StoreError: The backend failed, or another writer of a session raced the import;
            nothing was written.
    """
    try:
        async with engine.begin() as connection:
            return await _import_in(connection, streams)
    except sa.exc.IntegrityError as exc:
        constraint = getattr(exc.orig, "constraint_name", None) or str(exc.orig)
        if "tl_events_event_id_key" in constraint:
            raise InvalidInputError(
                "an imported event id is already recorded for another event"
            ) from exc
        raise StoreError(
            f"import into {where} raced another writer of the same session; nothing "
            "was imported, try again"
        ) from exc
    except sa.exc.DBAPIError as exc:
        raise _translate(exc, where) from exc
    except OSError as exc:  # TimeoutError included
        raise StoreUnavailableError(f"cannot reach {where}: {exc}") from exc


async def _import_in(connection: AsyncConnection, streams: dict[str, list[RecordedEvent]]) -> int:
    # One transaction: its id numbers the positions, as an append's does (see the docstring).
    xid = (
        await connection.execute(sa.text("SELECT pg_current_xact_id()::text::bigint"))
    ).scalar_one()
    written = 0
    for session_id, records in streams.items():
        head = (await connection.execute(last_event_select(session_id))).first()
        version, head_hash = (head.version, hash_text(head.hash)) if head else (0, GENESIS_HASH)
        plan = plan_import(session_id, records, version, head_hash)
        if plan.stored_from:
            window = await connection.execute(
                sa.select(EVENTS)
                .where(
                    EVENTS.c.session_id == session_id,
                    EVENTS.c.version.between(plan.stored_from, plan.stored_to),
                )
                .order_by(EVENTS.c.version)
            )
            plan.check([stored_row(row) for row in window])
        if not plan.new:
            continue
        await connection.execute(
            sa.insert(EVENTS),
            [
                {
                    "position": (xid << POSITION_SHIFT) + written + offset,
                    "session_id": session_id,
                    "version": r.version,
                    "event_id": r.event_id,
                    "recorded_at": r.recorded_at,
                    "schema_version": r.schema_version,
                    "event_type": r.event_type,
                    "payload": r.payload,
                    "prev_hash": bytes.fromhex(r.prev_hash),
                    "hash": bytes.fromhex(r.hash),
                }
                for offset, r in enumerate(plan.new, start=1)
            ],
        )
        written += len(plan.new)
    if written:
        # Indexed here rather than by the catch-up after it: a search right after a large
        # import would otherwise match every imported thought from the log itself.
        await connection.execute(
            sa.text(IMPORTED),
            {"low": xid << POSITION_SHIFT, "high": (xid + 1) << POSITION_SHIFT},
        )
    return written


__all__ = ["import_streams"]
