"""An add sent again with its idempotency key (HTTP: the Idempotency-Key header) by the same owner within a day
stores nothing and answers what the first one answered; a retry overlapping the original waits for it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from jiyi.errors import Conflict
from jiyi.records import Clock, Scope
from jiyi.stores.base import Coordination

# An idempotency key is remembered this long (a client's retries come within minutes; a day is generous), and a retry
# waits this long for the first request with its key to finish.
IDEMPOTENCY_KEPT = timedelta(days=1)
IDEMPOTENT_WAIT_SECONDS = 120.0


class ReplayedAnswer(dict[str, Any]):
    """The answer of an add sent again with its idempotency key: what the first one answered, nothing done now (so a
    server does not count its memories again, and can say it is a replay)."""


def request_key(scope: Scope, key: str) -> str:
    """The stored key: the owner's ids and the caller's key, hashed, so owners never share or probe each other's."""
    owner = json.dumps([scope.user_id, scope.agent_id, scope.run_id, key], ensure_ascii=False)
    return hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint(request: dict[str, Any]) -> str:
    """What a request with an idempotency key must match to be answered as the first one with it was."""
    return hashlib.sha256(json.dumps(request, ensure_ascii=False, sort_keys=True, default=str)
                          .encode("utf-8", "surrogatepass")).hexdigest()


async def add_once(store: Coordination, clock: Clock, key: str, asked: str,
                   add: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """`add()` once per key: a later request with the key gets the first one's answer (a ReplayedAnswer), if its
    fingerprint (`asked`) is the first one's."""
    deadline = time.monotonic() + IDEMPOTENT_WAIT_SECONDS
    while True:
        claimed, answer = await asyncio.to_thread(store.claim_request, key, clock(), IDEMPOTENCY_KEPT)
        if claimed:
            break
        if answer is not None:
            stored = json.loads(answer)
            if stored["request"] != asked:
                raise Conflict("this idempotency key was used for another request; use a new key per add")
            return ReplayedAnswer(stored["answer"])
        if time.monotonic() > deadline:
            raise Conflict("a request with this idempotency key is still being processed; retry later")
        await asyncio.sleep(0.05)  # the first request with this key is running: answer what it answers
    try:
        result = await add()
    except BaseException:
        await asyncio.shield(asyncio.to_thread(store.finish_request, key, None))  # a retry may run it again
        raise
    await asyncio.to_thread(store.finish_request, key, json.dumps({"request": asked, "answer": result},
                                                                  ensure_ascii=False))
    return result
