"""A session drawn as a tree: the main line, revisions marked, branches under their origin."""

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from rich.text import Text
from rich.tree import Tree

from thoughtledger.adapters.cli.common import plural, when
from thoughtledger.api import HistoryPage, LoopMark
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.printable import visible
from thoughtledger.ledger.thought import CAMEL_NAMES
from thoughtledger.projections.actions import ActionEntry, action_json, placed
from thoughtledger.projections.annotations import annotation_json, by_thought
from thoughtledger.projections.answers import branch_sets, thought_history
from thoughtledger.projections.entries import EXTRA_MARKS, Annotation, ThoughtEntry
from thoughtledger.projections.state import SessionState
from thoughtledger.projections.usage import cost_note

_BRANCH_KINDS = ("branch.opened", "branch.extended")
_MORE_KEYS = tuple(CAMEL_NAMES[name] for name in EXTRA_MARKS)
"""The camelCase keys of the marks a line notes after its thought (see :func:`_note_marks`)."""
ACTION_ARGUMENTS_SHOWN = 200
"""Characters of an action's arguments a line shows (``--json`` has them whole, as kept)."""


class Repeat(NamedTuple):
    """A thought shown as a repeat: its version and number, and the earlier one's."""

    version: int
    thought_number: int
    repeats_version: int
    repeats_number: int
    similarity: float


def repeats_of(state: SessionState, marks: Iterable[LoopMark]) -> dict[int, Repeat]:
    """The repeats among ``state``'s own thoughts, by version, from the ledger's loop marks.

    A fork's inherited thoughts are its source's (their marks are the source's): only the
    session's own thoughts are marked, as ``stats`` counts them.
    """
    numbers = {e.version: e.thought_number for e in state.thoughts if e.source is None}
    return {
        mark.version: Repeat(
            mark.version,
            numbers[mark.version],
            mark.repeats_version,
            numbers[mark.repeats_version],
            mark.similarity,
        )
        for mark in marks
        if mark.version in numbers and mark.repeats_version in numbers
    }


def session_tree(
    state: SessionState,
    *,
    current: int | None = None,
    marks: Iterable[LoopMark] = (),
    actions: Iterable[ActionEntry] = (),
) -> Tree:
    """Draw ``state`` as a tree.

    Main-line thoughts are the trunk, in the order they were recorded. A revision says which
    thought it revises, and that thought says which revisions it has. Each branch hangs under
    the latest main-line thought with its origin number recorded before the branch began (or
    under the root when there is none). Each action hangs under the thought it followed (one
    taken before any thought, under the root, first), after the thought's annotations.

    Args:
        state: The session (now, or as of some version).
        current: The version to emphasise (the event just replayed), if any.
        marks: The session's loop marks (``ledger.loops.marks``): repeats are marked.
        actions: The session's actions up to ``state``'s version (``ledger.actions``).
    """
    repeats = repeats_of(state, marks)
    actions = list(actions)
    tree = Tree(headline(state, repeats=len(repeats), actions=len(actions)), guide_style="dim")
    taken = placed(state.thoughts, actions)
    _act(tree, taken.pop(None, ()))
    revised_by: defaultdict[int, list[int]] = defaultdict(list)
    for entry in state.thoughts:
        if entry.revises_thought is not None and entry.kind not in _BRANCH_KINDS:
            revised_by[entry.revises_thought].append(entry.thought_number)
    trunk: list[tuple[int, ThoughtEntry, Tree]] = []
    # Each thought number's annotations hang under the first thought shown with that number.
    notes = dict(by_thought(state.annotations))
    # A branch's members, in the order recorded. Found by place rather than version: a fork's
    # inherited thoughts carry its source's versions, which its own may repeat.
    members: defaultdict[str, list[tuple[int, ThoughtEntry]]] = defaultdict(list)
    for place, entry in enumerate(state.thoughts):
        if entry.kind in _BRANCH_KINDS and entry.branch_id is not None:
            members[entry.branch_id].append((place, entry))
        else:
            node = tree.add(
                _label(entry, revised_by.get(entry.thought_number, []), current, repeats)
            )
            _annotate(node, notes.pop(entry.thought_number, ()))
            _act(node, taken.get(place, ()))
            trunk.append((place, entry, node))
    for branch in state.branches.values():
        branched = members.get(branch.branch_id, [])
        began = branched[0][0] if branched else len(state.thoughts)
        origins = [
            node
            for place, entry, node in trunk
            if entry.thought_number == branch.from_thought and place < began
        ]
        parent = origins[-1] if origins else tree
        note = "" if origins else " (its origin is not on the main line)"
        node = parent.add(
            Text.assemble(
                ("⑂ branch ", "magenta"),
                (branch.branch_id, "bold magenta"),
                f" from #{branch.from_thought}{note}",
            )
        )
        for place, entry in branched:
            leaf = node.add(_label(entry, [], current, repeats))
            _annotate(leaf, notes.pop(entry.thought_number, ()))
            _act(leaf, taken.get(place, ()))
    for left in notes.values():  # a thought not held here (as of an earlier version, say)
        _annotate(tree, left)
    return tree


