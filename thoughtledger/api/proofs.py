"""Proof that holds outside the database: signed checkpoints, inclusion and consistency proofs.

A component of :class:`thoughtledger.api.Ledger`, reached as ``ledger.proofs``. A checkpoint signs
the root of the Merkle tree over the log's first N events
(:mod:`thoughtledger.ledger.store.log_tree`); kept where the database's owner cannot rewrite it, it
pins those N events forever: verifying the ledger against it recomputes the root from the stored
events, and an inclusion proof shows one event in it with no ledger at hand (:func:`verify_bundle`).
"""

from dataclasses import dataclass
from typing import Any

from thoughtledger.ledger.chain import StoredRow
from thoughtledger.ledger.checkpoint import Checkpoint, Signer, Verifier
from thoughtledger.ledger.content import ContentError
from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.errors import IntegrityError, InvalidInputError
from thoughtledger.ledger.events import Event, ThoughtEvent
from thoughtledger.ledger.merkle import leaf_hash, verify_consistency, verify_inclusion
from thoughtledger.ledger.store.base import EventStore
from thoughtledger.ledger.store.log_tree import LogTree

BUNDLE_FORMAT = "thoughtledger-proof/1"
"""The ``format`` of an inclusion proof bundle (see :meth:`Proofs.prove`)."""


@dataclass(frozen=True, slots=True)
class CheckpointReport:
    """How the ledger stands against a checkpoint.

    Attributes:
        checkpoint: The checkpoint, its signature verified.
        ok: The ledger's first ``checkpoint.size`` events hash to its root.
        held: How many of those events the ledger still holds.
        reason: What failed, in words.
    """

    checkpoint: Checkpoint
    ok: bool
    held: int
    reason: str | None = None


class Proofs:
    """A ledger's checkpoints and proofs: ``ledger.proofs.checkpoint(signer)``, ``.prove(...)``.

    Args:
        store: The log, whose sessions are proved.
        tree: The Merkle tree over the log, signed and proved from.
    """

    def __init__(self, store: EventStore, tree: LogTree) -> None:
        self._store = store
        self._tree = tree

    async def checkpoint(self, signer: Signer, *, origin: str | None = None) -> str:
        """Extend the tree over the log and return a signed checkpoint of it (a signed note).

        Args:
            signer: The log's private key.
            origin: The log's name on the checkpoint (default: the key's name).

        Raises:
            InvalidInputError: A malformed origin.
            IntegrityError: The stored tree does not match the log.
            StoreError: The store failed (a read-only ledger extends no tree: it signs the
                tree as stored).
        """
        head = await self._tree.tree_head()
        return Checkpoint(origin or signer.name, head.size, head.root).sign(signer)

    async def verify_checkpoint(self, note: str, verifier: Verifier) -> CheckpointReport:
        """Check that the ledger still holds exactly the events ``note`` checkpointed.

        Recomputes the root over the first events from the log itself (never from the stored
        tree): a rewritten, deleted, reordered or truncated event changes it.

        Raises:
            InvalidInputError: ``note`` is not a signed checkpoint.
            IntegrityError: ``verifier`` did not sign it, or the signature does not verify.
            StoreError: The store failed.
        """
        checkpoint = Checkpoint.open(note, verifier)
        head = await self._tree.log_root(checkpoint.size)
        if head.size < checkpoint.size:
            return CheckpointReport(
                checkpoint,
                False,
                head.size,
                f"the ledger holds {head.size} of the {checkpoint.size} events the checkpoint "
                "signed: events were deleted",
            )
        if head.root != checkpoint.root:
            return CheckpointReport(
                checkpoint,
                False,
                head.size,
                f"the ledger's first {checkpoint.size} events no longer hash to the signed "
                "root: events were edited, deleted, inserted or reordered",
            )
        return CheckpointReport(checkpoint, True, head.size)

    async def consistency(self, old_note: str, new_note: str, verifier: Verifier) -> list[bytes]:
        """Prove the newer checkpoint's log an extension of the older one's, and check the proof.

        Raises:
            InvalidInputError: A note is not a signed checkpoint, the two name different logs,
                or the older is the larger; or the ledger's tree does not reach the newer.
            IntegrityError: A signature does not verify, or the proof does not: the log was
                rewritten between the two checkpoints.
            StoreError: The store failed.
        """
        old, new = Checkpoint.open(old_note, verifier), Checkpoint.open(new_note, verifier)
        if old.origin != new.origin:
            raise InvalidInputError(f"the checkpoints are of two logs: {old.origin}, {new.origin}")
        if old.size > new.size:
            raise InvalidInputError(
                f"the older checkpoint ({old.size} events) is larger than the newer ({new.size})"
            )
        await self._tree.tree_head()
        proof = await self._tree.consistency_proof(old.size, new.size)
        if not verify_consistency(old.size, new.size, proof, old.root, new.root):
            raise IntegrityError(
                f"the log of {new.size} events does not extend the one of {old.size} the older "
                "checkpoint signed: it was rewritten in between"
            )
        return proof

    async def prove(self, session_id: str, thought: int, note: str) -> dict[str, Any]:
        """Return a bundle proving thought ``thought`` of a session in the checkpoint ``note``.

        The bundle (JSON-ready) holds the event's stored columns, its leaf index, the audit path
        and the checkpoint: :func:`verify_bundle` checks it with the public key alone.

        Args:
            session_id: The session.
            thought: The thought's number.
            note: A signed checkpoint of this ledger (see :meth:`checkpoint`).

        Raises:
            InvalidInputError: No such thought, a malformed checkpoint, or one that does not
                cover the event (take a newer one).
            IntegrityError: The checkpoint is not of this ledger (or the ledger was rewritten
                since it), or the stored tree does not match the log.
            StoreError: The store failed.
        """
        from thoughtledger.ledger.checkpoint import split_note

        text, _ = split_note(note)
        checkpoint = Checkpoint.parse(text)
        record = await self._thought_event(session_id, thought)
        head = await self._tree.tree_head()
        if checkpoint.size <= head.size and (
            await self._tree.tree_root(checkpoint.size) != checkpoint.root
        ):
            raise IntegrityError(
                f"the checkpoint is not of this ledger: its first {checkpoint.size} events hash "
                "to another root"
            )
        index = await self._tree.leaf_index(record.position)
        if index is None or index >= checkpoint.size:
            raise InvalidInputError(
                f"the checkpoint ({checkpoint.size} events) does not cover thought {thought} of "
                f"session {session_id}; take a newer checkpoint"
            )
        proof = await self._tree.inclusion_proof(record.position, checkpoint.size)
        return {
            "format": BUNDLE_FORMAT,
            "event": _columns(record),
            "leafIndex": proof.index,
            "treeSize": proof.size,
            "auditPath": [h.hex() for h in proof.path],
            "checkpoint": note,
        }

    async def _thought_event(self, session_id: str, thought: int) -> RecordedEvent:
        for record in await self._store.read_stream(session_id):
            event: Event = record.event
            if isinstance(event, ThoughtEvent) and event.thought_number == thought:
                return record
        raise InvalidInputError(f"session {session_id} has no thought {thought}")


