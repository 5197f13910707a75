"""``thoughtledger stats``: how your agents think, over every session (or a filtered few)."""

import argparse
import csv
import sys
from dataclasses import asdict, fields
from typing import TYPE_CHECKING

from rich.text import Text

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    JSON_HELP,
    Commands,
    Ui,
    add_session_filters,
    command,
    ledger_from,
    plural,
    shared_options,
)
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.printable import visible
from thoughtledger.projections.loop_counts import LoopStats
from thoughtledger.projections.usage import ModelUsage

if TYPE_CHECKING:
    from thoughtledger.api import GroupStats, LabelStats, LedgerStats


def register(commands: Commands) -> None:
    """Add the ``stats`` command."""
    parser = command(commands, "stats", run)
    add_session_filters(parser)
    parser.add_argument(
        "--loops",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="count sessions with loops and their repeats (the default: counted from the loop "
        "marks stored with each thought, at the cost of the other figures; --loops is still "
        "accepted); --no-loops leaves them out",
    )
    output = shared_options(parser).add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help=JSON_HELP)
    output.add_argument("--csv", action="store_true", help="print CSV: one row per group")


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Compute the figures in the database and print them.

    Raises:
        LedgerError: The ledger failed.
    """
    async with ledger_from(args, read_only=True) as ledger:
        with ui.progress("Computing statistics"):
            stats = await ledger.stats.summarize(
                since=args.since, until=args.until, agent=args.agent, client=args.client
            )
            models, labels = await ledger.stats.log_figures(since=args.since, until=args.until)
            loops = (
                await ledger.stats.loops(
                    since=args.since, until=args.until, agent=args.agent, client=args.client
                )
                if args.loops
                else None
            )
    if args.json:
        by_model = [usage.as_json() for usage in models]
        by_label = [figures.as_json() for figures in labels]
        ui.json(
            {
                "filter": _filter_json(args),
                **stats.as_json(),
                "byModel": by_model,
                "byLabel": by_label,
                "loops": None if loops is None else loops.as_json(),
            }
        )
    elif args.csv:
        _csv(stats)
    else:
        _tables(ui, stats)
        if loops is not None:
            _loops(ui, loops)
        _models(ui, models)
        _labels(ui, labels)
    return EXIT_OK


def _labels(ui: Ui, labels: "list[LabelStats]") -> None:
    """Annotations per label, when reviewers annotated any thoughts."""
    if not labels:
        return
    table = ui.table(
        "label", "annotations", "sessions", "thoughts", "score mean", title="\nby annotation label"
    )
    for figures in labels:
        mean = "-" if figures.score_mean is None else f"{figures.score_mean:g} ({figures.scored})"
        table.add_row(
            figures.label,
            f"{figures.annotations:,}",
            f"{figures.sessions:,}",
            f"{figures.thoughts:,}",
            mean,
        )
    ui.show(table)


def _noun(count: float, noun: str) -> str:
    """``noun`` as ``count`` of them reads: ``1 repeat``, ``2.5 branches``."""
    return plural(1, noun).split(" ", 1)[1] if count == 1 else plural(2, noun).split(" ", 1)[1]


LOOPS_SHOWN = 10
"""Sessions with the most repeats listed by the table (``--json`` lists every one)."""


def _loops(ui: Ui, loops: LoopStats) -> None:
    """Sessions with loops: a thought repeating one of the last 50 of its session."""
    if not loops.sessions:
        return
    table = ui.table("loops", "", title=None)
    share = loops.sessions_with_loops / loops.sessions
    table.add_row("sessions with loops", f"{loops.sessions_with_loops:,} ({share:.1%})")
    some = "thought repeats" if loops.repeats == 1 else "thoughts repeat"
    table.add_row("repeats", f"{loops.repeats:,} {some} an earlier one")
    for session_id, count in loops.repeats_per_session[:LOOPS_SHOWN]:
        table.add_row(
            f"  {visible(session_id, one_line=True)}", f"{count:,} {_noun(count, 'repeat')}"
        )
    ui.out.print()  # apart from the table above it, as every other block is
    ui.show(table)


def _models(ui: Ui, models: list[ModelUsage]) -> None:
    """Per model: thoughts it wrote (tokens, latency, cost) or thought (captured reasoning)."""
    if not models:
        return
    table = ui.table(
        "model",
        "provider",
        "thoughts",
        "captured",
        "reasoning tokens",
        "tokens in/out",
        "latency p50/p95",
        "cost",
        title="\nby model (thoughts written by sequential_thinking_external, and captured "
        "reasoning)",
    )
    for usage in models:
        written = usage.thoughts - usage.captured
        table.add_row(
            # A captured model's name is whatever its sender wrote: text, never markup.
            Text(visible(usage.model, one_line=True)),
            Text(visible(usage.provider, one_line=True)),
            f"{usage.thoughts:,}",
            f"{usage.captured:,}",
            "-" if usage.reasoning_tokens is None else f"{usage.reasoning_tokens:,}",
            f"{usage.prompt_tokens:,}/{usage.completion_tokens:,}" if written else "-",
            "-"
            if usage.latency_ms_p50 is None
            else f"{usage.latency_ms_p50}/{usage.latency_ms_p95} ms",
            "-" if usage.cost is None else f"${usage.cost:.4f}",
        )
    ui.show(table)


def _tables(ui: Ui, stats: "LedgerStats") -> None:
    o = stats.overall
    table = ui.table("overall", "", title=None)
    gap = (
        f"p50 {stats.gap_p50_seconds:g} s · p95 {stats.gap_p95_seconds:g} s"
        if stats.gap_p50_seconds is not None and stats.gap_p95_seconds is not None
        else "-"
    )
    drift = (
        f"mean {o.drift_mean:+g} · p50 {o.drift_p50:+d} · p95 {o.drift_p95:+d}"
        if o.drift_mean is not None and o.drift_p50 is not None and o.drift_p95 is not None
        else "-"
    )
    for name, value in (
        ("sessions", f"{o.sessions:,}"),
        ("events", f"{o.events:,}"),
        ("thoughts", f"{o.thoughts:,}"),
        ("completion rate", f"{o.completion_rate:.1%} of sessions end with no next thought"),
        ("revision rate", f"{o.revision_rate:.1%} of thoughts are revisions"),
        ("branch rate", f"{o.branch_rate:.1%} of sessions branch"),
        ("fan-out", f"{o.fan_out:g} {_noun(o.fan_out, 'branch')} per session that branches"),
        ("thoughts per session", f"p50 {o.thoughts_p50} · p95 {o.thoughts_p95}"),
        ("estimate drift", f"{drift} (last totalThoughts - first)"),
        ("time between thoughts", gap),
    ):
        table.add_row(name, value)
    ui.show(table)
    if not o.sessions:
        return
    groups = ui.table("agent", "client", *_COLUMNS, title="\nby agent / client")
    for agent, client, group in stats.by_agent:
        groups.add_row(agent or "-", client or "-", *_cells(group))
    ui.show(groups)
    days = ui.table("day (UTC)", *_COLUMNS, title="\nby day the session started")
    for day, group in stats.by_day:
        days.add_row(day, *_cells(group))
    ui.show(days)


_COLUMNS = ("sessions", "thoughts", "complete", "revisions", "branching", "thoughts p50/p95")


def _cells(group: "GroupStats") -> tuple[str, ...]:
    return (
        f"{group.sessions:,}",
        f"{group.thoughts:,}",
        f"{group.completion_rate:.1%}",
        f"{group.revision_rate:.1%}",
        f"{group.branch_rate:.1%}",
        f"{group.thoughts_p50}/{group.thoughts_p95}",
    )


def _csv(stats: "LedgerStats") -> None:
    names = [field.name for field in fields(stats.overall)]
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["scope", "agent", "client", "day", *names, "gap_p50_s", "gap_p95_s"])
    gaps = [stats.gap_p50_seconds, stats.gap_p95_seconds]
    writer.writerow(["all", "", "", "", *asdict(stats.overall).values(), *gaps])
    for agent, client, group in stats.by_agent:
        writer.writerow(["agent", agent or "", client or "", "", *asdict(group).values(), "", ""])
    for day, group in stats.by_day:
        writer.writerow(["day", "", "", day, *asdict(group).values(), "", ""])


def _filter_json(where: argparse.Namespace) -> dict[str, str | None]:
    return {
        "since": format_time(where.since) if where.since else None,
        "until": format_time(where.until) if where.until else None,
        "agent": where.agent,
        "client": where.client,
    }
