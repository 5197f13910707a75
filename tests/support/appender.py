"""Another process writing to a ledger: ``python -m tests.support.appender URL SESSION COUNT``.

Appends ``COUNT`` thoughts to ``SESSION``, one append each, then exits 0.
"""

import asyncio
import sys

from tests.support.factories import thought
from thoughtledger.api.bootstrap import open_store


async def _append(url: str, session_id: str, count: int) -> None:
    store = await open_store(url)
    try:
        for version in range(count):
            await store.append(session_id, [thought(version + 1)], expected_version=version)
    finally:
        await store.aclose()


if __name__ == "__main__":
    asyncio.run(_append(sys.argv[1], sys.argv[2], int(sys.argv[3])))
