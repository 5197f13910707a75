"""``thoughtledger search`` in a real process: hits best first, JSON, pages, bad queries."""

import json
import subprocess
import sys
from pathlib import Path

from tests.support.cli import sqlite_url


def thoughtledger(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603  # our own command line, arguments of the test's own
        [sys.executable, "-m", "thoughtledger.adapters.cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_search_finds_the_demo_s_thoughts_in_a_real_process(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    assert thoughtledger("demo", "--db", url).returncode == 0

    table = thoughtledger("search", "replica", "--db", url)
    as_json = thoughtledger("search", '"read replica" -index', "--db", url, "--json")
    paged = thoughtledger("search", "the", "--limit", "2", "--db", url, "--json")

    assert table.returncode == 0, table.stderr
    assert "replica" in table.stdout
    assert "snippet" in table.stdout
    found = json.loads(as_json.stdout)["results"]
    assert [hit["thoughtNumber"] for hit in found] == [5]
    start, end = found[0]["highlights"][0]
    assert found[0]["snippet"][start:end].lower() == "read"
    page = json.loads(paged.stdout)
    assert len(page["results"]) == 2
    assert page["nextCursor"] == "2"
    rest = thoughtledger("search", "the", "--page", "2", "--db", url, "--json")
    assert rest.returncode == 0
    assert {hit["version"] for hit in json.loads(rest.stdout)["results"]}.isdisjoint(
        hit["version"] for hit in page["results"]
    )


def test_a_query_with_nothing_to_find_is_one_clear_line(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    assert thoughtledger("demo", "--db", url).returncode == 0

    refused = thoughtledger("search", "--db", url, "--", "-everything")

    assert refused.returncode != 0
    assert "no word to find" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_or_is_refused_in_one_line_saying_what_to_write_instead(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    assert thoughtledger("demo", "--db", url).returncode == 0

    refused = thoughtledger("search", "replica OR index", "--db", url)
    quoted = thoughtledger("search", 'replica "or" index', "--db", url, "--json")

    assert refused.returncode != 0
    assert "OR is not supported: every word of a query must be in a thought" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert quoted.returncode == 0, quoted.stderr  # quoted, "or" is a word like any other
