"""The per-thought box the official server prints to stderr, without its colours.

``DISABLE_THOUGHT_LOGGING=true`` (any case) turns it off, as in the official server; the serve
entry point reads the variable and hands the server a sink, or none.
"""

import os
from collections.abc import Callable, Mapping

from thoughtledger.ledger.printable import visible
from thoughtledger.ledger.thought import CAMEL_NAMES
from thoughtledger.projections.entries import ThoughtEntry

DISABLE_ENV = "DISABLE_THOUGHT_LOGGING"

ThoughtSink = Callable[[str], None]
"""Where rendered thoughts go (the serve entry point writes them to stderr)."""


def thought_logging_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether to render each thought: unless ``DISABLE_THOUGHT_LOGGING`` is ``true``."""
    env = os.environ if environ is None else environ
    return env.get(DISABLE_ENV, "").strip().lower() != "true"


def render_thought(entry: ThoughtEntry) -> str:
    """Draw ``entry`` in a box headed like the official server's (``💭 Thought 2/5`` ...).

    Unlike the official box, every line is padded to the box's width and a multi-line thought
    keeps its lines, so the box stays closed; a thought is a client's text, so its control
    characters (and a branch id's) are shown as escapes, never sent to the operator's terminal.
    A mark the header does not word (one added to the definition of a thought) has a line of its
    own under the thought, by its camelCase name, as the client sent it.
    """
    if entry.is_revision:
        prefix = "🔄 Revision"
        context = f" (revising thought {entry.revises_thought})" if entry.revises_thought else ""
    elif entry.branch_from_thought:
        prefix = "🌿 Branch"
        context = f" (from thought {entry.branch_from_thought}, ID: {entry.branch_id})"
    else:
        prefix = "💭 Thought"
        context = ""
    header = visible(
        f"{prefix} {entry.thought_number}/{entry.total_thoughts}{context}", one_line=True
    )
    lines = [visible(line, one_line=True) for line in entry.thought.splitlines()] or [""]
    # The marks of the definition of a thought that the header does not word (a field added to
    # it), each on a line of its own under the thought: shown as they came, like the thought.
    more = entry.more.items()
    marks = [visible(f"{CAMEL_NAMES[name]}: {value}", one_line=True) for name, value in more]
    width = max(len(header), *(len(line) for line in [*lines, *marks]))
    border = "─" * (width + 2)
    body = "\n".join(f"│ {line.ljust(width)} │" for line in lines)
    if marks:
        body += f"\n├{border}┤\n" + "\n".join(f"│ {line.ljust(width)} │" for line in marks)
    return f"\n┌{border}┐\n│ {header.ljust(width)} │\n├{border}┤\n{body}\n└{border}┘"


__all__ = ["DISABLE_ENV", "ThoughtSink", "render_thought", "thought_logging_enabled"]
