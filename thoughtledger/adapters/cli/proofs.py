"""``keygen``, ``checkpoint``, ``consistency``, ``prove``, ``verify-proof``: proof outside the DB.

A checkpoint signs the root of the Merkle tree over the log's first N events; kept outside the
database (published, sent to a witness, committed elsewhere), it lets anyone check later that
those N events are still exactly there (``verify --checkpoint``), that the log only grew since
(``consistency``), and that one thought is among them, with no ledger at hand (``prove`` and
``verify-proof``).
"""

import argparse
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

from thoughtledger.adapters.cli.catalogue import summary
from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    UsageError,
    add_json_option,
    command,
    ledger_from,
    plural,
    resolve_session,
    whole,
)
from thoughtledger.adapters.cli.outfile import atomic_file, exists, standard_output
from thoughtledger.api import Checkpoint, Ledger, Signer, Verifier, verify_bundle
from thoughtledger.ledger.errors import InvalidInputError

_MAX_FILE = 1 << 20
_PRIVATE_PREFIX = "PRIVATE+KEY+"
"""How a private key file begins (``keygen``'s FILE)."""


def register(commands: Commands) -> None:
    """Add the proof commands."""
    keygen = commands.add_parser(
        "keygen",
        help=summary("keygen"),
        description=f"{summary('keygen')}: FILE (private, 0600) and "
        "FILE.pub (public, to give to whoever verifies)",
    )
    keygen.add_argument("-o", "--output", metavar="FILE", required=True, help="the private key")
    keygen.add_argument("--name", default="thoughtledger", help="the key's (and log's) name")
    keygen.add_argument("--force", action="store_true", help="overwrite existing key files")
    add_json_option(keygen)
    keygen.set_defaults(handler=run_keygen)

    checkpoint = command(
        commands,
        "checkpoint",
        run_checkpoint,
    )
    checkpoint.add_argument("--key", metavar="FILE", required=True, help="the private key")
    checkpoint.add_argument("--origin", help="the log's name on it (default: the key's name)")
    checkpoint.add_argument("-o", "--output", metavar="FILE", help="write it here (0600)")
    checkpoint.add_argument("--force", action="store_true", help="overwrite the output file")
    add_json_option(checkpoint)

    consistency = command(
        commands,
        "consistency",
        run_consistency,
    )
    consistency.add_argument("old", metavar="OLD", help="the older checkpoint file")
    consistency.add_argument("new", metavar="NEW", help="the newer checkpoint file")
    consistency.add_argument("--pubkey", metavar="FILE", required=True, help="the public key")
    add_json_option(consistency)

    prove = command(commands, "prove", run_prove)
    prove.add_argument("session", metavar="SESSION", help="the session (or a unique prefix)")
    prove.add_argument("thought", metavar="THOUGHT", type=whole(1), help="the thought number")
    prove.add_argument("-o", "--output", metavar="FILE", required=True, help="the bundle (JSON)")
    signed = prove.add_mutually_exclusive_group(required=True)
    signed.add_argument("--key", metavar="FILE", help="sign a new checkpoint with this key")
    signed.add_argument("--checkpoint", metavar="FILE", help="prove against this checkpoint")
    prove.add_argument("--force", action="store_true", help="overwrite the output file")
    add_json_option(prove)

    verify_proof = commands.add_parser(
        "verify-proof",
        help=summary("verify-proof"),
        description=summary("verify-proof"),
    )
    verify_proof.add_argument("bundle", metavar="BUNDLE", help="a file written by prove")
    verify_proof.add_argument("--pubkey", metavar="FILE", required=True, help="the public key")
    add_json_option(verify_proof)
    verify_proof.set_defaults(handler=run_verify_proof)


def read_text(given: str, what: str) -> str:
    """Return a small text file's contents.

    Raises:
        UsageError: It is missing, a directory, too large or not UTF-8.
    """
    path = Path(given)
    try:
        if path.stat().st_size > _MAX_FILE:
            raise UsageError(f"{path} is too large for a {what}")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory; name a {what} file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc


