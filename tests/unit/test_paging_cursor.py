"""History cursors: opaque, round-tripping, and refused whole when anything in them is off."""

import base64
import json

import pytest

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.projections.paging import HistoryCursor


def _forged(fields: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        HistoryCursor("s", 0),
        HistoryCursor("s", 41, 99, "branch ✓ with spaces", True),
        HistoryCursor("01a200aa-5aa0-705f-8c03-353b1aba1175", 10**12, None, None, False),
    ],
)
def test_a_cursor_round_trips_through_its_url_safe_text(cursor: HistoryCursor) -> None:
    text = cursor.encode()
    assert HistoryCursor.decode(text) == cursor
    assert set(text) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "!!!",
        "x" * 5000,
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
        _forged({"not": "a list"}),
        _forged([2, "s", 0, None, None, False]),  # a format this version does not know
        _forged([1, "s", -1, None, None, False]),
        _forged([1, "s", 5, 4, None, False]),  # stops before it starts
        _forged([1, "s", True, None, None, False]),
        _forged([1, 7, 0, None, None, False]),
        _forged([1, "s", 0, None, 3, False]),
        _forged([1, "s", 0, None, None, "yes"]),
        _forged([1, "s", 0, None, None]),
    ],
)
def test_anything_but_a_cursor_is_refused_with_one_message(text: str) -> None:
    with pytest.raises(InvalidInputError, match=r"^not a history cursor: pass the nextCursor"):
        HistoryCursor.decode(text)
