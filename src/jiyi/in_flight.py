"""How many searches this process has in flight, from their start to their answer.

The e5 engine's thread team (embedders/thread_team.py) reads it before each call: a search beyond the ones in the
call is, or soon will be, ranking and reading memories on a core the team would otherwise wait for at every layer's
barrier. Process-wide on purpose: the cores are shared by every Memory in the process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class InFlight:
    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()  # Memories on different event loops search from different threads

    def count(self) -> int:
        return self._count

    @contextmanager
    def one(self) -> Iterator[None]:
        with self._lock:
            self._count += 1
        try:
            yield
        finally:
            with self._lock:
                self._count -= 1


SEARCHES = InFlight()
