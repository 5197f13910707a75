"""``FileTokenVerifier`` follows its file: new tokens work, removed ones stop, a broken file
refuses everyone (failing closed) until it is fixed."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from thoughtledger.api.auth.tokens import (
    TokenFile,
    TokenFileError,
    load_tokens,
    save_tokens,
    token_hash,
)
from thoughtledger.api.auth.verifier import FileTokenVerifier

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
