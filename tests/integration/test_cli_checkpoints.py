"""Checkpoints through ``main``: what the chain alone misses, a signed checkpoint catches."""

import asyncio
import json
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.support import attacks
from tests.support.backends import Backend, pg_url, settled
from tests.support.cli import cli
from tests.support.samples import record_sample
from thoughtledger.ledger.store.base import LedgerStore

DURABLE = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]

Attack = Callable[[Backend, LedgerStore], Awaitable[None]]


async def _rewrite(backend: Backend, store: LedgerStore) -> None:
    await attacks.rewrite_consistently(backend, store, "s-b")


async def _delete(backend: Backend, store: LedgerStore) -> None:
    await attacks.delete_session(backend, "s-d")


ATTACKS: dict[str, Attack] = {
    "a consistent rewrite": _rewrite,
    "a deleted session": _delete,
    "a truncated tail": attacks.cut_tail,
    "a reordering": attacks.swap_positions,
}


def keys(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[Path, Path]:
    key = tmp_path / "keys" / "log.key"
    key.parent.mkdir()
    ran = cli(capsys, "keygen", "-o", str(key), "--name", "ledger.example/log")
    assert ran.code == 0, ran.err
    public = Path(f"{key}.pub")
    said, key_line = ran.out.splitlines()
    # What each file is and where it went, then the public key itself.
    assert said == (
        f"wrote the private key to {key} (only you can read it: it signs checkpoints) and the "
        f"public key to {public} (give it to whoever verifies):"
    )
    assert key_line.strip() == public.read_text().strip()
    described = cli(capsys, "keygen", "-o", str(key), "--force", "--json", "--name", "x/y")
    assert described.json() == {"privateKey": str(key), "publicKey": str(public), "name": "x/y"}
    ran = cli(capsys, "keygen", "-o", str(key), "--force", "--name", "ledger.example/log")
    assert ran.code == 0, ran.err
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    return key, public


@pytest.mark.parametrize("name", DURABLE)
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_verify_against_a_checkpoint_catches_what_the_chain_misses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, attack: str
) -> None:
    if name == "postgres" and pg_url() is None:
        pytest.skip("no PostgreSQL configured (set THOUGHTLEDGER_TEST_PG_URL)")
    backend = Backend(name, tmp_path)
    try:
        url = backend.url
        assert url is not None
        asyncio.run(record_sample(url))
        asyncio.run(_settled(backend, 21))
        key, public = keys(capsys, tmp_path)
        note = tmp_path / "checkpoint.txt"
        ran = cli(capsys, "checkpoint", "--key", str(key), "-o", str(note), "--db", url)
        assert ran.code == 0, ran.err
        assert ran.out == (  # says what it wrote, as prove does
            f"wrote a checkpoint of the first 21 events of ledger.example/log to {note} (keep "
            "it outside the database)\n"
        )
        assert stat.S_IMODE(note.stat().st_mode) == 0o600
        assert note.read_text().splitlines()[:2] == ["ledger.example/log", "21"]
        clean = cli(
            capsys, "verify", "--db", url, "--checkpoint", str(note), "--pubkey", str(public)
        )
        assert clean.code == 0, clean.err
        assert "the first 21 events match the signed checkpoint" in clean.out

        asyncio.run(_attack(backend, ATTACKS[attack]))

        chain_only = cli(capsys, "verify", "--db", url)
        assert chain_only.code == 0, chain_only.out  # the chain alone cannot tell
        ran = cli(capsys, "verify", "--db", url, "--checkpoint", str(note), "--pubkey", str(public))
        assert ran.code == 1
        assert "CHECKPOINT FAILED" in ran.out
        assert ran.err.startswith("thoughtledger: error: tampering detected: the ledger")
        assert len(ran.err.splitlines()) == 1
    finally:
        asyncio.run(backend.drop())


async def _settled(backend: Backend, count: int) -> None:
    store = await backend.open()
    try:
        await settled(store, count)
    finally:
        await store.aclose()


async def _attack(backend: Backend, attack: Attack) -> None:
    store = await backend.open()
    try:
        await attack(backend, store)
    finally:
        await store.aclose()