def _annotate(node: Tree, annotations: tuple[Annotation, ...]) -> None:
    for annotation in annotations:
        node.add(annotation_line(annotation))


def _act(node: Tree, actions: Iterable[ActionEntry]) -> None:
    for action in actions:
        node.add(action_line(action))


def action_line(action: ActionEntry, *, after: bool = False) -> Text:
    """One action in a line: ``↳ called tool(arguments)``, its sender's text made visible.

    The tool's name and arguments are an agent's text: set as text (never read as markup) and
    shown, never obeyed as a terminal sequence; arguments past
    :data:`ACTION_ARGUMENTS_SHOWN` characters are cut here (``--json`` has them whole).
    ``after``: say which thought it followed (a list shows no tree to hang it under).
    """
    arguments = action.arguments
    if len(arguments) > ACTION_ARGUMENTS_SHOWN:
        arguments = arguments[:ACTION_ARGUMENTS_SHOWN] + "…"
    line = Text.assemble(("↳ called ", "magenta"), (visible(action.name, one_line=True), "bold"))
    line.append("(" + visible(arguments, one_line=True) + ")")
    if action.arguments_cut:
        line.append(" (arguments cut when recorded)", style="dim")
    if after and action.after_thought is not None:
        line.append(f" after #{action.after_thought}", style="magenta")
    line.append(f"  [v{action.version} · {when(action.recorded_at)}]", style="dim")
    return line


def annotation_line(annotation: Annotation) -> Text:
    """One annotation in a line: ``✎ #3 label (score) by who: note``, its note made visible."""
    line = Text.assemble(("✎ ", "cyan"), (f"#{annotation.thought_number} ", "bold"))
    line.append(annotation.label, style="bold cyan")
    if annotation.score is not None:
        line.append(f" ({annotation.score:g})", style="cyan")
    if annotation.by is not None:
        line.append(f" by {visible(annotation.by, one_line=True)}", style="dim")
    if annotation.note:
        # A note is a reviewer's free text: shown, never obeyed as a terminal sequence.
        line.append(": " + visible(annotation.note, one_line=True))
    line.append(f"  [v{annotation.version} · {when(annotation.recorded_at)}]", style="dim")
    return line


def headline(state: SessionState, *, repeats: int = 0, actions: int = 0) -> Text:
    """One line about a session: id, size, loops, status and when it started and last moved."""
    loops = (f" · ⟳ {plural(repeats, 'repeat')}", "bold red") if repeats else ""
    return Text.assemble(
        ("session ", "bold"),
        (state.session_id, "bold cyan"),
        f" · {counts(state, actions=actions)}",
        loops,
        " · ",
        (state.status, _status_style(state.status)),
        (f" · {when(state.started_at)} → {when(state.updated_at)}", "dim"),
    )


