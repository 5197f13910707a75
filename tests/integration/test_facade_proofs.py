"""Checkpoints and proofs through the Python API, on every backend."""

import json

import pytest

from tests.support.backends import settled
from thoughtledger import Ledger
from thoughtledger.api.proofs import verify_bundle
from thoughtledger.ledger.checkpoint import Checkpoint, Signer
from thoughtledger.ledger.errors import IntegrityError, InvalidInputError
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio


async def think(ledger: Ledger, count: int) -> str:
    session = await ledger.new_session()
    for number in range(1, count + 1):
        await session.process_sequential_thinking(
            thought=f"thought {number}",
            thought_number=number,
            total_thoughts=count,
            next_thought_needed=number < count,
        )
    return session.id


async def test_a_thought_is_proved_in_a_checkpoint_and_the_log_only_grows(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    signer = Signer.generate("ledger.example/log")
    verifier = signer.verifier()
    first = await think(ledger, 70)
    await settled(store, 71)
    old = await ledger.proofs.checkpoint(signer)
    report = await ledger.proofs.verify_checkpoint(old, verifier)
    assert (report.ok, report.held, report.checkpoint.size) == (True, 71, 71)

    second = await think(ledger, 5)
    await settled(store, 77)
    new = await ledger.proofs.checkpoint(signer)
    assert Checkpoint.open(new, verifier).size == 77
    proof = await ledger.proofs.consistency(old, new, verifier)
    assert proof
    with pytest.raises(InvalidInputError, match="larger than the newer"):
        await ledger.proofs.consistency(new, old, verifier)

    for session_id, thought in ((first, 1), (first, 70), (second, 3)):
        bundle = json.loads(json.dumps(await ledger.proofs.prove(session_id, thought, new)))
        checkpoint, event = verify_bundle(bundle, verifier)
        assert (checkpoint.size, event["sessionId"]) == (77, session_id)
        assert f'"thought {thought}"' in event["payload"]
    with pytest.raises(InvalidInputError, match="does not cover"):
        await ledger.proofs.prove(second, 3, old)
    with pytest.raises(InvalidInputError, match="has no thought 9"):
        await ledger.proofs.prove(second, 9, new)
    foreign = Checkpoint("ledger.example/log", 71, bytes(32)).sign(signer)
    with pytest.raises(IntegrityError, match="not of this ledger"):
        await ledger.proofs.prove(first, 1, foreign)
    with pytest.raises(IntegrityError):
        verify_bundle(await ledger.proofs.prove(first, 2, new), Signer.generate("x").verifier())


@pytest.mark.parametrize(
    "bundle",
    [
        [],
        "text",
        {},
        {"format": "something else"},
        {"format": "thoughtledger-proof/1"},
        {"format": "thoughtledger-proof/1", "event": [], "leafIndex": 0},
        {
            "format": "thoughtledger-proof/1",
            "event": {"sessionId": "s", "version": "x"},
            "leafIndex": 0,
            "treeSize": 1,
            "auditPath": [],
            "checkpoint": "",
        },
    ],
)
def test_a_malformed_bundle_is_refused_as_input(bundle: object) -> None:
    with pytest.raises(InvalidInputError):
        verify_bundle(bundle, Signer.generate("log").verifier())
