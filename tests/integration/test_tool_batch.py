"""The in-process tool's batches on a real SQLite ledger: one append, one call each's answers."""

import json
from pathlib import Path
from typing import Any

import pytest

from thoughtledger import InvalidBatchError, open_ledger
from thoughtledger.adapters.tool import sequential_thinking_tool

pytestmark = pytest.mark.anyio


def call(number: int, total: int = 3, **extra: Any) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": number < total,
        **extra,
    }


THOUGHTS = [call(1), call(2, isRevision=True, revisesThought=1), call(3)]


async def test_execute_batch_answers_each_thought_as_execute_would(tmp_path: Path) -> None:
    async with open_ledger(f"sqlite:///{tmp_path / 'l.db'}") as ledger:
        one_by_one = sequential_thinking_tool(ledger)
        singles = [await one_by_one.execute(item) for item in THOUGHTS]
        batched = sequential_thinking_tool(ledger, history_window=2)
        appends: list[int] = []
        ledger.observe(lambda events: appends.append(len(events)))
        # JSON text, as a model sends a call's arguments, is taken for any item.
        answers = await batched.execute_batch([THOUGHTS[0], json.dumps(THOUGHTS[1]), THOUGHTS[2]])
        later = await batched.execute(call(4, 4))
    assert appends[0] == 4  # one append: the session's start and three thoughts
    assert {answer["sessionId"] for answer in answers} == {batched.session_id}
    for answer, single in zip(answers, singles, strict=True):
        assert answer["thoughtHistoryLength"] == single["thoughtHistoryLength"]
        assert answer["thoughtHistory"] == single["thoughtHistory"][-2:]
        assert answer.get("summary") == single.get("summary")
    assert later["thoughtHistoryLength"] == 4


async def test_a_refused_item_names_its_index_and_camel_case_field(tmp_path: Path) -> None:
    async with open_ledger(f"sqlite:///{tmp_path / 'l.db'}") as ledger:
        tool = sequential_thinking_tool(ledger)
        await tool.execute(call(1))
        before = [(h.session_id, h.version) for h in await ledger.all_heads()]
        cases: list[tuple[list[dict[str, Any] | str], int, str]] = [
            ([call(2), {**call(3), "thoughtNumber": "3"}], 1, "thoughtNumber"),
            ([{**call(2), "thought_number": 2}], 0, "spell it thoughtNumber"),
            ([call(2), {**call(3), "sessionId": tool.session_id}], 1, "sessionId: not taken"),
            ([call(2), call(3), {**call(4), "clearSession": True}], 2, "clearSession"),
            ([call(2), "{not json"], 1, "not JSON"),
        ]
        for batch, index, said in cases:
            with pytest.raises(InvalidBatchError) as refused:
                await tool.execute_batch(batch)
            assert refused.value.index == index
            assert f"thoughts[{index}]" in str(refused.value)
            assert said in str(refused.value)
        assert [(h.session_id, h.version) for h in await ledger.all_heads()] == before
