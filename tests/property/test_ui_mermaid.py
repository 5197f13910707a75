"""The Mermaid graph holds any thought's text as text: no character of it ends a label."""

import re

from hypothesis import given
from hypothesis import strategies as st

from thoughtledger.adapters.ui.graph import LABEL_CHARS, mermaid, session_graph

NODE = re.compile(r'^    v(\d+)\["([^"\n]*)"\]$')


def _events(texts: list[str]) -> list[dict[str, object]]:
    """A session as the page reads it: started, then a thought per text on the main line."""
    started: dict[str, object] = {"k": "session.started", "v": 1}
    thoughts: list[dict[str, object]] = [
        {"k": "thought.recorded", "v": i + 2, "n": i + 1, "tt": len(texts), "nx": True, "x": t}
        for i, t in enumerate(texts)
    ]
    return [started, *thoughts]


@given(st.lists(st.text(max_size=200), min_size=1, max_size=8))
def test_every_thought_is_one_quoted_node_whatever_its_text(texts: list[str]) -> None:
    chart = mermaid(session_graph(_events(texts)))
    lines = chart.splitlines()
    assert lines[0] == "flowchart TD"
    nodes = [NODE.match(line) for line in lines if line.startswith("    v") and "[" in line]
    assert all(node is not None for node in nodes), chart
    labels = [node.group(2) for node in nodes if node is not None]
    assert len(labels) == len(texts)
    for label in labels:
        assert not set(label) & set('"<>`\n\r'), label
        # Entities stand for the characters; the text is cut, never the entity.
        assert len(re.sub(r"#\w+;", "x", label)) <= len("#99 ") + LABEL_CHARS + 8
    edges = [line for line in lines if " --> " in line]
    assert len(edges) == len(texts) - 1  # the main line, one thought to the next
