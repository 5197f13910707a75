"""A ledger written before hashes and event ids were kept in binary (schema 15) upgrades in place
when opened for writing, and everything made of it before still holds after: its export line by
line, a signed checkpoint, an inclusion proof, every chain; and its next thought links on."""

import json
from pathlib import Path

import pytest

from tests.support.backends import Backend, backend_for
from tests.support.head_rows import take_back_heads
from tests.support.upgrade_ledger import proved_ledger, step
from thoughtledger import open_ledger
from thoughtledger.api import Ledger, verify_bundle
from thoughtledger.api.transfer.jsonl import to_line
from thoughtledger.ledger.checkpoint import Signer

pytestmark = pytest.mark.anyio

TEXT_FORM_SQLITE = [
    *take_back_heads("sqlite"),
    # Step 15's text: lowercase hex hashes, canonical UUID text (hex() is uppercase).
    "UPDATE tl_events SET prev_hash = lower(hex(prev_hash)), hash = lower(hex(hash)), "
    "event_id = lower(substr(hex(event_id), 1, 8) || '-' || substr(hex(event_id), 9, 4) || '-' "
    "|| substr(hex(event_id), 13, 4) || '-' || substr(hex(event_id), 17, 4) || '-' "
    "|| substr(hex(event_id), 21)) WHERE typeof(hash) = 'blob'",
    "DELETE FROM tl_schema WHERE version > 15",
]
TEXT_FORM_POSTGRES = [
    *take_back_heads("postgres"),
    "ALTER TABLE tl_events ALTER COLUMN event_id TYPE varchar(36) USING event_id::text, "
    "ALTER COLUMN prev_hash TYPE varchar(64) USING encode(prev_hash, 'hex'), "
    "ALTER COLUMN hash TYPE varchar(64) USING encode(hash, 'hex')",
    "DELETE FROM tl_schema WHERE version > 15",
]
STORED_FORMS = {
    "sqlite": "SELECT DISTINCT typeof(event_id) || ' ' || typeof(hash) FROM tl_events",
    "postgres": (
        "SELECT string_agg(data_type, ' ' ORDER BY column_name) FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = 'tl_events' "
        "AND column_name IN ('event_id', 'hash', 'prev_hash')"
    ),
}
EVENTS = 6
"""Two sessions: a start and three thoughts, a start and one."""
BINARY = {"sqlite": {"blob blob"}, "postgres": {"uuid bytea bytea"}}


async def exported(ledger: Ledger) -> list[str]:
    return [to_line(record) async for part in ledger.transfer.export() for record in part]


async def stored_forms(backend: Backend) -> set[str]:
    """How the log's rows hold their event ids and hashes (SQLite: per row; PostgreSQL: types)."""
    _names, rows = await backend.select(STORED_FORMS[backend.name])
    return {row[0] for row in rows}


@pytest.mark.parametrize("name", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_schema_15_ledger_keeps_its_exports_checkpoints_and_proofs_through_the_upgrade(
    name: str, tmp_path: Path
) -> None:
    signer = Signer.generate("log")
    async with backend_for(name, tmp_path) as backend:
        assert backend.url is not None
        async with open_ledger(backend.url) as ledger:
            signed = await proved_ledger(ledger, signer, events=EVENTS, fork=False)
        first, note, bundle = signed.first, signed.note, signed.bundle
        # The ledger as schema 15 kept it: the checkpoint and the proof are of it.
        for statement in TEXT_FORM_SQLITE if name == "sqlite" else TEXT_FORM_POSTGRES:
            await backend.execute(statement)
        assert BINARY[name].isdisjoint(await stored_forms(backend))
        async with open_ledger(backend.url, read_only=True) as ledger:
            before = await exported(ledger)
            assert (await ledger.proofs.verify_checkpoint(note, signer.verifier())).ok
        reports: list[tuple[str, int, int]] = []
        progress = lambda *report: reports.append(report)  # noqa: E731
        async with open_ledger(backend.url, progress=progress) as ledger:  # upgraded
            assert await stored_forms(backend) == BINARY[name]
            after = await exported(ledger)
            held = await ledger.proofs.verify_checkpoint(note, signer.verifier())
            proved = json.loads(json.dumps(await ledger.proofs.prove(first, 2, note)))
            chains = await ledger.verify_all()
            await ledger.think(first, step(4))
            later = await ledger.verify(first)
    assert after == before
    if name == "sqlite":  # the rows are written again in batches, as the upgrade says
        binary = [report for report in reports if report[0].startswith("Storing hashes")]
        assert binary[0][1] == 0
        assert binary[-1][1] == binary[-1][2] == len(before)
    assert held.ok
    assert proved == bundle
    assert [chain.ok for chain in chains] == [True, True]
    assert later.ok
    # The proof made before the step still verifies with the public key alone.
    checkpoint, columns = verify_bundle(bundle, signer.verifier())
    assert checkpoint.size == len(before)
    assert [line for line in before if json.loads(line)["hash"] == columns["hash"]]
