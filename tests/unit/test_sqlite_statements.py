"""The SQLite backend's pre-compiled statements are what the table definitions compile to."""

from tests.support.processes import python_output
from thoughtledger.ledger.store import schema
from thoughtledger.ledger.store.sqlite.statements import (
    DATABASE_SCHEMA_VERSION,
    STATEMENTS,
    compile_statements,
)


def test_the_hot_statements_match_the_tables() -> None:
    assert compile_statements() == STATEMENTS


def test_the_statements_are_for_the_current_schema() -> None:
    assert DATABASE_SCHEMA_VERSION == schema.DATABASE_SCHEMA_VERSION


def test_serving_from_sqlite_does_not_import_sqlalchemy() -> None:
    probe = (
        "import asyncio, sys, tempfile, pathlib\n"
        "from thoughtledger.api.service import Ledger\n"
        "from thoughtledger.ledger.store.sqlite import SqliteEventStore\n"
        "async def main():\n"
        "    with tempfile.TemporaryDirectory() as tmp:\n"
        "        path = pathlib.Path(tmp) / 'l.db'\n"
        "        await (await SqliteEventStore.open(path)).aclose()  # creates the schema\n"
        "        for name in [m for m in sys.modules if m.startswith('sqlalchemy')]:\n"
        "            del sys.modules[name]\n"
        "        ledger = Ledger(await SqliteEventStore.open(path))\n"
        "        await ledger.think('s', {'thought': 't', 'thought_number': 1,\n"
        "                                 'total_thoughts': 1, 'next_thought_needed': False})\n"
        "        await ledger.state('s')\n"
        "        await ledger.aclose()\n"
        "    print(any(m.startswith('sqlalchemy') for m in sys.modules))\n"
        "asyncio.run(main())\n"
    )
    assert python_output(probe).strip() == "False"
