"""Signed checkpoints written while a server runs (``serve --checkpoint-dir``).

Every few seconds the ledger's Merkle tree is extended, and once it has grown by ``every`` events
since the last checkpoint a new one is signed and written to the directory, as
``checkpoint-<size>`` and again as ``latest``; one more is written when serving stops. Copy them
somewhere the database's owner cannot rewrite (publish them, send them to a witness): a
checkpoint kept beside the database proves nothing against whoever controls both.
"""

import contextlib
import logging
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from thoughtledger.adapters.common.logs import event_line
from thoughtledger.api import Checkpoint, LedgerError, Proofs, Signer

POLL_SECONDS = 2.0
"""How often the tree is extended and its size compared with the last checkpoint's."""

_log = logging.getLogger(__name__)


class CheckpointWriter:
    """Signs and writes checkpoints of one ledger into one directory (files 0600, dir 0700).

    Args:
        proofs: The ledger's proofs (``ledger.proofs``).
        signer: The log's private key.
        directory: Where checkpoints go (created 0700 if missing).
        every: How many new events call for a new checkpoint.
    """

    def __init__(self, proofs: Proofs, signer: Signer, directory: Path, every: int) -> None:
        self.proofs = proofs
        self.signer = signer
        self.directory = directory
        self.every = every
        self.size = -1

    def prepare(self) -> None:
        """Create the directory (0700), and learn the size of the last checkpoint written there.

        Raises:
            OSError: The directory cannot be created.
        """
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        latest = self.directory / "latest"
        with contextlib.suppress(OSError, LedgerError, UnicodeDecodeError):
            self.size = Checkpoint.open(latest.read_text("utf-8"), self.signer.verifier()).size

    async def write_if_grown(self, minimum: int) -> Path | None:
        """Sign a checkpoint; write it when the log grew by ``minimum`` events since the last.

        Raises:
            LedgerError: The ledger failed.
            OSError: The file cannot be written.
        """
        note = await self.proofs.checkpoint(self.signer)
        size = Checkpoint.open(note, self.signer.verifier()).size
        if size - max(self.size, 0) < minimum or size == self.size:
            return None
        target = self.directory / f"checkpoint-{size}"
        for path in (target, self.directory / "latest"):
            _write_private(path, note)
        self.size = size
        _log.info("%s", event_line("checkpoint_written", {"size": size, "file": str(target)}))
        return target

    async def run(self) -> None:
        """Write checkpoints as the log grows, until cancelled (failures are logged, not raised)."""
        while True:
            await anyio.sleep(POLL_SECONDS)
            try:
                await self.write_if_grown(self.every)
            except (LedgerError, OSError) as exc:
                _log.warning("%s", event_line("checkpoint_failed", {"error": str(exc)}))


def _write_private(path: Path, text: str) -> None:
    """Write ``path`` whole (a temporary file renamed over it), readable by its owner only."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.asynccontextmanager
async def checkpoints_kept(writer: CheckpointWriter | None) -> AsyncIterator[None]:
    """Run ``writer`` beside the body, and write a last checkpoint when the body ends.

    Raises:
        OSError: The directory cannot be created.
    """
    if writer is None:
        yield
        return
    writer.prepare()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(writer.run)
        try:
            yield
        finally:
            tasks.cancel_scope.cancel()
    with anyio.CancelScope(shield=True):
        try:
            await writer.write_if_grown(1)
        except (LedgerError, OSError) as exc:
            _log.warning("%s", event_line("checkpoint_failed", {"error": str(exc)}))


__all__ = ["POLL_SECONDS", "CheckpointWriter", "checkpoints_kept"]
