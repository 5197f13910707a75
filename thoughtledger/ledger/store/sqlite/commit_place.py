"""Where a commit at ``durability="full"`` waits for its ``fsync``: on the event loop, or a thread.

On the loop a commit costs nothing but itself; handed to a worker thread it costs two thread
switches (measured here: 3,000 one-event appends a second inline against 2,100-2,400 through a
thread, at about 230 µs per ``fdatasync``). But on a disk that syncs slowly, waiting on the loop
stalls every other task of the process. So commits wait on the loop until they are slow
*as a rule*: :data:`SLOW_STREAK` in a row, not one (a checkpoint's sync of the database file
now and then, or a neighbour's burst, must not move every later commit to a thread for good);
once on a thread, :data:`FAST_STREAK` fast ones in a row bring them back.
"""

SLOW_COMMIT_SECONDS = 0.002
"""A commit slower than this counts as slow."""
SLOW_STREAK = 3
"""Slow commits in a row that move the next ones to a worker thread."""
FAST_STREAK = 64
"""Fast commits in a row, on a thread, that bring the next ones back to the loop."""


class CommitPlace:
    """Chooses where the next commit waits, from how long the last ones took (a store's part).

    Attributes:
        in_thread: Whether the next commit waits on a worker thread.
    """

    def __init__(self) -> None:
        self.in_thread = False
        self._streak = 0

    def note(self, seconds: float) -> None:
        """Count a commit that took ``seconds`` (its place is :attr:`in_thread`)."""
        slow = seconds > SLOW_COMMIT_SECONDS
        # The streak counts the commits that argue for moving: slow ones on the loop, fast
        # ones on a thread; any other resets it.
        self._streak = self._streak + 1 if slow != self.in_thread else 0
        if self._streak >= (FAST_STREAK if self.in_thread else SLOW_STREAK):
            self.in_thread, self._streak = not self.in_thread, 0


__all__ = ["FAST_STREAK", "SLOW_COMMIT_SECONDS", "SLOW_STREAK", "CommitPlace"]
