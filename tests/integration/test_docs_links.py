"""The README and the pages under ``docs/`` hold together: the README links every page, and every
relative link (to a file, or to a heading's anchor) leads somewhere that exists."""

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.support.docs import DOCS, README, ROOT, anchors, links, pages


def broken_links(path: Path) -> list[str]:
    """Each relative link of ``path`` whose file or anchor does not exist."""
    broken: list[str] = []
    for target in links(path):
        parts = urlsplit(target)
        if parts.scheme or target.startswith("//"):
            continue  # a web address: not ours to check here
        linked = (path.parent / unquote(parts.path)).resolve() if parts.path else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif parts.fragment and linked.suffix == ".md" and parts.fragment not in anchors(linked):
            broken.append(f"{target}: no heading makes #{parts.fragment}")
    return broken


def test_the_readme_links_every_page_under_docs() -> None:
    linked = {(README.parent / target).resolve() for target in links(README)}
    assert sorted(p.name for p in DOCS.glob("*.md") if p.resolve() not in linked) == []


@pytest.mark.parametrize("path", pages(), ids=[str(p.relative_to(ROOT)) for p in pages()])
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_a_missing_file_or_anchor_is_reported(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading, twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#a-code-heading-twice) [self](#page) [web](https://example.com)\n"
        "[gone](missing.md) [no anchor](other.md#nowhere)\n"
        "```\n[in a block](ignored.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#nowhere: no heading makes #nowhere",
    ]
