"""Pausing Python's cyclic garbage collector while a bulk fold builds millions of objects."""

import contextlib
import gc
from collections.abc import Iterator


class _GcPause:
    """Pauses the cyclic garbage collector while any bulk fold runs (folds may overlap)."""

    def __init__(self) -> None:
        self.active = 0
        self.resume = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        """Pause collection for the duration; the last overlapping fold to end restores it.

        A bulk fold builds millions of objects, none of which can form a cycle, yet every full
        collection walks them all: rebuilding 1M events ran 19 full collections that took 4.9 s
        of its 11.8 s. Reference counting still frees everything; cycles made elsewhere
        meanwhile are collected once the pause ends.
        """
        if self.active == 0:
            self.resume = gc.isenabled()
            gc.disable()
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1
            if self.active == 0 and self.resume:
                gc.enable()


cyclic_gc_paused = _GcPause()
"""Use as ``with cyclic_gc_paused():`` around a bulk fold."""


__all__ = ["cyclic_gc_paused"]
