"""A captured session where an agent acts: a call before any thought, two after the first, one
after the second; one argument holds console markup, one a terminal escape."""

from thoughtledger.api import CapturedAction, CapturedReasoning, CapturedSpan, Scope

SESSION = "acting"
MARKUP = '{"path": "[bold red]cache.py[/]"}'
"""Arguments that rich would read as markup if they were not set as text."""
ESCAPE = '{"cmd": "echo \x1b[2J"}'
"""Arguments holding a terminal escape (clear the screen)."""

SPAN = CapturedSpan(
    trace_id="0af7651916cd43dd8448eb211c80319c",
    span_id="b7ad6b7169203331",
    dialect="gen_ai",
    conversation=SESSION,
    agent="planner",
    client="tests",
    model="claude-x",
    parts=(
        CapturedAction("list_files", None, "{}"),
        CapturedReasoning("The cache misses on every cold start; read its key."),
        CapturedAction("[link=https://example.org]read_file[/link]", "call_1", MARKUP),
        CapturedAction("run", "call_2", ESCAPE),
        CapturedReasoning("The key holds the time: that is the miss."),
        CapturedAction("edit_file", "call_3", '{"line": 3}'),
    ),
)
"""Recorded as versions 1 (start), 2 (list_files), 3 (#1), 4 and 5 (after #1), 6 (#2), 7."""

NAMES = ["list_files", "[link=https://example.org]read_file[/link]", "run", "edit_file"]
VERSIONS = [2, 4, 5, 7]
AFTER = [None, 1, 1, 2]


async def record(scope: Scope) -> None:
    """Capture :data:`SPAN` through ``scope``."""
    report = await scope.capture([SPAN])
    assert (report.thoughts, report.actions) == (2, 4)
