"""A PostgreSQL ledger URL naming several hosts: how it is read, shown and connected."""

import pytest

from thoughtledger import InvalidInputError
from thoughtledger.ledger.store.postgres.connect import engine_for
from thoughtledger.ledger.store.postgres.failover import FAILOVER_WINDOW, hosts_as_query

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("url", "rewritten"),
    [
        (
            "postgresql://app@db1:5432,db2:5433/ledger",
            "postgresql://app@/ledger?host=db1:5432&host=db2:5433",
        ),
        (
            "postgresql+asyncpg://app:pw@db1,db2/ledger?schema=s&target_session_attrs=any",
            "postgresql+asyncpg://app:pw@/ledger?host=db1:5432&host=db2:5432&schema=s"
            "&target_session_attrs=any",
        ),
        (
            "postgresql://db1:5432,db2:5432/ledger",
            "postgresql:///ledger?host=db1:5432&host=db2:5432",
        ),
        ("postgresql://app@db1:5432/ledger", "postgresql://app@db1:5432/ledger"),
        ("postgresql://app@/ledger?host=a&host=b", "postgresql://app@/ledger?host=a&host=b"),
        ("postgresql://app:p,w@db/l?password=a,b", "postgresql://app:p,w@db/l?password=a,b"),
        ("postgresql://app@[::1],[::2]:6/l", "postgresql://app@/l?host=[::1]:5432&host=[::2]:6"),
    ],
)
def test_libpq_host_lists_become_the_drivers_host_parameters(url: str, rewritten: str) -> None:
    assert hosts_as_query(url) == rewritten


async def test_a_writer_naming_several_hosts_goes_to_a_primary_and_waits_out_failover() -> None:
    connected = engine_for(
        "postgresql://app:s3cret@db1:5432,db2:5432/ledger",
        pg_schema=None,
        pool_size=1,
        read_only=False,
    )
    try:
        assert connected.engine.url.query["target_session_attrs"] == "read-write"
        assert connected.failover == FAILOVER_WINDOW
        assert connected.where == "postgresql://app:***@db1:5432,db2:5432/ledger"
    finally:
        await connected.engine.dispose()


@pytest.mark.parametrize(
    ("url", "read_only", "attrs", "failover"),
    [
        ("postgresql://app@db1,db2/ledger?target_session_attrs=any", False, "any", FAILOVER_WINDOW),
        ("postgresql://app@db1,db2/ledger", True, None, FAILOVER_WINDOW),
        ("postgresql://app@db1/ledger", False, None, 0.0),
    ],
)
async def test_the_session_attributes_given_are_kept_and_one_host_retries_once(
    url: str, read_only: bool, attrs: str | None, failover: float
) -> None:
    connected = engine_for(url, pg_schema=None, pool_size=1, read_only=read_only)
    try:
        assert connected.engine.url.query.get("target_session_attrs") == attrs
        assert connected.failover == failover
    finally:
        await connected.engine.dispose()


@pytest.mark.parametrize(
    ("url", "failover"),
    [
        ("postgresql://app@db1,db2/ledger?failover_timeout=5", 5.0),
        ("postgresql://app@db1/ledger?failover_timeout=2.5", 2.5),
        ("postgresql://app@db1,db2/ledger?failover_timeout=0", 0.0),
    ],
)
async def test_failover_timeout_bounds_the_wait_and_is_not_passed_to_the_driver(
    url: str, failover: float
) -> None:
    connected = engine_for(url, pg_schema=None, pool_size=1, read_only=False)
    try:
        assert connected.failover == failover
        assert "failover_timeout" not in connected.engine.url.query
    finally:
        await connected.engine.dispose()


@pytest.mark.parametrize("given", ["-1", "soon", "nan", "3601", "1&failover_timeout=2"])
def test_a_failover_timeout_that_is_no_bounded_number_of_seconds_is_refused(given: str) -> None:
    url = f"postgresql://app@db1,db2/ledger?failover_timeout={given}"
    with pytest.raises(InvalidInputError, match="failover_timeout"):
        engine_for(url, pg_schema=None, pool_size=1, read_only=False)
