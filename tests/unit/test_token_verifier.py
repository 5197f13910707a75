"""``FileTokenVerifier`` follows its file: new tokens work, removed ones stop, a broken file
refuses everyone (failing closed) until it is fixed."""

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from thoughtledger.adapters.auth.private_files import SharedFileError
from thoughtledger.adapters.auth.tokens import (
    TokenFile,
    TokenFileError,
    load_tokens,
    save_tokens,
    token_hash,
)
from thoughtledger.adapters.auth.verifier import FileTokenVerifier

pytestmark = pytest.mark.anyio
NOW = datetime(2026, 5, 1, tzinfo=UTC)


async def test_a_token_added_after_start_is_accepted_with_its_role_as_a_scope(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.json"
    save_tokens(path, TokenFile())
    verifier = FileTokenVerifier(path)
    tokens, token, _ = TokenFile().add("alice", "auditor", now=NOW)
    assert await verifier.verify_token(token) is None
    save_tokens(path, tokens)
    access = await verifier.verify_token(token)
    assert access is not None
    assert (access.client_id, access.scopes, access.subject) == (
        "alice",
        ["thoughtledger:auditor"],
        None,
    )


async def test_a_broken_file_refuses_every_token_until_it_is_fixed(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    tokens, token, _ = TokenFile().add("alice", "writer", now=NOW)
    save_tokens(path, tokens)
    verifier = FileTokenVerifier(path)
    assert await verifier.verify_token(token) is not None
    path.write_text("{ half written")
    assert await verifier.verify_token(token) is None
    path.unlink()
    assert await verifier.verify_token(token) is None
    save_tokens(path, tokens)
    assert await verifier.verify_token(token) is not None


def test_a_missing_or_foreign_file_stops_the_verifier_at_once(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="no token file at"):
        FileTokenVerifier(tmp_path / "absent.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(TokenFileError, match="not a thoughtledger token file"):
        FileTokenVerifier(tmp_path / "list.json")


def test_the_file_stores_the_sha256_of_each_token_and_never_the_token(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    tokens, token, record = TokenFile().add("alice", "reader", now=NOW)
    save_tokens(path, tokens)
    assert record.sha256 == token_hash(token)
    assert token not in path.read_text()
    assert load_tokens(path).records == (record,)


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_file_its_group_or_others_can_write_stops_the_verifier(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "tokens.json"
    save_tokens(path, TokenFile())
    path.chmod(mode)
    with pytest.raises(SharedFileError, match=rf"mode 0{mode:o}\), so they could add tokens"):
        FileTokenVerifier(path)


def test_a_shared_folder_anywhere_above_the_file_stops_the_verifier(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    path = shared / "private" / "deeper" / "tokens.json"
    save_tokens(path, TokenFile())  # the folders it makes are 0700
    shared.chmod(0o757)
    with pytest.raises(SharedFileError, match=f"the folder {shared} is writable by other users"):
        FileTokenVerifier(path)
    shared.chmod(0o700)
    FileTokenVerifier(path)  # fixed: accepted


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_file_another_user_owns_stops_the_verifier(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    save_tokens(path, TokenFile())
    os.chown(path, 65534, -1)  # nobody: they could chmod it and add tokens at will
    with pytest.raises(SharedFileError, match="belongs to another user"):
        FileTokenVerifier(path)


async def test_a_file_made_writable_by_others_while_in_use_refuses_every_token(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.json"
    tokens, token, _ = TokenFile().add("alice", "writer", now=NOW)
    save_tokens(path, tokens)
    verifier = FileTokenVerifier(path)
    assert await verifier.verify_token(token) is not None
    path.chmod(0o646)
    assert await verifier.verify_token(token) is None  # failing closed, not reading it
    path.chmod(0o600)
    assert await verifier.verify_token(token) is not None
