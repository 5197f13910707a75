"""The web app served for real on a loopback port, in this process, over any ledger."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn

from thoughtledger.adapters.common.hardened import bind
from thoughtledger.adapters.ui.routes import create_app
from thoughtledger.api.service import Ledger


@asynccontextmanager
async def app_on_loopback(ledger: Ledger) -> AsyncIterator[str]:
    """Serve ``thoughtledger ui``'s app over ``ledger`` on a free port; yield its base URL."""
    listener = bind("127.0.0.1", 0)
    port = listener.getsockname()[1]
    config = uvicorn.Config(create_app(ledger), log_config=None, access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        async with asyncio.timeout(20):
            while not server.started:  # noqa: ASYNC110  # uvicorn offers a flag, no event
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = server.force_exit = True
        await task
        listener.close()