def counts(state: SessionState, *, actions: int = 0) -> str:
    """``N thoughts, R revisions, B branches`` of a session (and annotations and actions, if any).

    ``actions``: how many actions the session holds (its state keeps none to count).
    """
    inherited = sum(1 for entry in state.thoughts if entry.source is not None)
    parts = [
        plural(len(state.thoughts), "thought")
        + (f" ({inherited} from its source)" if inherited else ""),
        plural(state.revisions, "revision"),
        plural(len(state.branches), "branch"),
    ]
    if state.annotations:
        parts.append(plural(len(state.annotations), "annotation"))
    if actions:
        parts.append(plural(actions, "action"))
    return ", ".join(parts)


def summary(state: SessionState) -> str:
    """The session in one line of plain text: counts, the estimate and the status."""
    last = state.last
    estimate = f"thought {last.thought_number} of {last.total_thoughts}" if last else "no thoughts"
    return f"{counts(state)} · {estimate} · {state.status}"


def session_json(
    state: SessionState, marks: Iterable[LoopMark] = (), actions: Iterable[ActionEntry] = ()
) -> dict[str, Any]:
    """The session as JSON: its facts, every thought with all its fields, and its branches.

    ``marks``: the session's loop marks (``ledger.loops.marks``), listed as its repeats;
    ``actions``: its actions (``ledger.actions``), each as kept, naming the thought it followed.
    """
    return {
        "sessionId": state.session_id,
        "version": state.version,
        "status": state.status,
        "startedAt": format_time(state.started_at) if state.started_at else None,
        "updatedAt": format_time(state.updated_at) if state.updated_at else None,
        "metadata": dict(state.metadata),
        "predecessorId": state.predecessor_id,
        "revisions": state.revisions,
        "thoughts": [
            # A fork's inherited thought: its version is its source's, which this names.
            item if entry.source is None else {**item, "source": entry.source}
            for entry, item in zip(state.thoughts, thought_history(state), strict=True)
        ],
        "branches": branch_sets(state),
        "annotations": [annotation_json(annotation) for annotation in state.annotations],
        "actions": [action_json(action) for action in actions],
        "repeats": [_repeat_json(repeat) for repeat in repeats_of(state, marks).values()],
    }


def _repeat_json(repeat: Repeat) -> dict[str, Any]:
    return {
        "version": repeat.version,
        "thoughtNumber": repeat.thought_number,
        "repeatsVersion": repeat.repeats_version,
        "repeatsThoughtNumber": repeat.repeats_number,
        "similarity": round(repeat.similarity, 3),
    }


def page_lines(
    page: HistoryPage,
    notes: Mapping[int, tuple[Annotation, ...]] | None = None,
    *,
    forked: bool = False,
) -> list[Text]:
    """A page of a session's thoughts: a headline, then one line per thought, in version order.

    A page is a slice of the session, so it is a list rather than a tree: each thought says what
    it revises and which branch it is on, which is what the tree's shape says. ``notes`` (by
    thought number) are printed under the first thought on the page with that number, as the
    tree hangs them; the page's actions each after the thought it followed, which it names.
    """
    left = dict(notes or {})
    first = page.items[0]["version"] if page.items else None
    last = page.items[-1]["version"] if page.items else None
    span = f"versions {first}-{last}" if first is not None else "no thoughts on this page"
    lines = [
        Text.assemble(
            ("session ", "bold"),
            (page.session_id, "bold cyan"),
            f" · {plural(page.thought_count, 'thought')}"
            f"{' (the first from its source)' if forked else ''} · ",
            (page.status, _status_style(page.status)),
            (f" · {span} of {page.version}", "dim"),
        )
    ]
    actions = list(page.actions)
    for item in page.items:
        lines.extend(_acted(actions, before=item["version"]))
        number = item["thoughtNumber"]
        label = Text.assemble((f"#{number}", "bold"), " ")
        if "branchId" in item:
            label.append(f"⑂ {item['branchId']}: ", style="magenta")
        if item["kind"] == "thought.revised" or item.get("isRevision"):
            target = f" #{item['revisesThought']}" if "revisesThought" in item else ""
            label.append(f"↺ revises{target}: ", style="yellow")
        # rich would drop a bell or a carriage return silently: shown instead, as everywhere.
        label.append(visible(item["thought"], one_line=True))
        _note_marks(label, [(name, item[name]) for name in _MORE_KEYS if name in item])
        if not item["nextThoughtNeeded"]:
            label.append("  ✓ done", style="green")
        label.append(
            f"  [v{item['version']} · {item['recordedAt']} · est. {item['totalThoughts']}]",
            style="dim",
        )
        lines.append(label)
        lines.extend(Text("    ") + line for line in map(annotation_line, left.pop(number, ())))
    lines.extend(_acted(actions, before=None))
    return lines


