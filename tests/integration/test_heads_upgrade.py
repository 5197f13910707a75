"""A ledger written while every session had a head row beside the log (schema 18) upgrades in
place when opened for writing, saying how far it is, and nothing read of it changes: its export,
a signed checkpoint, an inclusion proof, its sessions' heads and listings, every chain; and a
tail cut before the upgrade is still reported by ``verify`` after it."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.backends import backend_for
from tests.support.head_rows import take_back_heads
from tests.support.upgrade_ledger import proved_ledger, step
from thoughtledger import open_ledger
from thoughtledger.api import Ledger, verify_bundle
from thoughtledger.api.transfer.jsonl import to_line
from thoughtledger.ledger.checkpoint import Signer
from thoughtledger.ledger.store.schema import DATABASE_SCHEMA_VERSION

pytestmark = pytest.mark.anyio

CHECKED = "Checking each session's head against its log"
EVENTS = 7
"""Before the checkpoint: a start and three thoughts, a start and one, a fork's start."""


async def seen(ledger: Ledger) -> dict[str, Any]:
    """What a user reads of the ledger: its export, heads, listings, forks and chains."""
    heads = await ledger.all_heads()
    page = await ledger.recent_sessions(limit=2)
    rest = await ledger.recent_sessions(limit=10, cursor=page.next_cursor)
    return {
        "export": [to_line(record) async for part in ledger.transfer.export() for record in part],
        "heads": heads,
        "recent": [state.session_id for state in [*page.sessions, *rest.sessions]],
        "forks": {head.session_id: await ledger.forks(head.session_id) for head in heads},
        "chains": [
            (report.session_id, report.ok, report.checked, report.reason)
            for report in await ledger.verify_all()
        ],
        "alone": [(head.session_id, (await ledger.verify(head.session_id)).ok) for head in heads],
    }


@pytest.mark.parametrize("name", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_schema_18_ledger_reads_the_same_through_the_upgrade_and_keeps_a_cut_tail_known(
    name: str, tmp_path: Path
) -> None:
    signer = Signer.generate("log")
    async with backend_for(name, tmp_path) as backend:
        assert backend.url is not None
        async with open_ledger(backend.url) as ledger:
            signed = await proved_ledger(ledger, signer, events=EVENTS, fork=True)
            first, other, fork = signed.first, signed.other, signed.fork
            note, bundle = signed.note, signed.bundle
            # Recorded after the checkpoint, then its tail cut (its head row left as it was).
            cut = (await ledger.think(None, step(1, 3))).session_id
            await ledger.think(cut, step(2, 3))
        # The ledger as schema 18 kept it: a head row per session, moved with every append.
        for statement in take_back_heads(name):
            await backend.execute(statement)
        await backend.execute("DELETE FROM tl_events WHERE session_id = :s AND version = 3", s=cut)
        async with open_ledger(backend.url, read_only=True) as ledger:
            before = await seen(ledger)
        reports: list[tuple[str, int, int]] = []
        progress = lambda *report: reports.append(report)  # noqa: E731
        async with open_ledger(backend.url, progress=progress) as ledger:  # upgraded
            after = await seen(ledger)
            held = await ledger.proofs.verify_checkpoint(note, signer.verifier())
            proved = json.loads(json.dumps(await ledger.proofs.prove(first, 2, note)))
            await ledger.think(other, step(2))
            later = await ledger.verify(other)
            broken = await ledger.verify(cut)
        _names, kept = await backend.select("SELECT session_id, version FROM tl_sessions")
        _names, versions = await backend.select("SELECT max(version) FROM tl_schema")
    assert after == before
    assert {session for session, ok in after["alone"] if not ok} == {cut}
    assert {session for session, *_ in after["chains"]} == {first, other, fork, cut}
    assert [head.session_id for head in after["forks"][first]] == [fork]
    assert after["recent"][0] == cut
    checked = [report for report in reports if report[0] == CHECKED]
    assert checked[0][1] == 0
    assert checked[-1][1] == checked[-1][2] == len(before["export"])
    assert held.ok
    assert proved == bundle
    assert later.ok
    assert not broken.ok
    assert broken.reason == "session head records version 3 but the log ends at version 2"
    # Only the head row that disagreed with the log is left; nothing else is written per append.
    assert kept == [(cut, 3)]
    assert versions == [(DATABASE_SCHEMA_VERSION,)]
    checkpoint, columns = verify_bundle(bundle, signer.verifier())
    assert checkpoint.size == EVENTS
    assert [line for line in before["export"] if json.loads(line)["hash"] == columns["hash"]]
