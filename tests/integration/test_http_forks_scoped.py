"""``thinking_history`` over ``serve --http --auth`` lists only the forks the caller may read.

A real server in a child process; the forks are started beside it through the Python API, one
as alice's and one as the ledger's own user's (as ``thoughtledger fork`` starts them).
"""

from pathlib import Path

import anyio
import pytest

from tests.support.auth import serving_with_auth
from tests.support.mcp import call, thought
from tests.support.processes import WAIT
from thoughtledger.api.bootstrap import open_ledger

pytestmark = pytest.mark.anyio


async def test_a_principal_sees_its_own_forks_and_an_auditor_every_fork(tmp_path: Path) -> None:
    async with serving_with_auth(tmp_path) as server:
        alice, auditor = server.mint("alice"), server.mint("carol", "auditor")
        with anyio.fail_after(WAIT):
            async with server.client(alice) as client:
                first = await call(client, "sequentialthinking", thought(1))
                await call(client, "sequentialthinking", thought(2))
            source = first["sessionId"]
            async with open_ledger(server.db, ttl=None) as ledger:
                hers = (await ledger.fork(source, at_version=2, owner="alice")).id
                owners = (await ledger.fork(source, at_version=3)).id
            async with server.client(alice) as client:
                mine = await call(client, "thinking_history", {"sessionId": source})
                whole = await call(
                    client, "thinking_history", {"sessionId": source, "show": "view"}
                )
            async with server.client(auditor) as client:
                every = await call(client, "thinking_history", {"sessionId": source})
    assert mine["forks"] == [hers]
    assert whole["forks"] == [hers]
    assert every["forks"] == [hers, owners]
