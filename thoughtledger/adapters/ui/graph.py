"""A session's graph (thoughts as nodes; the main line, revisions and branches as edges) as Mermaid.

``thoughtledger export SESSION --format mermaid`` writes it; the session page's **Graph** tab
draws the same graph (``static/session-views.js``, from the same events as the page reads them,
so the two stay one shape): each thought a node, the main line from one to the next, a revision
a dotted edge from the thought it revises, a branch an edge from the thought it opens from
(that thought is a fork point), and a fork's source as the first node.

Text from the ledger goes into Mermaid's quoted labels with every character Mermaid reads as
markup (``"``, ``#``, ``<``, ``>``, ``&``, backquote) written as its entity code, cut to
:data:`LABEL_CHARS`.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from thoughtledger.adapters.ui.payload import JsonDict

LABEL_CHARS = 60
"""The most characters of a thought's text a node shows."""

_BRANCHES = ("branch.opened", "branch.extended")
_THOUGHTS = ("thought.recorded", "thought.revised", *_BRANCHES)
_ENTITIES = {'"': "#quot;", "#": "#35;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;"}


@dataclass
class Node:
    """A thought: its version, number, lane ("" the main line, else its branch) and text."""

    version: int
    number: int
    branch: str
    revision: bool
    text: str


@dataclass
class Graph:
    """A session's thoughts and the edges between them, in version order."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[Node, Node, str, str]] = field(default_factory=list)
    """(from, to, kind, label): kind ``next``, ``revises`` or ``branch``."""
    fork: JsonDict | None = None
    """A fork's source: ``{"s": id, "v": version}``."""


def session_graph(events: Sequence[JsonDict]) -> Graph:
    """The graph of a session from its events as the page reads them (see ``payload``)."""
    graph = Graph()
    last_of_number: dict[int, Node] = {}
    last_in_lane: dict[str, Node] = {}
    for e in events:
        kind = e["k"]
        if kind == "session.started" and e.get("fork"):
            graph.fork = e["fork"]
        if kind not in _THOUGHTS and not e.get("gen"):
            continue
        branch = str(e["b"]) if kind in _BRANCHES and e.get("b") is not None else ""
        revision = kind == "thought.revised" or e.get("ir") is True
        node = Node(e["v"], e["n"], branch, revision, str(e.get("x", "")))
        before = last_in_lane.get(branch)
        if before is not None:
            graph.edges.append((before, node, "next", ""))
        elif branch and e.get("bf") in last_of_number:
            graph.edges.append((last_of_number[e["bf"]], node, "branch", branch))
        if revision and e.get("rv") in last_of_number:
            graph.edges.append((last_of_number[e["rv"]], node, "revises", ""))
        last_in_lane[branch] = node
        if not branch:
            last_of_number[node.number] = node
        graph.nodes.append(node)
    return graph


def _label(text: str, most: int = LABEL_CHARS) -> str:
    one = " ".join(text.split())
    if len(one) > most:
        one = one[: most - 1] + "…"
    return "".join(_ENTITIES.get(char, char) for char in one)


def mermaid(graph: Graph, *, title: str | None = None) -> str:
    """The graph as a Mermaid flowchart (top to bottom), ending with a newline."""
    lines = ["flowchart TD"]
    if title is not None:
        lines.insert(0, f"%% {_label(title, 200)}")
    if graph.fork is not None:
        origin = _label(f"forked from {graph.fork['s']} at version {graph.fork['v']}", 200)
        lines.append(f'    fork(["{origin}"])')
    for node in graph.nodes:
        mark = " ↺" if node.revision else ""
        lines.append(f'    v{node.version}["{_label(f"#{node.number}{mark} {node.text}")}"]')
    if graph.fork is not None and graph.nodes:
        lines.append(f"    fork -.-> v{graph.nodes[0].version}")
    arrows = {"next": "-->", "revises": "-. revises .->"}
    for start, end, kind, label in graph.edges:
        arrow = f'-->|"branch {_label(label)}"|' if kind == "branch" else arrows[kind]
        lines.append(f"    v{start.version} {arrow} v{end.version}")
    origins = {start.version for start, _, kind, _ in graph.edges if kind == "branch"}
    lines += [
        "    classDef revision fill:#fde7c6,stroke:#a15c00",
        "    classDef branch fill:#eadcf7,stroke:#7a3db8",
        "    classDef origin stroke-width:3px",
    ]
    for name, chosen in (
        ("revision", [n.version for n in graph.nodes if n.revision]),
        ("branch", [n.version for n in graph.nodes if n.branch]),
        ("origin", sorted(origins)),
    ):
        if chosen:
            lines.append(f"    class {','.join(f'v{v}' for v in chosen)} {name}")
    return "\n".join(lines) + "\n"


__all__ = ["LABEL_CHARS", "Graph", "Node", "mermaid", "session_graph"]
