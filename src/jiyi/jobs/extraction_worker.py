"""The extraction worker: drains the turn queue — turns added with async_mode, and turns whose LLM extraction failed
and is due for a retry. The server's lifespan starts and stops it; any process may run one (claims are atomic)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from jiyi.memory import AsyncMemory

log = logging.getLogger(__name__)


class ExtractionWorker:
    def __init__(self, memory: Callable[[], AsyncMemory], *, poll_interval: float = 2.0, batch: int = 16) -> None:
        """`memory` returns the current Memory (the server may swap it on /configure)."""
        self._memory = memory
        self.poll_interval = poll_interval
        self.batch = batch
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.processed = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="jiyi-extraction-worker")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            memory = self._memory()
            memory.notify_queued_turns(self._wakeup)
            self._wakeup.clear()
            try:
                done = await memory.process_pending(self.batch)
            except Exception:
                log.exception("extraction worker pass failed")
                done = 0
            self.processed += done
            if done < self.batch:  # caught up: sleep until an add wakes us or a retry may be due
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wakeup.wait(), self.poll_interval)
