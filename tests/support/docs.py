"""The documentation as the tests read it: the README, the pages under ``docs/``, their code blocks,
their links and the anchors their headings make."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """The README, then every page under ``docs/`` by name."""
    return [README, *sorted(DOCS.glob("*.md"))]


def page(name: str) -> Path:
    """The page ``docs/{name}``."""
    return DOCS / name


def fenced_blocks(path: Path, language: str) -> list[str]:
    """The text of each fenced block of ``path`` opened with exactly ```` ```language ````, in
    order (``language=""``: the blocks that name no language)."""
    blocks: list[str] = []
    fence: str | None = None  # the opening line of the block being read
    lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if fence is None:
            if line.startswith("```"):
                fence, lines = line, []
        elif line == "```":
            if fence == "```" + language:
                blocks.append("".join(f"{text}\n" for text in lines))
            fence = None
        else:
            lines.append(line)
    return blocks


def prose(path: Path) -> str:
    """``path``'s text without its fenced blocks and inline code, where no link is meant."""
    text = re.sub(r"^```.*?^```[ \t]*$", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def links(path: Path) -> list[str]:
    """The target of every Markdown link and image in ``path``'s prose, in order."""
    return re.findall(r"\]\(([^)\s]+)\)", prose(path))


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of ``path``'s headings: lower case, punctuation but ``-`` and
    ``_`` dropped, spaces as ``-``, and ``-1``, ``-2``... after a repeated one."""
    text = re.sub(r"^```.*?^```[ \t]*$", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    made: set[str] = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.MULTILINE):
        anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        unique, n = anchor, 0
        while unique in made:
            n += 1
            unique = f"{anchor}-{n}"
        made.add(unique)
    return made


SHOWN_ID = "01a200aa-5aa0-705f-8c03-353b1aba1175"
"""The session id the README's examples show."""
SHOWN_PREFIX = SHOWN_ID[:18]


def pattern(shown: list[str], session_id: str) -> re.Pattern[str]:
    """The output ``shown`` stands for, as one regular expression over the whole output."""
    parts = []
    for line in shown:
        line = line.replace(SHOWN_ID, session_id).replace(SHOWN_PREFIX, session_id[:18])
        if line.strip() == "…":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("…")) + r"\n")
    return re.compile("".join(parts))
