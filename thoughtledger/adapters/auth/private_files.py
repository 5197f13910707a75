"""The token file must be writable by its owner alone (and root), folders above it included.

Whoever can write the token file can add a token of any role (an auditor's reads every
session), and whoever can write its folder, or any folder above it, can swap the file for one
of their own. So a server refuses a token file that another user could change, the way OpenSSH
refuses an ``authorized_keys`` others can write: the file and every folder up to ``/`` must be
owned by this user or by root and writable by no group and no other user. A folder with the
sticky bit (``/tmp``) is the exception: there others may add files but not rename or replace
ours.

POSIX only: on Windows file modes say nothing of who may write, and no check is made.
"""

import os
import stat
from pathlib import Path

from thoughtledger.adapters.auth.tokens import TokenFileError

_SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH


class SharedFileError(TokenFileError):
    """A token file, or a folder it is in, can be changed by another user."""


def check_not_shared(path: Path) -> None:
    """Refuse ``path`` if a user other than this one (or root) could change it or its folders.

    Raises:
        SharedFileError: The file, or a folder on its way from ``/``, is writable by its group
            or by others (a folder with the sticky bit aside), or owned by another user; the
            message names it and the command that fixes it.
        TokenFileError: ``path`` cannot be examined (missing, or a folder cannot be read).
    """
    if os.name != "posix":
        return
    me = os.geteuid()
    try:
        target = path.absolute()
        mode = os.stat(target)
    except OSError as exc:
        raise TokenFileError(f"cannot read the token file {path}: {exc.strerror}") from exc
    _check_one(target, mode, me, is_file=True)
    for folder in target.parents:
        try:
            _check_one(folder, os.stat(folder), me, is_file=False)
        except OSError as exc:
            raise TokenFileError(f"cannot examine {folder}: {exc.strerror}") from exc


def _check_one(path: Path, st: os.stat_result, me: int, *, is_file: bool) -> None:
    what = "the token file" if is_file else "the folder"
    if st.st_uid not in (me, 0):
        raise SharedFileError(
            f"{what} {path} belongs to another user (uid {st.st_uid}), who could add tokens "
            "to it: use a token file in a folder of your own"
        )
    shared = st.st_mode & _SHARED_WRITE
    if not shared or (not is_file and st.st_mode & stat.S_ISVTX):
        return
    who = (
        "its group and other users"
        if shared == _SHARED_WRITE
        else ("its group" if shared & stat.S_IWGRP else "other users")
    )
    octal = f"{stat.S_IMODE(st.st_mode):04o}"
    raise SharedFileError(
        f"{what} {path} is writable by {who} (mode {octal}), so they could add tokens: "
        f"refused (fix it: chmod go-w {path})"
    )


__all__ = ["SharedFileError", "check_not_shared"]
