"""One httpx.AsyncClient per event loop, closed when its loop shuts down (the LLM and reranker clients share it).

An AsyncClient belongs to the loop it first ran on, and jiyi runs several (the sync facade's, the server's,
asyncio.run in scripts). A watcher task per loop closes that loop's pool when the loop is torn down (asyncio.run
cancels every task before closing), so short-lived loops leak no connections.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import httpx


class ClientPerLoop:
    def __init__(self, make_client: Callable[[], httpx.AsyncClient], name: str = "jiyi-http-pool-watcher") -> None:
        self._make_client = make_client
        self._name = name
        self._clients: dict[asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, asyncio.Task[None]]] = {}

    def get(self) -> httpx.AsyncClient:
        """The running loop's client, made on first use."""
        loop = asyncio.get_running_loop()
        for closed in [other for other in self._clients if other.is_closed()]:
            del self._clients[closed]
        entry = self._clients.get(loop)
        if entry is None or entry[0].is_closed:
            client = self._make_client()
            watcher = loop.create_task(_close_on_shutdown(client), name=self._name)
            entry = self._clients[loop] = (client, watcher)
        return entry[0]

    async def aclose(self) -> None:
        """Close every loop's client, each on its own loop."""
        current = asyncio.get_running_loop()
        entries, self._clients = self._clients, {}
        for loop, (_, watcher) in entries.items():
            if loop is current:
                watcher.cancel()  # its `finally` closes the pool
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            elif loop.is_running():
                loop.call_soon_threadsafe(watcher.cancel)  # Task.cancel is not thread-safe


async def _close_on_shutdown(client: httpx.AsyncClient) -> None:
    try:
        await asyncio.Event().wait()
    finally:
        await client.aclose()
