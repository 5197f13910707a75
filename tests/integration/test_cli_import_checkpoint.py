"""``import --checkpoint``: only the log a checkpoint signed gets in; a forged file cannot pass."""

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.cli import cli, exported, sqlite_url, write_export
from tests.support.forged import hashed_form
from tests.support.samples import record_sample
from thoughtledger.ledger.chain import compute_hash
from thoughtledger.ledger.codec import encode_payload
from thoughtledger.ledger.events import ThoughtRecorded


def signed_export(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[Path, Path, Path]:
    url = sqlite_url(tmp_path / "source.db")
    asyncio.run(record_sample(url))
    key = tmp_path / "log.key"
    assert cli(capsys, "keygen", "-o", str(key)).code == 0
    note = tmp_path / "cp"
    assert cli(capsys, "checkpoint", "--key", str(key), "-o", str(note), "--db", url).code == 0
    export = tmp_path / "export.jsonl"
    exported(capsys, url, export)
    return export, note, Path(f"{key}.pub")


def forge(lines: list[dict[str, object]]) -> list[dict[str, object]]:
    """Add a thought to s-b, chained onto its last event and dated with it (not backwards)."""
    last = max(
        (line for line in lines if line["session_id"] == "s-b"),
        key=lambda line: int(str(line["version"])),
    )
    payload = encode_payload(
        ThoughtRecorded(
            thought="a forged thought",
            thought_number=9,
            total_thoughts=9,
            next_thought_needed=False,
        )
    )
    fields = {
        "session_id": "s-b",
        "version": int(str(last["version"])) + 1,
        "event_id": "01900000-0000-7000-8000-000000000001",
        "recorded_at": last["recorded_at"],
        "event_type": "thought.recorded",
        "schema_version": last["schema_version"],
        "payload": payload,
        "prev_hash": last["hash"],
    }
    digest = compute_hash(
        prev_hash=str(fields["prev_hash"]),
        session_id="s-b",
        version=int(str(fields["version"])),
        event_id=str(fields["event_id"]),
        recorded_at=str(fields["recorded_at"]),
        event_type="thought.recorded",
        schema_version=int(str(fields["schema_version"])),
        payload=hashed_form("thought.recorded", int(str(fields["schema_version"])), payload),
    )
    forged = {**fields, "hash": digest, "position": int(str(last["position"])) + 1000}
    at = lines.index(last) + 1
    return [*lines[:at], forged, *lines[at:]]


def test_a_whole_export_imports_under_its_checkpoint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    export, note, public = signed_export(capsys, tmp_path)
    target = sqlite_url(tmp_path / "target.db")
    ran = cli(
        capsys, "import", str(export), "--checkpoint", str(note), "--pubkey", str(public),
        "--db", target, "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    assert ran.json()["imported"] == 21


def test_a_forged_thought_passes_the_chain_but_not_the_checkpoint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    export, note, public = signed_export(capsys, tmp_path)
    lines = [json.loads(line) for line in export.read_text().splitlines()[:-1]]
    forged = tmp_path / "forged.jsonl"
    write_export(forged, forge(lines))
    unchecked = cli(capsys, "import", str(forged), "--db", sqlite_url(tmp_path / "a.db"))
    assert unchecked.code == 0, unchecked.err  # every chain in it verifies
    target = tmp_path / "b.db"
    ran = cli(
        capsys, "import", str(forged), "--checkpoint", str(note), "--pubkey", str(public),
        "--db", sqlite_url(target),
    )  # fmt: skip
    assert ran.code == 1
    assert "holds 22 events, the checkpoint covers 21" in ran.err
    assert len(ran.err.splitlines()) == 1
    assert not target.exists()


def test_a_reordered_or_altered_export_is_refused_under_its_checkpoint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    export, note, public = signed_export(capsys, tmp_path)
    lines = [json.loads(line) for line in export.read_text().splitlines()[:-1]]
    a, b = lines[0], next(line for line in lines if line["session_id"] != lines[0]["session_id"])
    a["position"], b["position"] = b["position"], a["position"]
    reordered = tmp_path / "reordered.jsonl"
    write_export(reordered, lines)
    ran = cli(
        capsys, "import", str(reordered), "--checkpoint", str(note), "--pubkey", str(public),
        "--db", sqlite_url(tmp_path / "t.db"),
    )  # fmt: skip
    assert ran.code == 1
    assert "is not the log the checkpoint signed" in ran.err
    ran = cli(capsys, "import", str(export), "--checkpoint", str(note), "--db", "x")
    assert ran.code == 2
