"""Write thoughtledger/ledger/thought_marks.py, the typed keyword arguments of a thought.

Usage: .venv/bin/python tools/gen_thought_marks.py [--check]

The module is generated from the one definition of a thought (thoughtledger.ledger.thought) and
checked in, because a type checker reads source, not a class built at run time. Run this after
adding a field to the definition; --check only says whether the checked-in module is current
(exit 1 when not), as a test does.
"""

import argparse
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from thoughtledger.ledger import thought
from thoughtledger.ledger.thought import CORE, MARKS, ThoughtField

WIDTH = 100
"""The line length the module keeps to (ruff's)."""

TARGET = Path(thought.__file__).with_name("thought_marks.py")
"""Beside the definition, in whichever copy of the package is imported."""

HEADER = '''\
"""A thought's fields as typed keyword arguments, for type checkers and editors.

Generated from :mod:`thoughtledger.ledger.thought` by ``tools/gen_thought_marks.py``; do not
edit. After a field is added to the definition, run that tool again (a test fails until then).

:class:`MarkArguments` is what ``**marks: Unpack[MarkArguments]`` takes (PEP 692): each optional
mark by its snake_case name, so a misspelt mark is refused by the type checker, not only when the
thought is recorded. :class:`ThoughtArguments` adds the core fields, each required. ``None``
means not given.
"""

from typing import TypedDict
'''


def _docstring(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    sentence = escaped if escaped.endswith(".") else escaped + "."
    if len(sentence) <= WIDTH - len('    """"""'):
        return f'    """{sentence}"""'
    lines = textwrap.wrap(sentence, WIDTH - len('    """'))
    return '    """' + "\n    ".join(lines) + '\n    """'


def _key(field: ThoughtField) -> str:
    kind = field.kind.__name__
    annotation = f"{kind} | None" if field.optional else kind
    return f"    {field.name}: {annotation}\n{_docstring(field.description)}\n"


def render() -> str:
    """The module's text, from the definition as it is imported now."""
    marks = "\n".join(_key(field) for field in MARKS)
    core = "\n".join(_key(field) for field in CORE)
    return (
        f"{HEADER}\n\n"
        "class MarkArguments(TypedDict, total=False):\n"
        '    """The optional marks of a thought, by snake_case name; ``None`` means not given."""\n'
        f"\n{marks}\n\n"
        "class ThoughtArguments(MarkArguments):\n"
        '    """Every field of a thought: the core ones required, then the optional marks."""\n'
        f"\n{core}\n\n"
        '__all__ = ["MarkArguments", "ThoughtArguments"]\n'
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether it is current")
    args = parser.parse_args(argv)
    wanted = render()
    current = TARGET.read_text() if TARGET.exists() else ""
    if args.check:
        if current != wanted:
            print(f"{TARGET.name} is out of date: run tools/gen_thought_marks.py", file=sys.stderr)
            return 1
        return 0
    if current != wanted:
        TARGET.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
