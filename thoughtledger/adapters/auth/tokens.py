"""Bearer tokens and the file that knows them: only their SHA-256 hashes are ever stored.

A token is 32 random bytes, ``tl_`` + URL-safe base64: high-entropy, so a plain SHA-256 is the
right hash (a slow password hash buys nothing against guessing 256 bits). The file is JSON::

    {"version": 1, "tokens": [{"id": "3f9a2b1c", "name": "alice", "role": "writer",
                               "sha256": "…", "created": "2026-05-01T14:02:03Z"}]}

It is written atomically (a private temporary file renamed over it), mode 0600, in a folder made
0700 if this module creates it. Reading it never creates or alters anything.
"""

import base64
import hashlib
import json
import os
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

try:
    import fcntl
except ImportError:  # Windows: no flock; concurrent edits of one token file are not serialised
    fcntl = None  # type: ignore[assignment]

import platformdirs

from thoughtledger.api import ROLES, Role
from thoughtledger.ledger.errors import InvalidInputError, LedgerError
from thoughtledger.ledger.ids import check_id

_T = TypeVar("_T")
FILE_VERSION = 1
TOKEN_PREFIX = "tl_"  # noqa: S105  # the public prefix of every token, not a secret
TOKEN_BYTES = 32


class TokenFileError(LedgerError):
    """The token file is missing, unreadable, not a token file, or cannot be written."""


def default_token_path() -> Path:
    """``tokens.json`` in the per-user data folder, beside the default ledger file."""
    return Path(platformdirs.user_data_dir("thoughtledger", appauthor=False)) / "tokens.json"


def new_token() -> str:
    """A fresh token: ``tl_`` + 32 random bytes in URL-safe base64 (no padding)."""
    raw = base64.urlsafe_b64encode(secrets.token_bytes(TOKEN_BYTES)).rstrip(b"=").decode()
    return TOKEN_PREFIX + raw


