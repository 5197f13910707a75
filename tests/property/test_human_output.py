"""No control code survives any human output, for any text; JSON keeps every text exactly.

Whatever a thought holds, printed through the command line's consoles (as a string, as rich
text, in a table, in a tree; on a terminal and piped) the output holds no control character but
the line ends and the colours rich writes itself, and :func:`visible` keeps every other character.
(That JSON output keeps the exact text is proven on a real process, in the integration tests.)
"""

import io
import re

from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text
from rich.tree import Tree

from thoughtledger.adapters.cli.common import Ui, clip
from thoughtledger.adapters.cli.safe_console import SafeConsole
from thoughtledger.ledger.printable import visible

_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")

hostile = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from(["\x1b", "\x07", "\r", "\x9b", "\x7f", "\u202e", "\u2066", "[", "]", "/"]),
    ),
    max_size=60,
)


def _printed(text: str, *, terminal: bool) -> str:
    out, err = io.StringIO(), io.StringIO()
    ui = Ui(
        SafeConsole(file=out, force_terminal=terminal, width=120),
        SafeConsole(file=err, force_terminal=terminal, width=120),
    )
    table = ui.table("thought")
    table.add_row(text)
    tree = Tree(Text(text))
    tree.add(text)
    ui.out.print(text)
    ui.out.print(Text.assemble(("#1 ", "bold"), text))
    ui.out.print(table)
    ui.out.print(tree)
    ui.err.print(clip(text, 40), style="dim")
    return out.getvalue() + err.getvalue()


@given(hostile)
def test_no_control_code_survives_a_plain_output(text: str) -> None:
    assert _CONTROL.findall(_printed(text, terminal=False)) == []


@given(hostile)
def test_no_control_code_survives_a_terminal_output_but_rich_colours(text: str) -> None:
    assert _CONTROL.findall(_COLOUR.sub("", _printed(text, terminal=True))) == []


@given(hostile)
def test_visible_escapes_exactly_the_control_characters(text: str) -> None:
    shown = visible(text)
    assert _CONTROL.findall(shown.replace("\t", "")) == []
    assert _CONTROL.findall(visible(text, one_line=True)) == []
    # Every other character is kept, in order: removing the escapes gives the text back.
    kept = _CONTROL.sub("", text.replace("\t", "").replace("\n", ""))
    restored = re.sub(r"\\x[0-9a-f]{2}|\\u20[26][0-9a-f]", "", visible(text, one_line=True))
    assert restored == kept or "\\x" in text or "\\u20" in text


def test_each_control_character_is_shown_as_its_escape() -> None:
    assert visible("a\x1b]0;t\x07b") == "a\\x1b]0;t\\x07b"
    assert visible("\x9b\x7f\u202e\u2069") == "\\x9b\\x7f\\u202e\\u2069"
    assert visible("two\nlines\tand a tab") == "two\nlines\tand a tab"
    assert visible("two\nlines\t", one_line=True) == "two\\x0alines\\x09"
    plain = "nothing to escape: é 💭"
    assert visible(plain) is plain
