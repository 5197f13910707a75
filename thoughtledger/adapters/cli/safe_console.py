"""A rich console that shows control characters instead of sending them to the terminal.

Commands print thoughts, agent names and messages that someone else wrote. Rather than trust
every call site to remember :func:`~thoughtledger.ledger.printable.visible`, the consoles the
command line writes through apply it at the two points all their output passes: a string
becoming text (before layout, so a table's columns fit the escapes; the escapes are dimmed),
and the segments becoming the characters written (whatever was built as rich text directly).
Rich's own control segments (cursor moves of a progress bar) are left alone: they are not text.
"""

from collections.abc import Iterable, Iterator
from typing import Any

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from thoughtledger.ledger.printable import ESCAPED, visible


class SafeConsole(Console):
    """A :class:`rich.console.Console` whose text never carries a control character.

    It reads no markup and no emoji codes either: what it prints is data (``[/x]`` in a thought
    is text, not a closing tag that fails the command; ``:fire:`` stays as typed). Styles are
    given as rich text or ``style=``.
    """

    def __init__(self, **options: Any) -> None:
        """A console as :class:`rich.console.Console` makes it, with markup and emoji off."""
        super().__init__(**{"markup": False, "emoji": False, **options})

    def render_str(self, text: str, **options: Any) -> Text:
        """Turn ``text`` into rich text, its control characters shown as dim escapes.

        Escaped before markup and rich's own clean-up run: rich drops a bell or a carriage
        return silently, and this shows it.
        """
        shown = visible(text)
        rendered = super().render_str(shown, **options)
        if shown is not text:
            rendered.highlight_regex(ESCAPED, "dim")
        return rendered

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # The last point before the file: text built as rich Text directly is caught here.
        return super()._render_buffer(_visible_segments(buffer))


def _visible_segments(buffer: Iterable[Segment]) -> Iterator[Segment]:
    for segment in buffer:
        if segment.control or not segment.text:
            yield segment
        else:
            yield Segment(visible(segment.text), segment.style, segment.control)


__all__ = ["SafeConsole"]
