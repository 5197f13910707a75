"""The README's Python example runs as written."""

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_a_python_example() -> None:
    assert python_blocks()


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_the_readme_python_examples_run(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    exec(compile(python_blocks()[index], f"README block {index}", "exec"), {"__name__": "__main__"})  # noqa: S102  # running the documented example is the test
    assert "True" in capsys.readouterr().out
    assert os.path.exists(tmp_path / "thoughts.db")
