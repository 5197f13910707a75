"""An export checked against a signed checkpoint of the ledger it came from (``--checkpoint``).

An export line records the position its event had in the source ledger, so a whole export
(``export --all``) lists the source log: ordered by those positions, its events' hashes must
rebuild exactly the Merkle root the checkpoint signed. Then no event in the file can be forged,
dated into the past, dropped or reordered, even by whoever wrote the file and controls the
source database: only the checkpoint's signer vouches for it. The file must hold exactly the
events the checkpoint covers (no event it does not cover is imported on its word).
"""

from thoughtledger.api.errors import ImportRefusedError
from thoughtledger.api.transfer.check import CheckedFile
from thoughtledger.ledger.checkpoint import Checkpoint, Verifier
from thoughtledger.ledger.merkle import leaf_hash, root_of


def check_checkpoint(checked: CheckedFile, note: str, verifier: Verifier) -> Checkpoint:
    """Check that ``checked`` holds exactly the log ``note`` signed.

    Returns:
        The checkpoint.

    Raises:
        InvalidInputError: ``note`` is not a signed checkpoint.
        IntegrityError: ``verifier`` did not sign it, or the signature does not verify.
        ImportRefusedError: The file is not that log: events missing, added, altered or
            reordered, or lines without their source position.
    """
    checkpoint = Checkpoint.open(note, verifier)
    placed: list[tuple[int, str]] = []
    for records in checked.by_session():
        for record in records:
            if record.position <= 0:
                raise ImportRefusedError(
                    f"{checked.path}: event {record.version} of session {record.session_id} has "
                    "no source position; a checkpoint can only vouch for a whole export"
                )
            placed.append((record.position, record.hash))
    placed.sort()
    if len({position for position, _ in placed}) != len(placed):
        raise ImportRefusedError(f"{checked.path}: two events claim one source position")
    if len(placed) != checkpoint.size:
        raise ImportRefusedError(
            f"{checked.path} holds {len(placed)} events, the checkpoint covers {checkpoint.size}: "
            "export the whole ledger (export --all) at the checkpoint; nothing was imported"
        )
    if root_of([leaf_hash(bytes.fromhex(digest)) for _, digest in placed]) != checkpoint.root:
        raise ImportRefusedError(
            f"{checked.path} is not the log the checkpoint signed: events were forged, altered, "
            "removed or reordered; nothing was imported"
        )
    return checkpoint


__all__ = ["check_checkpoint"]