def read_signer(given: str) -> Signer:
    """Read a private key file (``keygen``).

    Raises:
        UsageError: The file is missing or not a private key.
    """
    text = read_text(given, "private key")
    try:
        return Signer.parse(text)
    except InvalidInputError as exc:
        if _is_public(text):
            raise UsageError(
                f"{given} is a public key; sign with the private key keygen wrote beside it "
                "(the file without .pub)"
            ) from None
        raise UsageError(f"{given}: {exc}") from exc


def read_verifier(given: str) -> Verifier:
    """Read a public key file (``keygen``'s FILE.pub, or the key's line as text).

    Raises:
        UsageError: The file is missing or not a public key.
    """
    text = read_text(given, "public key")
    if text.lstrip().startswith(_PRIVATE_PREFIX):
        # Never parsed, quoted or echoed: it is a secret.
        raise UsageError(
            f"{given} is a private key; checking needs only the public key, keygen's "
            f"{Path(given).name}.pub (keep the private key to yourself)"
        )
    try:
        return Verifier.parse(text)
    except InvalidInputError as exc:
        raise UsageError(f"{given}: {exc}") from exc


def _is_public(text: str) -> bool:
    try:
        Verifier.parse(text)
    except InvalidInputError:
        return False
    return True


@contextlib.asynccontextmanager
async def tree_keeper(args: argparse.Namespace) -> AsyncIterator[Ledger]:
    """Open an existing ledger so that its Merkle tree can be extended.

    The tree's tables are derived from the log; extending them is the one write these commands
    make. A missing ledger is refused (never created), as a read-only opening refuses it.
    """
    async with ledger_from(args, read_only=True):
        pass
    async with ledger_from(args, read_only=False) as ledger:
        yield ledger


def _write(target: str | None, text: str, *, force: bool) -> None:
    if target is None:
        with standard_output() as out:
            out.write(text)
        return
    path = Path(target)
    if path.exists() and not force:
        raise exists(path)
    with atomic_file(path, overwrite=force) as out:
        out.write(text)


async def run_keygen(args: argparse.Namespace, ui: Ui) -> int:
    """Write a new key pair; print the public key.

    Raises:
        UsageError: A malformed name.
        CliError: A key file exists (without --force) or cannot be written.
    """
    try:
        signer = Signer.generate(args.name)
    except InvalidInputError as exc:
        raise UsageError(str(exc)) from exc
    private, public = Path(args.output), Path(args.output + ".pub")
    for path in (private, public):
        if path.exists() and not args.force:
            raise exists(path)
    _write(str(private), signer.encode() + "\n", force=args.force)
    _write(str(public), signer.verifier().encode() + "\n", force=args.force)
    if args.json:
        ui.json({"privateKey": str(private), "publicKey": str(public), "name": args.name})
        return EXIT_OK
    ui.out.print(
        f"wrote the private key to {private} (only you can read it: it signs checkpoints) and "
        f"the public key to {public} (give it to whoever verifies):",
        highlight=False,
        soft_wrap=True,
    )
    ui.out.print(f"  {signer.verifier().encode()}", highlight=False, soft_wrap=True)
    return EXIT_OK


async def run_checkpoint(args: argparse.Namespace, ui: Ui) -> int:
    """Extend the tree and print (or write) a signed checkpoint of it.

    Raises:
        UsageError: A missing or malformed key.
        LedgerError: The ledger failed.
    """
    signer = read_signer(args.key)
    if args.json and args.output is None:
        raise UsageError("--json describes the checkpoint written with -o FILE; give -o FILE")
    async with tree_keeper(args) as ledger:
        note = await ledger.proofs.checkpoint(signer, origin=args.origin)
    _write(args.output, note, force=args.force)
    if args.output is None:
        return EXIT_OK  # the checkpoint itself was the output
    origin, size, root = note.splitlines()[:3]
    if args.json:
        ui.json({"file": args.output, "origin": origin, "treeSize": int(size), "root": root})
    else:
        ui.out.print(
            f"wrote a checkpoint of the first {plural(int(size), 'event')} of {origin} to "
            f"{args.output} (keep it outside the database)",
            highlight=False,
            soft_wrap=True,
        )
    return EXIT_OK