def test_a_forged_checkpoint_or_the_wrong_key_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    asyncio.run(record_sample(url))
    key, public = keys(capsys, tmp_path)
    note = tmp_path / "cp"
    assert cli(capsys, "checkpoint", "--key", str(key), "-o", str(note), "--db", url).code == 0
    forged = tmp_path / "forged"
    forged.write_text(note.read_text().replace("\n21\n", "\n20\n"))
    ran = cli(capsys, "verify", "--db", url, "--checkpoint", str(forged), "--pubkey", str(public))
    assert ran.code == 1
    assert "does not verify" in ran.err
    other = tmp_path / "other.key"
    assert cli(capsys, "keygen", "-o", str(other)).code == 0
    ran = cli(capsys, "verify", "--db", url, "--checkpoint", str(note), "--pubkey", f"{other}.pub")
    assert ran.code == 1
    assert "no signature by the key thoughtledger" in ran.err
    ran = cli(capsys, "verify", "--db", url, "--checkpoint", str(note))
    assert (ran.code, ran.err) == (
        2,
        "thoughtledger: error: --checkpoint and --pubkey go together\n",
    )
    # Keys swapped: each named for what it is, and the private key never quoted.
    ran = cli(capsys, "verify", "--db", url, "--checkpoint", str(note), "--pubkey", str(key))
    assert (ran.code, ran.err) == (
        2,
        f"thoughtledger: error: {key} is a private key; checking needs only the public key, "
        f"keygen's {key.name}.pub (keep the private key to yourself)\n",
    )
    proof = cli(capsys, "verify-proof", str(note), "--pubkey", str(key))
    assert proof.err == ran.err
    ran = cli(capsys, "checkpoint", "--key", str(public), "--db", url)
    assert ran.code == 2
    assert f"{public} is a public key; sign with the private key" in ran.err
    ran = cli(capsys, "keygen", "-o", str(key))
    assert ran.code == 1
    assert "exists" in ran.err


def test_a_proof_bundle_verifies_with_the_public_key_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    asyncio.run(record_sample(url))
    key, public = keys(capsys, tmp_path)
    bundle = tmp_path / "bundle.json"
    ran = cli(capsys, "prove", "s-b", "2", "--key", str(key), "-o", str(bundle), "--db", url)
    assert ran.code == 0, ran.err
    (tmp_path / "l.db").unlink()  # no ledger at hand
    ran = cli(capsys, "verify-proof", str(bundle), "--pubkey", str(public), "--json")
    assert ran.code == 0, ran.err
    assert ran.json()["sessionId"] == "s-b"
    assert ran.json()["treeSize"] == 21
    data = json.loads(bundle.read_text())
    data["event"]["payload"] = data["event"]["payload"].replace("thought 2", "thought two")
    bundle.write_text(json.dumps(data))
    ran = cli(capsys, "verify-proof", str(bundle), "--pubkey", str(public))
    assert ran.code == 1
    assert "do not hash to its recorded hash" in ran.err
    for field, value in (("leafIndex", 0), ("treeSize", 22)):
        data = json.loads(bundle.read_text())
        data["event"]["payload"] = data["event"]["payload"].replace("thought two", "thought 2")
        data[field] = value
        bundle.write_text(json.dumps(data))
        ran = cli(capsys, "verify-proof", str(bundle), "--pubkey", str(public))
        assert ran.code == 1, field
    bundle.write_text("not json")
    ran = cli(capsys, "verify-proof", str(bundle), "--pubkey", str(public))
    assert ran.code == 2
    assert len(ran.err.splitlines()) == 1


def test_consistency_between_two_checkpoints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    asyncio.run(record_sample(url))
    key, public = keys(capsys, tmp_path)
    old, new = tmp_path / "old", tmp_path / "new"
    assert cli(capsys, "checkpoint", "--key", str(key), "-o", str(old), "--db", url).code == 0
    ran = cli(capsys, "demo", "--db", url)
    assert ran.code == 0, ran.err
    assert cli(capsys, "checkpoint", "--key", str(key), "-o", str(new), "--db", url).code == 0
    ran = cli(capsys, "consistency", str(old), str(new), "--pubkey", str(public), "--db", url)
    assert ran.code == 0, ran.err
    assert ran.out.startswith("ok: the log of ")
    ran = cli(capsys, "consistency", str(new), str(old), "--pubkey", str(public), "--db", url)
    assert ran.code == 2
    assert "larger than the newer" in ran.err


def test_checkpoint_refuses_a_missing_ledger(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key, _ = keys(capsys, tmp_path)
    missing = tmp_path / "missing.db"
    ran = cli(capsys, "checkpoint", "--key", str(key), "--db", f"sqlite:///{missing}")
    assert ran.code == 1
    assert not missing.exists()
