"""What the server owns for its lifetime: the Memory, the metrics, the access policy, the request limits and rates."""

from __future__ import annotations

import asyncio
from typing import Any

from jiyi.errors import Unauthorized
from jiyi.keys import key_hash
from jiyi.memory import AsyncMemory
from jiyi.server.auth import AccessPolicy, Principal
from jiyi.server.limits import RequestLimits
from jiyi.server.metrics import Metrics
from jiyi.server.rate_limit import RateLimiter


class ServerState:
    def __init__(self, memory: AsyncMemory, policy: AccessPolicy, limits: RequestLimits) -> None:
        self.memory = memory
        self.policy = policy
        self.limits = limits
        self.rate = RateLimiter(limits.rate_per_minute)
        self.metrics = Metrics(lambda: self.memory.store.count(), count_turns=lambda: self.memory.store.turn_counts(),
                               model_use=lambda: self.memory.embedding.use)
        self._lock = asyncio.Lock()

    def authenticate(self, key: str | None, address: str, *, from_memory: bool = False) -> Principal:
        """Who presents this key (refused if it is unknown), counted against the key's request rate (or, without
        a key, the address's). Every entry point asks here: REST routes, /context, events, MCP. `from_memory`: on the
        event loop, answered without the store or NeedsStore (AccessPolicy.identify_from_memory)."""
        who = self.policy.identify_from_memory(key) if from_memory else self.policy.identify(key)
        self.rate.check(key_hash(key) if key else f"addr:{address}")
        return who

    def authenticate_hash(self, digest: str) -> Principal:
        """authenticate() for a key known by its SHA-256 only (a console session): the same principal, the same
        request rate; refused if no configured or active key has this hash."""
        who = self.policy.identify_hash(digest)
        if who is None:
            raise Unauthorized("this key was revoked or is no longer configured")
        self.rate.check(digest)
        return who

    async def reconfigure(self, config: dict[str, Any]) -> None:
        """Build the new Memory first; swap only if that worked, so a bad config leaves the service as it was."""
        if not any(key in config for key in ("store", "vector_store", "history_db_path")):
            config = {**config, "store": self.memory.store.url}  # changing the embedder must not move the data
        async with self._lock:
            new = await asyncio.to_thread(AsyncMemory.from_config, config)
            old, self.memory = self.memory, new
            if old.store is not new.store:
                await old.close()

    async def maintain(self, user_id: str | None = None) -> dict[str, Any]:
        """One lifecycle pass; its result feeds the lifecycle metrics."""
        result = await self.memory.maintain(user_id=user_id)
        self.metrics.observe_maintenance(result)
        return result

    async def close(self) -> None:
        await self.memory.close()