async def run_consistency(args: argparse.Namespace, ui: Ui) -> int:
    """Check that the newer checkpoint's log extends the older one's.

    Raises:
        UsageError: A missing file or key.
        IntegrityError: A signature or the proof does not verify.
        LedgerError: The ledger failed.
    """
    verifier = read_verifier(args.pubkey)
    old, new = read_text(args.old, "checkpoint"), read_text(args.new, "checkpoint")
    # Only reads: the tree was extended when the newer checkpoint was signed.
    async with ledger_from(args, read_only=True) as ledger:
        proof = await ledger.proofs.consistency(old, new, verifier)
    sizes = [Checkpoint.open(note, verifier).size for note in (old, new)]
    if args.json:
        ui.json(
            {
                "ok": True,
                "oldSize": sizes[0],
                "newSize": sizes[1],
                "proof": [h.hex() for h in proof],
            }
        )
    else:
        ui.out.print(
            f"ok: the log of {plural(sizes[1], 'event')} extends the one of {sizes[0]} "
            f"({len(proof)} proof hashes)",
            style="green",
            highlight=False,
        )
    return EXIT_OK


async def run_prove(args: argparse.Namespace, ui: Ui) -> int:
    """Write the proof bundle of one thought.

    Raises:
        UsageError: A missing file or key, or an unknown session.
        CliError: The output exists (without --force) or cannot be written.
        LedgerError: No such thought, a checkpoint that does not cover it, or the ledger failed.
    """
    signer = read_signer(args.key) if args.key else None
    note = read_text(args.checkpoint, "checkpoint") if args.checkpoint else None
    async with tree_keeper(args) as ledger:
        session_id = await resolve_session(ledger, args.session)
        if signer is not None:
            note = await ledger.proofs.checkpoint(signer)
        assert note is not None  # noqa: S101  # argparse requires --key or --checkpoint
        bundle = await ledger.proofs.prove(session_id, args.thought, note)
    _write(args.output, json.dumps(bundle, indent=2, ensure_ascii=False) + "\n", force=args.force)
    if args.json:
        ui.json(
            {
                "file": args.output,
                "sessionId": session_id,
                "thought": args.thought,
                "leafIndex": bundle["leafIndex"],
                "treeSize": bundle["treeSize"],
            }
        )
        return EXIT_OK
    ui.out.print(
        f"wrote the proof of thought {args.thought} of session {session_id} (leaf "
        f"{bundle['leafIndex']} of {bundle['treeSize']}) to {args.output}",
        highlight=False,
    )
    return EXIT_OK


async def run_verify_proof(args: argparse.Namespace, ui: Ui) -> int:
    """Check a bundle with the public key alone.

    Raises:
        UsageError: A missing file or key, or a file that is not JSON.
        IntegrityError: The bundle does not verify.
    """
    verifier = read_verifier(args.pubkey)
    text = read_text(args.bundle, "proof bundle")
    try:
        bundle = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{args.bundle} is not JSON: {exc}") from exc
    try:
        checkpoint, event = verify_bundle(bundle, verifier)
    except InvalidInputError as exc:
        raise UsageError(f"{args.bundle}: {exc}") from exc
    if args.json:
        ui.json(
            {
                "ok": True,
                "origin": checkpoint.origin,
                "treeSize": checkpoint.size,
                "sessionId": event["sessionId"],
                "version": event["version"],
                "eventType": event["eventType"],
            }
        )
    else:
        ui.out.print(
            f"ok: event {event['version']} of session {event['sessionId']} "
            f"({event['eventType']}, recorded {event['recordedAt']}) is leaf "
            f"{bundle['leafIndex']} of the {checkpoint.size} events {checkpoint.origin} signed",
            style="green",
            highlight=False,
        )
    return EXIT_OK


__all__ = ["read_signer", "read_text", "read_verifier", "register", "tree_keeper"]
