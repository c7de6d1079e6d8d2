"""A claimed turn's lease is short and its worker renews it while it works on the turn (jiyi/leases.py): a second
worker never takes a turn that is slow but alive, on every store. That a dead worker's turns are taken again within
the lease is tests/reliability/test_recovery.py's, with a real process killed."""

from __future__ import annotations

import asyncio
import time

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.stores.base import MemoryStore
from jiyi.write_path import WriteSettings
from tests.test_evidence import HeldPassages

LEASE = 0.6  # seconds; the turns below are held five times as long


def test_a_slow_turn_and_the_one_waiting_behind_it_stay_with_their_worker(store: MemoryStore) -> None:
    slow = "我周末去爬了香山，风景特别美"
    embedder = HeldPassages(slow)  # the first turn's messages are embedded only when released
    settings = WriteSettings(lease_seconds=LEASE)
    first = AsyncMemory(store, embedder, write_settings=settings)
    second = AsyncMemory(build_store(store.url), build_embedder("hashing"), write_settings=settings)

    async def run() -> None:
        held = (await first.add(slow, user_id="u", async_mode=True))["event_id"]
        behind = (await first.add("我在学吉他", user_id="u", async_mode=True))["event_id"]  # same user: in order
        working = asyncio.ensure_future(first.process_pending())
        assert await asyncio.to_thread(embedder.held.wait, 10)  # the first turn's facts are in, its messages held
        taken = []
        deadline = time.monotonic() + 5 * LEASE
        while time.monotonic() < deadline:  # a second worker polls all along
            taken.append(await second.process_pending())
            await asyncio.sleep(LEASE / 6)
        assert len(taken) > 10 and set(taken) == {0}, taken
        assert not working.done()
        assert (await second.get_event(held))["status"] == "RUNNING"
        assert (await second.get_event(behind))["status"] == "RUNNING"  # claimed in the same batch, waiting its turn
        embedder.release.set()
        assert await asyncio.wait_for(working, 10) == 2
        for event_id in (held, behind):
            event = await second.get_event(event_id)
            assert event["status"] == "SUCCEEDED" and event["attempts"] == 1  # extracted once, by the first worker
        assert await second.process_pending() == 0
        facts = (await second.get_all(user_id="u"))["results"]
        assert len(facts) == len({f["memory"] for f in facts}) >= 2  # nothing extracted twice
        await first.close()
        await second.close()

    asyncio.run(run())


def test_a_lease_is_let_go_even_when_its_task_is_cancelled_while_the_release_waits_for_a_thread() -> None:
    """leases.let_go: the release is queued behind busy threads when the task asking for it is cancelled (the event
    loop ending); the release still runs, and the task still sees its cancellation."""
    from concurrent.futures import ThreadPoolExecutor
    from threading import Event

    from jiyi.leases import let_go

    pool = ThreadPoolExecutor(max_workers=1)
    busy, released = Event(), Event()
    pool.submit(busy.wait, 10)  # the one thread is taken: the release waits in the queue

    async def run() -> None:
        asking = asyncio.ensure_future(let_go(released.set, executor=pool))
        await asyncio.sleep(0.05)
        asking.cancel()
        try:
            await asking
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("the cancellation was swallowed")
        busy.set()
        assert await asyncio.to_thread(released.wait, 10)

    asyncio.run(run())
    pool.shutdown()
