"""kill -9 in the middle of writes from concurrent clients: after a restart on the same file, no acknowledged add is
lost, every acknowledged async turn is finished, and SQLite's integrity check passes."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.reliability.conftest import (
    ServerProcess,
    StartServer,
    integrity_check,
    query,
    wait_for_events,
)

CLIENTS = 16
ENOUGH_WITHIN = 60.0  # seconds past kill_after that a slow machine gets to write enough to judge
LEASE = 3.0  # seconds: a turn the killed server had claimed is taken again this long after its claim


@dataclass
class Acknowledged:
    memories: dict[str, str] = field(default_factory=dict)  # id -> text, from 200 answers
    events: list[str] = field(default_factory=list)  # event ids from 202 (async) and 200 (sync infer=true) answers
    said: dict[str, tuple[str, str]] = field(default_factory=dict)  # event id -> (user, the message's text)
    server_errors: list[str] = field(default_factory=list)


async def write_until_killed(server: ServerProcess, acknowledged: Acknowledged, seed: int, kill_after: float,
                             enough: Callable[[Acknowledged], bool] = lambda _: True) -> float:
    """CLIENTS clients add as fast as they can (infer=false, infer=true, async); SIGKILL after `kill_after` s, and not
    before `enough(acknowledged)`: a machine busy with other work (other tests) acknowledges less in a given time.
    Returns when it was killed (time.monotonic()). Each message names a code of its own: a search finds that one."""

    async def client(n: int, http: httpx.AsyncClient) -> None:
        rng = random.Random(seed * 1000 + n)
        i = 0
        while True:
            i += 1
            user = f"user{n % 8}"
            kind = rng.choice(("raw", "raw", "infer", "async"))
            liked = rng.choice(["tea", "chess", "hiking", "猫", "咖啡"])
            text = f"round {seed} client {n} note {i} zq{rng.getrandbits(32):08x}: I like {liked}"
            body = {"messages": [{"role": "user", "content": text}], "user_id": user,
                    "infer": kind != "raw", "async_mode": kind == "async"}
            try:
                response = await http.post("/memories", json=body)
            except httpx.HTTPError:
                return  # the server is gone: this request was never acknowledged
            if response.status_code >= 500:
                acknowledged.server_errors.append(f"{response.status_code} {response.text[:200]}")
            elif response.status_code == 202:
                acknowledged.events.append(response.json()["event_id"])
                acknowledged.said[response.json()["event_id"]] = user, text
            elif response.status_code == 200:
                answer = response.json()
                acknowledged.memories.update({r["id"]: r["memory"] for r in answer["results"] if r["event"] == "ADD"})
                if kind == "infer":
                    acknowledged.events.append(answer["event_id"])
                    acknowledged.said[answer["event_id"]] = user, text

    async with server.async_client(timeout=30) as http:
        tasks = [asyncio.create_task(client(n, http)) for n in range(CLIENTS)]
        await asyncio.sleep(kill_after)
        more_until = time.monotonic() + ENOUGH_WITHIN
        while not enough(acknowledged) and time.monotonic() < more_until:
            await asyncio.sleep(0.05)
        server.kill()
        killed = time.monotonic()
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
    return killed


def enough_to_judge(acknowledged: Acknowledged) -> bool:
    return len(acknowledged.memories) > 100 and len(acknowledged.events) > 20


def test_kill_9_during_writes_loses_no_acknowledged_add(serve: StartServer, tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    config = {"write": {"lease_seconds": LEASE}}
    acknowledged = Acknowledged()
    for round_, kill_after in enumerate((2.0, 3.1)):  # two crashes, at different points of the write stream
        server = serve(db=db, config=config)
        asyncio.run(write_until_killed(server, acknowledged, round_, kill_after, enough=enough_to_judge))
        assert not server.running()
        assert integrity_check(db) == "ok"
    assert not acknowledged.server_errors, acknowledged.server_errors[:5]
    assert enough_to_judge(acknowledged), "too little was written to judge"

    server = serve(db=db, config=config)
    stored = dict(query(db, "SELECT id, content FROM memories WHERE deleted_at IS NULL"))
    lost = {i: text for i, text in acknowledged.memories.items() if stored.get(i) != text}
    assert not lost, f"{len(lost)} of {len(acknowledged.memories)} acknowledged memories lost, e.g. {list(lost)[:3]}"
    with server.client() as client:
        sample = random.Random(0).sample(sorted(acknowledged.memories), 20)
        for memory_id in sample:  # and the server serves them
            response = client.get(f"/memories/{memory_id}")
            assert response.status_code == 200 and response.json()["memory"] == acknowledged.memories[memory_id]
        # Turns the dead servers had claimed are taken again once their lease ran out.
        wait_for_events(client, acknowledged.events, "SUCCEEDED", timeout=LEASE + 60)
    status, _ = server.terminate()
    assert status == 0
    assert integrity_check(db) == "ok"
