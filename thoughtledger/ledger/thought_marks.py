"""A thought's fields as typed keyword arguments, for type checkers and editors.

Generated from :mod:`thoughtledger.ledger.thought` by ``tools/gen_thought_marks.py``; do not
edit. After a field is added to the definition, run that tool again (a test fails until then).

:class:`MarkArguments` is what ``**marks: Unpack[MarkArguments]`` takes (PEP 692): each optional
mark by its snake_case name, so a misspelt mark is refused by the type checker, not only when the
thought is recorded. :class:`ThoughtArguments` adds the core fields, each required. ``None``
means not given.
"""

from typing import TypedDict


class MarkArguments(TypedDict, total=False):
    """The optional marks of a thought, by snake_case name; ``None`` means not given."""

    is_revision: bool | None
    """Whether this revises previous thinking (say which in revisesThought)."""

    revises_thought: int | None
    """Which thought number is being reconsidered."""

    branch_from_thought: int | None
    """Branching point thought number, to explore an alternative path (name the branch in branchId).
    """

    branch_id: str | None
    """Branch identifier."""

    needs_more_thoughts: bool | None
    """If more thoughts are needed, even after what seemed like the end."""


class ThoughtArguments(MarkArguments):
    """Every field of a thought: the core ones required, then the optional marks."""

    thought: str
    """Your current thinking step."""

    thought_number: int
    """Current thought number (e.g., 1, 2, 3); it can go beyond the total."""

    total_thoughts: int
    """Estimated total thoughts needed (e.g., 5, 10); adjust it up or down as you progress."""

    next_thought_needed: bool
    """Whether another thought step is needed: true if you need more thinking, even at what seemed
    like the end; false only when truly done.
    """


__all__ = ["MarkArguments", "ThoughtArguments"]
