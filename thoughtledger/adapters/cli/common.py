"""What every command shares: errors and exit codes, output, times, ledgers and session names."""

import argparse
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeAlias

from rich import box
from rich.console import Console, RenderableType
from rich.table import Table

from thoughtledger.adapters.cli.catalogue import summary
from thoughtledger.adapters.cli.first_run import (
    demo_until_there_is_a_ledger,
    where_ledgers_come_from,
)
from thoughtledger.adapters.cli.parsing import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    Parser,
    UsageError,
)
from thoughtledger.adapters.cli.safe_console import SafeConsole
from thoughtledger.adapters.common.options import bounded
from thoughtledger.api import READ_URL_ENV, Ledger, open_ledger
from thoughtledger.ledger.errors import InvalidInputError, LedgerNotFoundError
from thoughtledger.ledger.printable import visible

if TYPE_CHECKING:  # the bars load with the first one shown (most commands show none)
    from rich.progress import Progress, TaskID

_PLAIN_WIDTH = 4096
"""Width of piped output: wide enough that nothing wraps, so every line greps whole."""


_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
r"""What JSON leaves raw but a terminal obeys: DEL, C1 (``\x9b`` is a CSI) and the bidi
overrides, embeddings and isolates (JSON itself escapes C0)."""


def json_text(data: Any, *, indent: int | None = None) -> str:
    r"""``data`` as JSON, safe to write on a terminal.

    Each character of :data:`_UNSAFE_IN_JSON` is written as its ``\uXXXX`` escape, so the text
    decodes exactly as it was and a terminal is shown nothing raw.
    """
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    return _UNSAFE_IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


@dataclass(frozen=True, slots=True)
class Ui:
    """Where output goes: data on ``out`` (stdout), progress and errors on ``err`` (stderr).

    Both consoles show control characters as escapes (see :class:`SafeConsole`); only
    :meth:`json` writes a text exactly as it is, JSON-escaped.
    """

    out: Console
    err: Console

    @classmethod
    def create(cls) -> "Ui":
        """Consoles on the current stdout and stderr; plain and unwrapped when not a terminal."""
        out, err = SafeConsole(file=sys.stdout), SafeConsole(file=sys.stderr)
        for console in (out, err):
            if not console.is_terminal:
                console.width = _PLAIN_WIDTH
        return cls(out, err)

    @property
    def plain(self) -> bool:
        """Whether stdout is piped or redirected (no colour, no boxes, nothing interactive)."""
        return not self.out.is_terminal

    def show(self, renderable: RenderableType) -> None:
        """Print a table or a tree: as drawn on a terminal, without trailing blanks when piped."""
        if not self.plain:
            self.out.print(renderable)
            return
        with self.out.capture() as captured:
            self.out.print(renderable)
        sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))

    def json(self, data: Any) -> None:
        """Write ``data`` as JSON on stdout, bypassing rich (no highlighting, no wrapping)."""
        sys.stdout.write(json_text(data, indent=2) + "\n")

    def table(self, *columns: str, title: str | None = None) -> Table:
        """A table in the house style: boxed on a terminal, bare columns when piped."""
        return Table(
            *columns,
            title=title,
            box=None if self.plain else box.ROUNDED,
            header_style="bold",
            title_justify="left",
            pad_edge=False,
        )

    @contextmanager
    def progress(
        self, description: str, total: int | None = None, *, in_bytes: bool = False
    ) -> Iterator["Step"]:
        """Show a progress bar on stderr while the block runs (nothing when stderr is piped)."""
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
        )

        columns: list[ProgressColumn] = [
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
        ]
        if total is not None:
            columns.append(DownloadColumn() if in_bytes else MofNCompleteColumn())
        with Progress(
            *columns, console=self.err, transient=True, disable=not self.err.is_terminal
        ) as bar:
            task = bar.add_task(description, total=total)
            yield Step(bar, task)


@dataclass(frozen=True, slots=True)
class Step:
    """Advances one progress bar."""

    bar: "Progress"
    task: "TaskID"

    def advance(self, amount: float = 1) -> None:
        """Move the bar on by ``amount``."""
        self.bar.advance(self.task, amount)


Handler = Callable[[argparse.Namespace, Ui], Awaitable[int]]
"""What runs a command: the parsed arguments and the consoles in, an exit code out."""

Commands: TypeAlias = "argparse._SubParsersAction[Parser]"
"""What ``add_subparsers()`` returns: where each command module adds its command."""


SHARED_TITLE = "shared options"
"""The title of the options commands share (``--db``, ``--read-url``, ``--json``), shown last."""

DB_HELP = (
    "the ledger: a file, sqlite:///file.db or postgresql://user@host/db (default: "
    "$THOUGHTLEDGER_URL, else the local file; `thoughtledger doctor` says which)"
)
READ_URL_HELP = f"a hot standby of the PostgreSQL ledger to read from (default: ${READ_URL_ENV})"
JSON_HELP = "print JSON instead of text"