def token_hash(token: str) -> str:
    """The hex SHA-256 of ``token``: what the file stores and the verifier compares."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """Return ``name`` if it is a valid principal name (the rule of session ids).

    Raises:
        InvalidInputError: It is not 1-128 characters from ``A-Z a-z 0-9 . _ : @ -`` starting
            with a letter or digit.
    """
    return check_id(name, "principal name")


def check_role(role: str) -> Role:
    """Return ``role`` if it is one of :data:`thoughtledger.api.access.ROLES`.

    Raises:
        InvalidInputError: It is not.
    """
    for known in ROLES:
        if role == known:
            return known
    raise InvalidInputError(f"unknown role {role!r}: use {', '.join(ROLES)}")


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """What the file keeps about one token: never the token itself.

    Attributes:
        id: Short public id, to revoke one token of several.
        name: The principal the token stands for.
        role: What the principal may do with this token.
        sha256: Hex SHA-256 of the token.
        created: When it was made (UTC).
    """

    id: str
    name: str
    role: Role
    sha256: str
    created: datetime

    def as_json(self) -> dict[str, str]:
        """The record as the file stores it."""
        return {
            "id": self.id,
            "name": self.name,
            "role": self.role,
            "sha256": self.sha256,
            "created": self.created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }


@dataclass(frozen=True, slots=True)
class TokenFile:
    """The tokens a file holds, oldest first. Immutable: changes return a new value to save."""

    records: tuple[TokenRecord, ...] = ()

    def add(self, name: str, role: Role, *, now: datetime) -> tuple["TokenFile", str, TokenRecord]:
        """A new token for ``name``: return the file with it, the token (shown once), its record.

        Raises:
            InvalidInputError: ``name`` or ``role`` is not valid.
        """
        record_name, record_role = check_name(name), check_role(role)
        taken = {record.id for record in self.records}
        token_id = secrets.token_hex(4)
        while token_id in taken:  # 32 bits: a clash is rare, never silent
            token_id = secrets.token_hex(4)
        token = new_token()
        record = TokenRecord(
            token_id, record_name, record_role, token_hash(token), now.replace(microsecond=0)
        )
        return TokenFile((*self.records, record)), token, record

    def revoke(self, name: str, token_id: str | None = None) -> tuple["TokenFile", int]:
        """Drop every token of ``name`` (or only the one with ``token_id``); return how many.

        Raises:
            InvalidInputError: ``name`` is not a valid name, or it holds no such token.
        """
        check_name(name)
        gone = [r for r in self.records if r.name == name and token_id in (None, r.id)]
        if not gone:
            which = f"no token {token_id!r} of {name!r}" if token_id else f"no token of {name!r}"
            raise InvalidInputError(f"{which} in the token file (see: thoughtledger token list)")
        kept = tuple(record for record in self.records if record not in gone)
        return TokenFile(kept), len(gone)

    def find(self, token: str) -> TokenRecord | None:
        """The record of ``token``, compared in constant time against every stored hash."""
        digest = token_hash(token).encode()
        found: TokenRecord | None = None
        for record in self.records:
            # Every record is compared, so the time taken says nothing about which matched.
            if secrets.compare_digest(digest, record.sha256.encode()):
                found = record
        return found


def load_tokens(path: Path) -> TokenFile:
    """Read the token file at ``path``.

    Raises:
        TokenFileError: It is missing, unreadable, or not a token file of a known version.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TokenFileError(
            f"no token file at {path} (create one: thoughtledger token add NAME --file {path})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenFileError(f"cannot read the token file {path}: {_reason(exc)}") from exc
    try:
        return _decode(json.loads(text))
    except (ValueError, KeyError, TypeError) as exc:
        raise TokenFileError(f"{path} is not a thoughtledger token file: {exc}") from exc


def load_tokens_or_empty(path: Path) -> TokenFile:
    """Like :func:`load_tokens`, but a missing file holds no tokens (and is not created).

    Raises:
        TokenFileError: It exists but is unreadable or not a token file.
    """
    if not path.exists():
        return TokenFile()
    return load_tokens(path)


def save_tokens(path: Path, tokens: TokenFile) -> None:
    """Write ``tokens`` to ``path`` atomically, mode 0600 (a missing folder is made 0700).

    Raises:
        TokenFileError: The folder or the file cannot be written.
    """
    body = {"version": FILE_VERSION, "tokens": [record.as_json() for record in tokens.records]}
    try:
        _private_folder(path.parent)
        # mkstemp creates the file 0600 before anything is written to it.
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(body, out, indent=2)
                out.write("\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise TokenFileError(f"cannot write the token file {path}: {_reason(exc)}") from exc


def update_tokens(path: Path, change: Callable[[TokenFile], tuple[TokenFile, _T]]) -> _T:
    """Read the file (missing: empty), apply ``change``, save what it returns; return the rest.

    Two commands changing the file at once take turns (a lock on its folder, where the system
    has ``flock``), so neither loses the other's token.

    Raises:
        TokenFileError: The file is unreadable, not a token file, or cannot be written.
        InvalidInputError: Whatever ``change`` raises for bad input (nothing is written).
    """
    try:
        _private_folder(path.parent)
        folder = os.open(path.parent, os.O_RDONLY)
    except OSError as exc:
        raise TokenFileError(f"cannot write the token file {path}: {_reason(exc)}") from exc
    try:
        if fcntl is not None:
            fcntl.flock(folder, fcntl.LOCK_EX)
        tokens, result = change(load_tokens_or_empty(path))
        save_tokens(path, tokens)
        return result
    finally:
        os.close(folder)  # closing releases the lock


def _private_folder(folder: Path) -> None:
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for created in reversed(missing):
        created.mkdir(mode=0o700)
        created.chmod(0o700)  # whatever the umask took away or left


def _decode(data: Any) -> TokenFile:
    if not isinstance(data, dict):
        raise TypeError("expected a JSON object")
    if data.get("version") != FILE_VERSION:
        raise ValueError(f"unknown version {data.get('version')!r} (this one reads {FILE_VERSION})")
    records = []
    for item in data["tokens"]:
        digest = item["sha256"]
        if not isinstance(digest, str) or len(digest) != 64:
            raise ValueError(f"malformed sha256 of token {item.get('id')!r}")
        created = datetime.strptime(item["created"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        try:
            name, role = check_name(item["name"]), check_role(item["role"])
        except InvalidInputError as exc:
            raise ValueError(str(exc)) from exc
        records.append(TokenRecord(str(item["id"]), name, role, digest, created))
    return TokenFile(tuple(records))


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


__all__ = [
    "FILE_VERSION",
    "TOKEN_PREFIX",
    "TokenFile",
    "TokenFileError",
    "TokenRecord",
    "check_name",
    "check_role",
    "default_token_path",
    "load_tokens",
    "load_tokens_or_empty",
    "new_token",
    "save_tokens",
    "token_hash",
    "update_tokens",
]
