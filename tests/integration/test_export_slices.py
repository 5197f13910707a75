"""A session longer than one export slice is exported in slices and imports whole."""

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.cli import cli, sqlite_url
from tests.support.factories import long_session
from tests.support.raw_store import raw_store
from thoughtledger import open_ledger
from thoughtledger.api.transfer import EXPORT_SLICE


def test_a_session_longer_than_a_slice_exports_in_slices_and_imports_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source, target = sqlite_url(tmp_path / "source.db"), sqlite_url(tmp_path / "target.db")

    async def build() -> list[list[int]]:
        async with open_ledger(source, ttl=None, read_only=False) as ledger:
            await long_session(raw_store(ledger), "long", EXPORT_SLICE)
            await long_session(raw_store(ledger), "short", 2)
            return [
                [r.version for r in part]
                async for part in ledger.transfer.export(["long", "short"])
            ]

    slices = asyncio.run(build())
    assert [(part[0], part[-1]) for part in slices] == [
        (1, EXPORT_SLICE),
        (EXPORT_SLICE + 1, EXPORT_SLICE + 1),
        (1, 3),
    ]
    exported = tmp_path / "all.jsonl"
    ran = cli(capsys, "export", "--all", "-o", str(exported), "--db", source)
    assert ran.code == 0, ran.err
    lines = exported.read_text().splitlines()
    manifest = json.loads(lines[-1])["manifest"]["sessions"]
    assert [(m["session_id"], m["version"], m["events"]) for m in manifest] == [
        ("long", EXPORT_SLICE + 1, EXPORT_SLICE + 1),
        ("short", 3, 3),
    ]
    assert len(lines) == EXPORT_SLICE + 1 + 3 + 1
    imported = cli(capsys, "import", str(exported), "--db", target)
    assert imported.code == 0, imported.err
    verified = cli(capsys, "verify", "--all", "--db", target)
    assert verified.code == 0, verified.err
