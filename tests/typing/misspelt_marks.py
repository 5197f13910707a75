"""A thought's marks are typed where people call them: a type checker refuses a misspelt one.

``Session.process_sequential_thinking`` takes ``**marks: Unpack[MarkArguments]`` and
``Session.think`` ``**arguments: Unpack[ThoughtArguments]`` (PEP 692). This file is never run:
the type-check stage (mypy --strict, which warns of an unused ``type: ignore``) reads it, so a
mistake below that stopped being refused fails that stage, and a right call that started being
refused fails it too.
"""

from thoughtledger import open_ledger


async def calls() -> None:
    """Four mistakes, each refused with the code its ignore names, then two calls spelt right."""
    async with open_ledger("sqlite:///thoughts.db") as ledger:
        session = await ledger.new_session()
        await session.process_sequential_thinking("a", 1, 2, True, is_revsion=True)  # type: ignore[call-arg]
        await session.process_sequential_thinking("b", 2, 2, True, revises_thought="1")  # type: ignore[arg-type]
        await session.think(  # type: ignore[call-arg]
            thought="c",
            thought_number=3,
            total_thoughts=3,
            next_thought_needed=False,
            branch_idd="x",
        )
        await session.think(thought="d", thought_number=3, total_thoughts=3)  # type: ignore[call-arg]
        await session.process_sequential_thinking(
            "e", 2, 3, True, is_revision=True, revises_thought=1, needs_more_thoughts=None
        )
        await session.think(
            thought="f",
            thought_number=3,
            total_thoughts=3,
            next_thought_needed=True,
            branch_from_thought=1,
            branch_id="b",
        )
