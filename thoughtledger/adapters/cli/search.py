"""``thoughtledger search QUERY``: the thoughts of every session holding some words, best first."""

import argparse

from rich.text import Text

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    add_session_filters,
    command,
    ledger_from,
    when,
    whole,
)
from thoughtledger.api import SearchResult
from thoughtledger.ledger.printable import visible

_QUERY_HELP = (
    'words a thought must all hold; "a phrase"; prefix* ; -word or -"a phrase" to exclude '
    "(quote the whole query for your shell)"
)


def register(commands: Commands) -> None:
    """Add the ``search`` command."""
    parser = command(commands, "search", run)
    parser.add_argument("query", metavar="QUERY", help=_QUERY_HELP)
    parser.add_argument("--session", metavar="SESSION", help="only this session's thoughts")
    add_session_filters(parser, times="recorded")
    parser.add_argument(
        "--limit",
        metavar="N",
        type=whole(1),
        default=20,
        help="at most N a page (default 20, at most 100)",
    )
    parser.add_argument("--page", metavar="CURSOR", help="the page a previous search named")
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Print the hits as a table (or JSON).

    Raises:
        LedgerError: The ledger failed, or the query or a filter is invalid.
    """
    async with ledger_from(args, read_only=True) as ledger:
        page = await ledger.search(
            args.query,
            session_id=args.session,
            agent=args.agent,
            client=args.client,
            since=args.since,
            until=args.until,
            limit=min(args.limit, 100),
            cursor=args.page,
        )
    if args.json:
        ui.json(page.as_json())
        return EXIT_OK
    if not page.results:
        ui.out.print("no thought matches")
        return EXIT_OK
    table = ui.table("session", "version", "thought", "recorded", "snippet")
    for result in page.results:
        table.add_row(
            result.session_id,
            str(result.version),
            str(result.thought_number),
            when(result.recorded_at),
            _marked(result),
        )
    ui.show(table)
    if page.next_cursor is not None:
        ui.out.print(f"(more: --page {page.next_cursor})", style="dim")
    return EXIT_OK


def _marked(result: SearchResult) -> Text:
    """The snippet, its hits in bold, every control character shown as its escape."""
    text, shown, at = result.snippet.text, Text(), 0
    for start, end in result.snippet.highlights:
        shown.append(visible(text[at:start], one_line=True))
        shown.append(visible(text[start:end], one_line=True), style="bold yellow")
        at = end
    shown.append(visible(text[at:], one_line=True))
    return shown