def _columns(record: RecordedEvent) -> dict[str, Any]:
    return {
        "sessionId": record.session_id,
        "version": record.version,
        "eventId": str(record.event_id),
        "recordedAt": format_time(record.recorded_at),
        "schemaVersion": record.schema_version,
        "eventType": record.event_type,
        "payload": record.payload,
        "prevHash": record.prev_hash,
        "hash": record.hash,
    }


def verify_bundle(bundle: Any, verifier: Verifier) -> tuple[Checkpoint, dict[str, Any]]:
    """Check an inclusion proof bundle with the log's public key alone (no ledger at hand).

    Checks that the checkpoint is signed by ``verifier``, that the event's columns hash to its
    recorded hash, and that the audit path places that hash at its leaf index under the signed
    root.

    Returns:
        The checkpoint and the event's stored columns.

    Raises:
        InvalidInputError: Not a proof bundle.
        IntegrityError: The signature, the event's hash or the audit path does not verify.
    """
    try:
        if bundle["format"] != BUNDLE_FORMAT:
            raise InvalidInputError(f"not a {BUNDLE_FORMAT} bundle")
        event = bundle["event"]
        row = StoredRow(
            position=0,
            session_id=str(event["sessionId"]),
            version=int(event["version"]),
            event_id=str(event["eventId"]),
            recorded_at=str(event["recordedAt"]),
            schema_version=int(event["schemaVersion"]),
            event_type=str(event["eventType"]),
            payload=str(event["payload"]),
            prev_hash=str(event["prevHash"]),
            hash=str(event["hash"]),
        )
        index, size = int(bundle["leafIndex"]), int(bundle["treeSize"])
        path = [bytes.fromhex(h) for h in bundle["auditPath"]]
        note = str(bundle["checkpoint"])
        leaf = leaf_hash(bytes.fromhex(row.hash))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"not a proof bundle: {exc}") from exc
    checkpoint = Checkpoint.open(note, verifier)
    if size != checkpoint.size:
        raise IntegrityError(
            f"the proof is for {size} events, the checkpoint for {checkpoint.size}"
        )
    try:
        digest = row.digest()
    except UnicodeEncodeError as exc:
        raise IntegrityError("the event's payload is not valid Unicode") from exc
    except ContentError as exc:
        raise IntegrityError(
            f"the event's contents do not hash to its recorded hash: altered ({exc})"
        ) from exc
    if digest != row.hash:
        raise IntegrityError("the event's contents do not hash to its recorded hash: altered")
    if not verify_inclusion(leaf, index, size, path, checkpoint.root):
        raise IntegrityError("the audit path does not place the event under the signed root")
    return checkpoint, event


__all__ = ["BUNDLE_FORMAT", "CheckpointReport", "Proofs", "verify_bundle"]
