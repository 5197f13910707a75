"""Pages of a session's history: the items of a window of its events, and the cursor between them.

A history item depends on its own event alone (see
:func:`thoughtledger.projections.entries.thought_entry`), so a page is built from a window of events
without folding the events before it: no context is carried from one page to the next except where
the next page starts. The one exception is a redaction whose text was not yet stripped from its
event (a redaction cut short after its ``thought.redacted`` event): the reader passes the versions
such events name, and the builder shows those thoughts redacted as the fold does. The items are
exactly those of :func:`thoughtledger.projections.answers.thought_history` for the same thoughts;
the property tests prove that the pages of a session, concatenated, are its whole history (filtered
by branch when asked).

A cursor is opaque to callers: URL-safe base64 of a small JSON array holding the session, the last
version read, the bound the reading stops at (a version, when the first page was read as of one;
else none, so a live session's newer thoughts are read too) and the branch filter.
"""

import base64
import binascii
import json
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.projections.actions import ActionEntry, action_of
from thoughtledger.projections.answers import JsonDict, thought_record
from thoughtledger.projections.entries import Folded, redacted, thought_entry

_CURSOR_FORMAT = 1
_BAD_CURSOR = "not a history cursor: pass the nextCursor of the previous page as it was"


@dataclass(frozen=True, slots=True)
class HistoryCursor:
    """Where the next page of a history starts, and what it reads.

    Attributes:
        session_id: The session paged.
        after_version: The last version the previous pages read (the next page starts after it).
        to_version: The version reading stops at, when pinned (a read as of a version or time);
            ``None``: the session's latest version at each page.
        branch: Only the thoughts of this branch (``None``: every thought).
        seen: Whether an earlier page held a thought (with a branch filter: the branch exists).
    """

    session_id: str
    after_version: int
    to_version: int | None = None
    branch: str | None = None
    seen: bool = False

    def encode(self) -> str:
        """The cursor as an opaque, URL-safe string."""
        fields = [
            _CURSOR_FORMAT,
            self.session_id,
            self.after_version,
            self.to_version,
            self.branch,
            self.seen,
        ]
        raw = json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode()
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str) -> "HistoryCursor":
        """Read a cursor :meth:`encode` wrote.

        Raises:
            InvalidInputError: ``text`` is not such a cursor.
        """
        if not isinstance(text, str) or not text or len(text) > 4096:
            raise InvalidInputError(_BAD_CURSOR)
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            fields = json.loads(raw.decode())
        except (binascii.Error, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            raise InvalidInputError(_BAD_CURSOR) from exc
        if not isinstance(fields, list) or len(fields) != 6 or fields[0] != _CURSOR_FORMAT:
            raise InvalidInputError(_BAD_CURSOR)
        _format, session_id, after, to, branch, seen = fields
        if not (
            isinstance(session_id, str)
            and _count(after)
            and (to is None or (_count(to) and to >= after))
            and (branch is None or isinstance(branch, str))
            and isinstance(seen, bool)
        ):
            raise InvalidInputError(_BAD_CURSOR)
        return cls(session_id, after, to, branch, seen)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def compact_size(item: JsonDict) -> int:
    """The UTF-8 bytes of ``item`` as compact JSON (the default measure of a page's size)."""
    return len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode())


@dataclass(slots=True)
class PageBuilder:
    """Collects one page of history items from windows of a session's events, fed in order.

    Pure: the caller reads the windows and feeds them; the builder decides what goes on the page
    and where the next page starts. A thought that would overflow ``limit`` items or
    ``max_bytes`` (measured by ``size_of``) ends the page, unless the page is still empty: a
    thought larger than the cap is returned alone, so that paging always moves on.

    Args:
        limit: Most items on the page (at least 1).
        branch: Only the thoughts of this branch, those
        :func:`~thoughtledger.projections.answers.branch_sets`
            lists under it (``None``: every thought).
        max_bytes: Most bytes the items may take, by ``size_of`` (``None``: no cap).
        size_of: How many bytes an item takes in the answer.
        after_version: The version the page starts after.
        redacted_versions: The versions ``thought.redacted`` events up to the page's bound name:
            their thoughts read ``[redacted]`` even where the text is still stored.
    """

    limit: int
    branch: str | None = None
    max_bytes: int | None = None
    size_of: Callable[[JsonDict], int] = compact_size
    after_version: int = 0
    redacted_versions: Collection[int] = frozenset()
    items: list[JsonDict] = field(default_factory=list)
    actions: list[ActionEntry] = field(default_factory=list)
    size: int = 0
    stopped: bool = False

    @property
    def full(self) -> bool:
        """Whether the page takes no more items (``limit`` reached, or one did not fit)."""
        return self.stopped or len(self.items) >= self.limit

    def feed(self, records: Iterable[Folded]) -> bool:
        """Take events in version order, from just after :attr:`after_version`; True once full.

        Every event before the first thought that does not fit is consumed (events that are no
        thoughts, or thoughts of another branch, are skipped even after the page is full, so a
        page that reaches the end says so); :attr:`after_version` moves to the last one
        consumed, which is where the next page starts. Without a branch filter, the actions
        consumed are kept in :attr:`actions` (each names the thought it followed, which an
        earlier page may hold).
        """
        for record in records:
            entry = thought_entry(record)
            if entry is not None and (self.branch is None or entry.branch == self.branch):
                if len(self.items) >= self.limit:
                    self.stopped = True
                    break
                if entry.version in self.redacted_versions and not entry.redacted:
                    entry = redacted(entry)
                item = thought_record(entry)
                size = self.size_of(item) if self.max_bytes is not None else 0
                if self.max_bytes is not None and self.items and self.size + size > self.max_bytes:
                    self.stopped = True
                    break
                self.items.append(item)
                self.size += size
            elif entry is None and self.branch is None:
                action = action_of(record)
                if action is not None:
                    self.actions.append(action)
            self.after_version = record.version
        return self.full


__all__ = ["HistoryCursor", "PageBuilder", "compact_size"]
