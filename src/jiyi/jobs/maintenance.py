"""The maintenance schedule: a lifecycle pass over every user at an interval, as a task owned by whoever starts it
(the server's lifespan). The pass itself is jiyi/lifecycle.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger("jiyi.maintenance")


class MaintenanceScheduler:
    """Runs `run_all()` every `interval` seconds until stopped; owned by whoever starts it."""

    def __init__(self, run_all: Callable[[], Coroutine[Any, Any, dict[str, Any]]], interval: float) -> None:
        self._run_all = run_all
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        self.last: dict[str, Any] | None = None

    def start(self) -> None:
        if self.interval > 0 and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="jiyi-maintenance")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                self.last = await self._run_all()
            except Exception:  # a failing pass must not end the schedule
                log.exception("maintenance pass failed")