def _acted(actions: list[ActionEntry], *, before: int | None) -> list[Text]:
    """Take from ``actions`` those before version ``before`` (``None``: all) as list lines."""
    taken = 0
    while taken < len(actions) and (before is None or actions[taken].version < before):
        taken += 1
    lines = [Text("    ") + action_line(action, after=True) for action in actions[:taken]]
    del actions[:taken]
    return lines


def _label(
    entry: ThoughtEntry, revisions: list[int], current: int | None, repeats: dict[int, Repeat]
) -> Text:
    label = Text.assemble((f"#{entry.thought_number}", "bold"), " ")
    repeat = repeats.get(entry.version) if entry.source is None else None
    if repeat is not None:
        # Which earlier thought it repeats: a number can recur, so its version too.
        label.append(f"⟳ repeats #{repeat.repeats_number} (v{repeat.repeats_version}): ", "red")
    if entry.kind == "thought.revised" or entry.is_revision:
        target = f" #{entry.revises_thought}" if entry.revises_thought is not None else ""
        label.append(f"↺ revises{target}: ", style="yellow")
    if entry.generation is not None:
        label.append(f"[{entry.generation.model}] ", style="blue")
    shown = visible(entry.thought, one_line=True)
    emphasised = entry.source is None and entry.version == current
    label.append(shown, style="reverse" if emphasised else "")
    _note_marks(label, [(CAMEL_NAMES[name], value) for name, value in entry.more.items()])
    if revisions:
        shown = ", ".join(f"#{number}" for number in revisions)
        label.append(f"  (revised by {shown})", style="yellow")
    if not entry.next_thought_needed:
        label.append("  ✓ done", style="green")
    # A fork's inherited thought is numbered in its source's versions, never taken for its own.
    version = f"v{entry.version}" if entry.source is None else f"source v{entry.version}"
    trailer = f"{version} · {when(entry.recorded_at)} · est. {entry.total_thoughts}"
    if entry.generation is not None:
        trailer += f" · {cost_note(entry.generation)}"
    label.append(f"  [{trailer}]", style="dim")
    return label


def _note_marks(label: Text, marks: list[tuple[str, object]]) -> None:
    # The marks of the definition of a thought that a label does not draw (a field added to it),
    # by camelCase name as ``--json`` has them; a client's text, so shown, never obeyed.
    if marks:
        noted = "; ".join(f"{name}: {value}" for name, value in marks)
        label.append(f"  ({visible(noted, one_line=True)})", style="cyan")


def _status_style(status: str) -> str:
    return {"complete": "green", "cleared": "red", "expired": "red"}.get(status, "yellow")


__all__ = [
    "ACTION_ARGUMENTS_SHOWN",
    "Repeat",
    "action_line",
    "annotation_line",
    "counts",
    "headline",
    "page_lines",
    "repeats_of",
    "session_json",
    "session_tree",
    "summary",
]
