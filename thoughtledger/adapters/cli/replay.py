"""``thoughtledger replay``: step through a session event by event, seeing it grow."""

import argparse
import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

from rich.text import Text

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    clip,
    command,
    json_text,
    ledger_from,
    resolve_session,
    when,
)
from thoughtledger.adapters.cli.tree import session_tree, summary
from thoughtledger.adapters.common.options import bounded
from thoughtledger.api import LoopMark
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import (
    ActionTaken,
    BranchExtended,
    BranchOpened,
    SessionCleared,
    SessionExpired,
    SessionStarted,
    ThoughtAnnotated,
    ThoughtCaptured,
    ThoughtGenerated,
    ThoughtRedacted,
    ThoughtRevised,
)
from thoughtledger.projections.actions import ActionEntry, actions_in
from thoughtledger.projections.answers import full_history, session_view
from thoughtledger.projections.state import SessionState

Step = tuple[RecordedEvent, SessionState]
KeyReader = Callable[[float | None], str]
"""Waits up to a timeout (``None``: forever) for one key press; ``""`` when none came."""


def register(commands: Commands) -> None:
    """Add the ``replay`` command."""
    parser = command(commands, "replay", run)
    parser.add_argument("session", metavar="SESSION", help="session id (or a unique prefix)")
    parser.add_argument(
        "--speed",
        metavar="S",
        type=_speed,
        help="play by itself at S events per second (on a terminal; q stops)",
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Replay the session: interactive on a terminal, every step printed when piped.

    Raises:
        UsageError: Unknown session.
        LedgerError: The ledger failed.
    """
    async with ledger_from(args, read_only=True) as ledger:
        session_id = await resolve_session(ledger, args.session)
        steps = [step async for step in ledger.replay(session_id)]
        marks = await ledger.loops.marks(session_id, to_version=steps[-1][1].version)
    if args.json:
        for number, (record, state) in enumerate(steps, start=1):
            line = {"step": number, "of": len(steps), "event": full_history([record])[0]}
            line["view"] = session_view(state)
            sys.stdout.write(json_text(line) + "\n")
    elif ui.plain or not sys.stdin.isatty():
        for number, (record, state) in enumerate(steps, start=1):
            ui.out.print(_step_line(number, len(steps), record))
            ui.out.print(f"    → {summary(state)}", style="dim", highlight=False)
    else:
        _interactive(ui, steps, args.speed, marks)
    return EXIT_OK


def describe(record: RecordedEvent) -> str:
    """What one event did, in words."""
    event = record.event
    match event:
        case SessionStarted():
            facts = ", ".join(f"{key}={value}" for key, value in sorted(event.metadata.items()))
            return f"session started ({facts})" if facts else "session started"
        case SessionCleared():
            return f"session cleared ({event.reason})" if event.reason else "session cleared"
        case SessionExpired():
            return f"session expired after {event.idle_seconds:.0f} s idle"
        case ThoughtRedacted():
            return (
                f"#{event.thought_number} (version {event.version}) redacted by {event.by}: "
                f"{event.reason}"
            )
        case ThoughtAnnotated():
            score = f" ({event.score:g})" if event.score is not None else ""
            who = f" by {event.by}" if event.by else ""
            note = f": {event.note}" if event.note else ""
            return f"#{event.thought_number} annotated {event.label}{score}{who}{note}"
        case ThoughtGenerated():
            by = f"{event.generation.model} wrote"
            kind = {"thought.revised": " a revision", "branch.opened": " a branch opening"}.get(
                event.kind, ""
            )
            return f"#{event.thought_number} ({by}{kind}): {event.thought}"
        case ThoughtCaptured():
            capture = event.capture
            by = f" {capture.model}" if capture.model else ""
            return f"#{event.thought_number} (captured {capture.form}{by}): {event.thought}"
        case ActionTaken():
            after = f"after #{event.after_thought} " if event.after_thought else ""
            return f"action {after}{event.name}({event.arguments})"
        case BranchOpened() | BranchExtended():
            verb = "opens" if isinstance(event, BranchOpened) else "extends"
            where = f"{verb} branch {event.branch_id} from #{event.branch_from_thought}"
            return f"#{event.thought_number} {where}: {event.thought}"
        case ThoughtRevised():
            target = f" #{event.revises_thought}" if event.revises_thought else ""
            return f"#{event.thought_number} revises{target}: {event.thought}"
        case _:
            return f"#{event.thought_number} {event.thought}"


def _step_line(number: int, total: int, record: RecordedEvent) -> Text:
    return Text.assemble(
        (f"[{number}/{total}] ", "bold"),
        (f"v{record.version} {when(record.recorded_at)} {record.event_type}  ", "dim"),
        clip(describe(record), 200),
    )


def _interactive(ui: Ui, steps: list[Step], speed: float | None, marks: Sequence[LoopMark]) -> None:
    timeout = 1 / speed if speed else None
    # The tree hangs each action taken so far under its thought, as ``show`` does.
    acted: list[ActionEntry] = []
    with _ctrl_c_interrupts(), _keys() as read_key:
        for number, (record, state) in enumerate(steps, start=1):
            acted += actions_in([record])
            ui.out.clear()
            ui.out.print(_step_line(number, len(steps), record))
            ui.out.print()
            ui.out.print(session_tree(state, current=record.version, marks=marks, actions=acted))
            ui.out.print()
            hint = "playing: any key skips ahead, q stops" if timeout else "Enter/space: next"
            ui.out.print(f"{hint} · q: quit", style="dim")
            if number < len(steps) and read_key(timeout) in ("q", "Q"):
                return


@contextlib.contextmanager
def _ctrl_c_interrupts() -> Iterator[None]:
    """Let Ctrl-C stop the key wait at once (``KeyboardInterrupt``, which the CLI reports).

    The wait is a plain ``select`` inside the command's coroutine. asyncio's own Ctrl-C handler
    only cancels that coroutine at its next ``await``, which never comes while it waits, so the
    first Ctrl-C went unnoticed. The ledger is closed by then: nothing is left to unwind.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _keys() -> Iterator[KeyReader]:
    """Read single key presses (no Enter needed) while the block runs; restore the terminal."""
    try:
        import termios
        import tty
    except ImportError:  # not POSIX: fall back to whole lines
        yield lambda timeout: sys.stdin.readline().strip()[:1]
        return
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:

        def read(timeout: float | None) -> str:
            ready, _, _ = select.select([fd], [], [], timeout)
            return os.read(fd, 1).decode(errors="replace") if ready else ""

        yield read
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


_speed = bounded(
    float, lambda value: 0 < value <= 1000, "a speed in events per second, 0 < S <= 1000"
)