def command(commands: Commands, name: str, handler: Handler, *, reads: bool = True) -> Parser:
    """Add command ``name`` that ``handler`` runs, with the ledger options; return its parser.

    Args:
        commands: Where the command is added.
        name: The command's name.
        handler: What runs it.
        reads: Whether it reads the ledger (it then takes ``--read-url``, a standby to read
            from); a command that only writes (``record``, ``import``) takes ``--db`` alone.
    """
    said = summary(name)  # the command list's words (the catalogue)
    parser: Parser = commands.add_parser(name, help=said, description=said)
    add_db_option(parser, reads=reads)
    parser.set_defaults(handler=handler)
    return parser


def shared_options(parser: argparse.ArgumentParser) -> "argparse._ArgumentGroup":
    """The group of the options every command shares (``--db``, ``--read-url``, ``--json``).

    One group, titled :data:`SHARED_TITLE`, shown after the command's own options, so each
    command's help lists them last, in the same order, with the same words.
    """
    for group in parser._action_groups:
        if group.title == SHARED_TITLE:
            return group
    return parser.add_argument_group(SHARED_TITLE)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: machine-readable output instead of tables and trees."""
    shared_options(parser).add_argument("--json", action="store_true", help=JSON_HELP)


AGENT_FILTER_HELP = "only sessions of this agent"
CLIENT_FILTER_HELP = "only sessions from this client"


def add_session_filters(parser: argparse.ArgumentParser, *, times: str = "started") -> None:
    """Add ``--since``, ``--until``, ``--agent`` and ``--client``, in that order.

    On a command that reads, ``--agent`` and ``--client`` pick sessions; on one that records
    (``record``, ``fork``, ``serve``) the same names say who records.

    Args:
        parser: The command's parser.
        times: What ``--since`` and ``--until`` bound: when sessions ``started``, or when
            thoughts were ``recorded``.
    """
    parser.add_argument(
        "--since", metavar="TIME", type=parse_time, help=f"{times} at or after TIME"
    )
    parser.add_argument("--until", metavar="TIME", type=parse_time, help=f"{times} before TIME")
    parser.add_argument("--agent", metavar="NAME", help=AGENT_FILTER_HELP)
    parser.add_argument("--client", metavar="NAME", help=CLIENT_FILTER_HELP)


def add_db_option(parser: argparse.ArgumentParser, *, reads: bool = True) -> None:
    """Add ``--db URL`` and, for a command that reads, ``--read-url URL``."""
    group = shared_options(parser)
    group.add_argument("--db", metavar="URL", help=DB_HELP)
    if reads:
        group.add_argument("--read-url", metavar="URL", help=READ_URL_HELP)


@asynccontextmanager
async def ledger_from(args: argparse.Namespace, *, read_only: bool) -> AsyncIterator[Ledger]:
    """Open the ledger the command names; a command never expires a session (no TTL).

    Args:
        args: The parsed command line (its ``--db`` and ``--read-url``, else
            ``$THOUGHTLEDGER_READ_URL``: a hot standby that takes the reads).
        read_only: Open an existing ledger for reading only: a missing one, or a database that
            is not a ledger, is refused and left exactly as it was. Only commands that record
            (``import``) pass ``False``, which creates the ledger when it is missing.

    Raises:
        InvalidInputError: The URL is of no known form.
        StoreError: The ledger cannot be opened (missing, unreachable, not a ledger, too new).
    """
    read_url = getattr(args, "read_url", None) or os.environ.get(READ_URL_ENV) or None
    ui = Ui.create()
    url = args.db
    if read_only and not url:
        url = demo_until_there_is_a_ledger(
            lambda said: ui.err.print(said, style="dim", highlight=False, soft_wrap=True)
        )
    bar = UpgradeBar(ui)
    try:
        async with open_ledger(
            url, ttl=None, read_only=read_only, progress=bar.report, read_url=read_url
        ) as ledger:
            bar.close()  # the upgrade, if any, is over once the ledger is open
            yield ledger
    except LedgerNotFoundError as exc:
        raise CliError(f"{exc}{where_ledgers_come_from(args.db)}") from exc
    finally:
        bar.close()


SETTLE_PAGE = 10_000
"""Events the loop marks take in between two moves of the progress line (after a bulk write)."""


async def settle_loop_marks(ledger: Ledger, ui: Ui) -> int:
    """After a bulk write, bring the loop marks up to the log's end; how many events taken in.

    A bulk write (``record``, ``import``) leaves its thoughts' loop marks to follow the log,
    and a closing ledger takes in only a few pages: without this, every later ``stats`` (a
    read, which writes nothing) would fold the rest again. Paid once, here, after the writes
    and outside their transactions.

    Raises:
        LedgerError: The store failed (the thoughts are recorded; the marks stay behind, and
            the next writable opening takes them in).
    """
    taken = 0
    with ui.progress("Finding repeated thoughts") as step:
        while (count := await ledger.loops.catch_up(events=SETTLE_PAGE)) > 0:
            taken += count
            step.advance(count)
            if count < SETTLE_PAGE:
                break
    return taken


class UpgradeBar:
    """A progress bar on stderr for an upgrade that goes through the whole log (else nothing).

    Its :meth:`report` is the ``progress`` of :func:`thoughtledger.api.open_ledger`: a bar
    appears at the first report and goes at :meth:`close` (nothing when stderr is piped).
    """

    def __init__(self, ui: Ui) -> None:
        self._ui = ui
        self._bars = ExitStack()
        self._shown: dict[str, tuple[Step, int]] = {}

    def close(self) -> None:
        """Take the bars away (again: nothing)."""
        self._bars.close()

    def report(self, description: str, done: int, total: int) -> None:
        """Move the bar of ``description`` to ``done`` of ``total`` (starting it if new)."""
        if description not in self._shown:
            step = self._bars.enter_context(self._ui.progress(description, total))
            self._shown[description] = (step, 0)
        step, before = self._shown[description]
        step.advance(done - before)
        self._shown[description] = (step, done)


def whole(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""
    return bounded(int, lambda value: value >= minimum, f"a whole number >= {minimum}")


_AGE = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_CLOCK = re.compile(r"\d{1,2}:\d{2}(:\d{2}(\.\d{1,6})?)?")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_time(text: str, *, now: datetime | None = None) -> datetime:
    """Read a time as people type it; times without a zone are UTC, as the ledger shows them.

    Accepted: ISO 8601 (``2024-05-01T14:02:03Z``, ``2024-05-01 14:02``, ``2024-05-01``), a time
    today (``14:02``), an age (``90s``, ``15m``, ``2h``, ``7d``, ``1w``) or ``now``.

    Raises:
        argparse.ArgumentTypeError: The text is none of those.
    """
    now = now or datetime.now(UTC)
    cleaned = text.strip()
    age = _AGE.fullmatch(cleaned)
    if cleaned == "now":
        return now
    if age is not None:
        return now - timedelta(**{_UNITS[age.group(2)]: float(age.group(1))})
    if _CLOCK.fullmatch(cleaned):
        hours, rest = cleaned.split(":", 1)
        cleaned = f"{now.date().isoformat()}T{int(hours):02d}:{rest}"
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"malformed time {text!r}: use ISO 8601 (2024-05-01T14:02:03Z), a time today "
            "(14:02) or an age (15m, 2h, 7d)"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def when(moment: datetime | None) -> str:
    """A time as the command line shows it: UTC, to the second."""
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def plural(count: int, noun: str) -> str:
    """``1 thought``, ``2 thoughts``, ``2 branches``."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun}{'es' if noun.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def clip(text: str, width: int) -> str:
    """``text`` on one line, its control characters shown, cut to ``width`` with an ellipsis."""
    flat = " ".join(text.split())
    # Cut, then escape: an escape is never cut in two (a hostile text comes out a little wider).
    return visible(flat if len(flat) <= width else flat[: width - 1] + "…", one_line=True)


