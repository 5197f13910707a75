"""Where an export goes: a file that appears only once whole, or standard output."""

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from thoughtledger.adapters.cli.common import CliError, UsageError


@contextlib.contextmanager
def atomic_file(target: Path, *, overwrite: bool) -> Iterator[TextIO]:
    """Write ``target`` all at once: into a temporary file beside it, moved into place at the end.

    On any failure the temporary file is removed and ``target`` is left as it was. The file is
    created readable by its owner only: exports hold everything the agents thought. Unless
    ``overwrite``, the file is moved into place only if nothing is there by then (a hard link
    cannot replace a file); where hard links are not supported, only if nothing was.

    Raises:
        CliError: The file cannot be created or written, or exists and ``overwrite`` is false.
    """
    try:
        fd, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as exc:
        raise CliError(f"cannot write {target}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        if overwrite:
            os.replace(temporary, target)
        else:
            _place_new(Path(temporary), target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, FileExistsError):
            raise exists(target) from exc
        if isinstance(exc, OSError):
            raise CliError(f"cannot write {target}: {exc.strerror or exc}") from exc
        raise


def exists(target: Path) -> CliError:
    """The error for an output file that is already there."""
    return CliError(f"{target} exists; --force to overwrite")


def output_path(given: str, example: str) -> Path:
    """The file ``-o``/``--html`` names, checked before anything is read or written.

    Args:
        given: The path as given.
        example: A file name to suggest when ``given`` is a directory.

    Raises:
        UsageError: It is a directory, or its folder does not exist.
    """
    target = Path(given)
    if target.is_dir():
        raise UsageError(f"{target} is a directory; name a file, such as {target / example}")
    if not target.parent.is_dir():
        raise UsageError(f"cannot write {target}: {target.parent} is not a directory")
    return target


@contextlib.contextmanager
def standard_output() -> Iterator[TextIO]:
    """Standard output as UTF-8 text with Unix line ends, whatever the locale's encoding."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # replaced by something text-only: it takes str as it is
        yield sys.stdout
        sys.stdout.flush()
        return
    out = io.TextIOWrapper(buffer, encoding="utf-8", newline="\n")
    try:
        yield out
    finally:
        out.detach()  # flushes, and leaves sys.stdout's own buffer open


def _place_new(temporary: Path, target: Path) -> None:
    try:
        os.link(temporary, target)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network and FAT file systems)
        if target.exists():
            raise FileExistsError(target) from None
        os.replace(temporary, target)
        return
    os.unlink(temporary)


__all__ = ["atomic_file", "exists", "output_path", "standard_output"]
