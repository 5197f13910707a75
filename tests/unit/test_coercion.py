"""The official server's number and flag coercion, case by case (the generated side-by-side
comparison is tests/integration/test_official_parity.py)."""

import pytest
from pydantic import TypeAdapter, ValidationError

from thoughtledger.adapters.mcp.tools.lax_types import MAX_SAFE_INTEGER, js_number, plain_wording
from thoughtledger.adapters.mcp.tools.lax_types import LaxCount as Count
from thoughtledger.adapters.mcp.tools.lax_types import LaxFlag as Flag
from thoughtledger.adapters.mcp.tools.lax_types import LaxText as Text
from thoughtledger.ledger.thought_types import describe_errors

COUNT: TypeAdapter[int] = TypeAdapter(Count)
FLAG: TypeAdapter[bool] = TypeAdapter(Flag)
TEXT: TypeAdapter[str] = TypeAdapter(Text)


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("3", 3),
        (" 3 ", 3),
        ("\ufeff3", 3),  # U+FEFF is white space to JavaScript, not to Python's str.strip
        ("\u30003", 3),  # so is every space separator
        ("\u20283\u2029", 3),  # and the line terminators
        ("\x0b3", 3),  # VT and FF are JavaScript white space too
        ("+3", 3),
        ("3.0", 3),
        ("30e-1", 3),
        ("0x10", 16),
        ("0B11", 3),
        ("0o17", 15),
        (2.0, 2),
        (str(MAX_SAFE_INTEGER), MAX_SAFE_INTEGER),
    ],
)
def test_numbers_number_reads_are_accepted(sent: object, kept: int) -> None:
    assert COUNT.validate_python(sent) == kept


@pytest.mark.parametrize(
    "sent",
    [
        "\u0663",  # ARABIC-INDIC DIGIT THREE: Python's int() reads it, Number() does not
        "\uff13",  # FULLWIDTH DIGIT THREE
        "\U0001d7d1",  # MATHEMATICAL BOLD DIGIT THREE
        "\x1c3",  # U+001C-U+001F are white space to Python only
        "\x1f3",
        "\x853",  # NEXT LINE (U+0085), likewise
        "\u200b3",  # ZERO WIDTH SPACE is no white space at all
        "1_000",  # Python's digit separators
        "-0x10",  # Number() takes no sign before 0x
        "Infinity",
        "1e400",
        "nan",
        "",
        "2.5",
        str(MAX_SAFE_INTEGER + 1),  # zod's int() is a safe integer
        "1e20",
        MAX_SAFE_INTEGER + 1,
        1e20,
        0,
        True,  # Number(true) is 1 for the official server: refused here on purpose
        [3],  # Number([3]) is 3 there: refused here on purpose
        None,
    ],
)
def test_what_number_does_not_read_as_a_safe_whole_number_is_refused(sent: object) -> None:
    with pytest.raises(ValidationError):
        COUNT.validate_python(sent)


def test_js_number_reads_as_javascript_does() -> None:
    assert js_number("  ") == 0
    assert js_number("0x1F") == 31
    assert js_number(".5e1") == 5.0
    assert js_number("-Infinity") == float("-inf")
    assert js_number("\u0663") is None
    assert js_number("0x") is None
    assert js_number("1e") is None


@pytest.mark.parametrize(("sent", "kept"), [("TRUE", True), ("False", False), (False, False)])
def test_flags_are_booleans_or_the_words_true_and_false(sent: object, kept: bool) -> None:
    assert FLAG.validate_python(sent) is kept


@pytest.mark.parametrize("sent", ["yes", "on", "1", 1, 0, " true", "\u0442rue", None])
def test_anything_else_is_not_a_flag(sent: object) -> None:
    with pytest.raises(ValidationError):
        FLAG.validate_python(sent)


def test_a_lone_surrogate_is_refused_with_its_escape_and_where_it_is() -> None:
    with pytest.raises(ValidationError) as refused:
        TEXT.validate_python("a\ud800b")
    message = describe_errors(refused.value, plain_wording)
    assert "contains a lone surrogate (\\ud800) at index 1; " in message
    assert '(got "a\\ud800b")' in message
    assert message.encode("utf-8")  # the message itself can be sent
    assert TEXT.validate_python("pair \U0001f600 ok") == "pair \U0001f600 ok"