async def resolve_session(ledger: Ledger, given: str) -> str:
    """Return the session ``given`` names: its exact id, or the one id it is a prefix of.

    Raises:
        UsageError: The id is malformed, matches several sessions, or none (with the closest
            ids as suggestions).
    """
    try:
        match = await ledger.find_session(given)
    except InvalidInputError as exc:
        raise UsageError(str(exc)) from None
    if match.session_id is not None:
        return match.session_id
    if match.several:
        raise UsageError(f"{given!r} matches several sessions: {', '.join(match.several[:5])}...")
    close = match.close
    hint = f"did you mean {' or '.join(close)}?" if close else "list them: thoughtledger sessions"
    raise UsageError(f"no session {given!r} in this ledger; {hint}")


async def check_version(ledger: Ledger, session_id: str, version: int | None, typed: str) -> None:
    """Refuse ``version`` past the session's end, in the words the user typed (``--at 99``).

    Raises:
        UsageError: The session has fewer events than ``version``.
    """
    if version is None:
        return
    head = await ledger.head(session_id)
    last = 0 if head is None else head.version
    if version > last:
        raise UsageError(
            f"{typed} is past the end of session {session_id}: it has "
            f"{plural(last, 'event')} (versions 1 to {last})"
        )


__all__ = [
    "AGENT_FILTER_HELP",
    "CLIENT_FILTER_HELP",
    "DB_HELP",
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "JSON_HELP",
    "READ_URL_ENV",
    "READ_URL_HELP",
    "SHARED_TITLE",
    "CliError",
    "Commands",
    "Handler",
    "Parser",
    "Step",
    "Ui",
    "UpgradeBar",
    "UsageError",
    "add_db_option",
    "add_json_option",
    "add_session_filters",
    "check_version",
    "clip",
    "command",
    "json_text",
    "ledger_from",
    "parse_time",
    "plural",
    "resolve_session",
    "shared_options",
    "when",
    "whole",
]
