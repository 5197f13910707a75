"""A thought's marks are typed where people call them: a type checker refuses a misspelt one.

``Session.process_sequential_thinking`` takes ``**marks: Unpack[MarkArguments]`` and
``Session.think`` ``**arguments: Unpack[ThoughtArguments]`` (PEP 692), both ``TypedDict`` s
generated from the definition of a thought and checked in (a type checker reads source, not a
class built at run time). This test keeps the checked-in module what the generator writes;
``tests/typing/misspelt_marks.py`` holds calls a type checker must refuse or accept, read by the
type-check stage as a user's project would be.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "gen_thought_marks.py"


def test_the_checked_in_marks_are_what_the_definition_generates() -> None:
    done = subprocess.run(  # noqa: S603  # our own tool, by absolute path
        [sys.executable, str(GENERATOR), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
