"""The check of docstring cross-references (tools/check_docrefs.py, run by tools/test) tells a
reference that leads somewhere from one that leads nowhere, on module texts of its own."""

import importlib.util
import sys
import types
from pathlib import Path

import pytest

CHECKER = Path(__file__).resolve().parents[2] / "tools" / "check_docrefs.py"


@pytest.fixture(scope="module")
def checker() -> types.ModuleType:
    """tools/check_docrefs.py (tools/ holds scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("thoughtledger_check_docrefs", CHECKER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def stale(checker: types.ModuleType, source: str) -> list[tuple[int, str]]:
    """Each reference of ``source``, run as a module, that leads nowhere: (line, target)."""
    module = checker.load_text("sample", source)
    return [(ref.line, ref.target) for ref in checker.unresolved(source, module)]


def test_a_good_reference_passes_and_a_bad_one_is_named_with_its_line(
    checker: types.ModuleType,
) -> None:
    source = (
        '"""A sample: :class:`thoughtledger.api.Ledger` leads somewhere.\n'
        "\n"
        "And :func:`thoughtledger.api.no_such_function` does not.\n"
        '"""\n'
    )
    assert stale(checker, source) == [(3, "thoughtledger.api.no_such_function")]


def test_a_module_that_moved_is_stale(checker: types.ModuleType) -> None:
    source = (
        '"""See :mod:`thoughtledger.api.facade.ledger` and :mod:`~thoughtledger.api.session`."""\n'
    )
    assert stale(checker, source) == [(1, "thoughtledger.api.facade.ledger")]


def test_names_resolve_where_they_are_written_then_in_the_api(checker: types.ModuleType) -> None:
    source = (
        "from thoughtledger.ledger.errors import LedgerError\n"
        "\n"
        "\n"
        "class Local:\n"
        '    """Raises :exc:`LedgerError`; see :meth:`helper` and :meth:`Ledger.think`."""\n'
        "\n"
        "    def __init__(self) -> None:\n"
        "        self.count = 0  # :attr:`count` is set here, :attr:`total` nowhere\n"
        "\n"
        "    def helper(self) -> None:\n"
        '        """Like :meth:`.Local.helper`, :func:`len` and :meth:`.Nowhere.helper`."""\n'
    )
    assert stale(checker, source) == [(8, "total"), (11, ".Nowhere.helper")]


def test_a_leading_dot_searches_the_package_for_one_object_with_that_ending(
    checker: types.ModuleType,
) -> None:
    source = '"""See :meth:`.EventStore.read_stream`, not :meth:`.EventStore.gone`."""\n'
    assert stale(checker, source) == [(1, ".EventStore.gone")]


def test_a_target_wrapped_over_two_lines_is_one_name(checker: types.ModuleType) -> None:
    source = (
        "# Written in a comment (:class:`Statistics <thoughtledger.ledger.store.stats_rows.\n"
        "# Statistics>`), and a bad one, :data:`thoughtledger.ledger.store.columns.\n"
        "# NO_SUCH_COLUMNS`.\n"
    )
    assert stale(checker, source) == [(2, "thoughtledger.ledger.store.columns.NO_SUCH_COLUMNS")]
