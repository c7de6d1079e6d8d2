"""A request rate per API key, so that one client's loop cannot take the server from everyone else (429 with
Retry-After, which mem0's SDKs raise as RateLimitError)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from jiyi.errors import RateLimited


class RateLimiter:
    """Requests per key per minute, as a token bucket: a key may send `per_minute` requests at once, then one more
    each 60/per_minute seconds. Per process (several workers each allow the rate). Callers without a key are
    counted by their address."""

    MAX_KEYS = 100_000  # buckets kept; the longest-idle go first

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, when)

    def check(self, caller: str) -> None:
        if self.per_minute <= 0:
            return
        now = self._clock()
        refill = self.per_minute / 60.0
        tokens, when = self._buckets.pop(caller, (float(self.per_minute), now))
        tokens = min(float(self.per_minute), tokens + (now - when) * refill)
        if tokens < 1.0:
            self._buckets[caller] = (tokens, now)
            raise RateLimited(f"this API key sent more than {self.per_minute} requests a minute "
                              "(JIYI_RATE_PER_MINUTE); retry after the Retry-After header's seconds",
                              retry_after=(1.0 - tokens) / refill)
        self._buckets[caller] = (tokens - 1.0, now)
        while len(self._buckets) > self.MAX_KEYS:
            self._buckets.popitem(last=False)
