"""``FileTokenVerifier``: the SDK's ``TokenVerifier`` over a token file, re-read when it changes.

The file and every folder above it are stat'ed on every request (a few system calls, cheap next
to a request) and the file read again when its identity, size, modification time, mode or owner
changed, or the mode or owner of a folder above it, so a token revoked with
``thoughtledger token revoke`` stops working on its holder's next request, without restarting
the server. A file that disappears or turns unreadable while serving refuses every token until
it is fixed: failing closed. So does a file, or a folder above it, that another user could
change (see :mod:`~thoughtledger.adapters.auth.private_files`): it is refused at start and from
the request after it (or a folder) turns so; and once fixed as the log line says, tokens work
again from the next request, with no change to the file.
"""

import logging
import os
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from thoughtledger.adapters.auth.private_files import check_not_shared
from thoughtledger.adapters.auth.tokens import TokenFile, TokenFileError, load_tokens
from thoughtledger.api import SCOPE_PREFIX

_log = logging.getLogger(__name__)

_Stamp = tuple[tuple[int, ...], ...]
"""The file's (device, inode, size, modification time in ns, mode, owner), then each folder's
above it (device, inode, mode, owner): what says the file, or who may change it, changed."""


class FileTokenVerifier:
    """Verifies bearer tokens against a token file (see :mod:`thoughtledger.adapters.auth.tokens`).

    A known token becomes ``AccessToken(client_id=<principal name>,
    scopes=["thoughtledger:<role>"])``; anything else is refused (``None``), which the SDK answers
    with 401 and ``WWW-Authenticate``.
    """

    def __init__(self, path: Path) -> None:
        """Read the token file once, so a bad one stops the server before it starts.

        Raises:
            TokenFileError: The file is missing, unreadable or not a token file.
            SharedFileError: Another user could change the file or a folder above it.
        """
        self.path = path
        # Named once: what every request stats (pathlib's walk up the parents cost as much as
        # the system calls themselves: 14 µs a request, now 7).
        target = path.absolute()
        self._file = os.fspath(target)
        self._folders = [os.fspath(folder) for folder in target.parents]
        self._stamp = self._stat()
        self._tokens: TokenFile | None = _load(path)

    async def verify_token(self, token: str) -> AccessToken | None:
        """Return who ``token`` stands for, or ``None`` when the file does not hold it."""
        tokens = self._current()
        record = tokens.find(token) if tokens is not None else None
        if record is None:
            return None
        return AccessToken(token=token, client_id=record.name, scopes=[SCOPE_PREFIX + record.role])

    def _current(self) -> TokenFile | None:
        stamp = self._stat()
        if stamp == self._stamp:
            return self._tokens
        self._stamp = stamp
        try:
            self._tokens = _load(self.path)
        except TokenFileError as exc:
            self._tokens = None
            _log.warning("token_file_unusable reason=%r: every token refused until fixed", str(exc))
        return self._tokens

    def _stat(self) -> _Stamp | None:
        try:
            st = os.stat(self._file)
            folders = [os.stat(folder) for folder in self._folders]
        except OSError:
            return None
        own = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_uid)
        # A folder made writable by others while serving is noticed as the file is, and so is
        # its fix: the file is read (and checked) again either way.
        return (own, *((f.st_dev, f.st_ino, f.st_mode, f.st_uid) for f in folders))


def _load(path: Path) -> TokenFile:
    tokens = load_tokens(path)  # first: a missing file is named as such
    check_not_shared(path)
    return tokens


__all__ = ["FileTokenVerifier"]
