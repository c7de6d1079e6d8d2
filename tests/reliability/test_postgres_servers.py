"""Stateless API workers on one PostgreSQL: 4 `jiyi serve` processes, 64 clients adding (sync and async), updating
and searching through all of them at once. No errors, no lost update (history rows = acknowledged updates, each
row's old text the one before), and every async turn extracted exactly once.

SECONDS is kept short for `make test`; `JIYI_TEST_LOAD_SECONDS=60` runs the issue's 60-second version."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise

import httpx
import pytest

from tests import pg
from tests.reliability.conftest import ServerProcess, StartServer

SERVERS = 4
CLIENTS = 64
SECONDS = float(os.environ.get("JIYI_TEST_LOAD_SECONDS", "12"))
USERS = 8


@pytest.fixture
def database() -> Iterator[str]:
    url = pg.running().create_database()
    yield url
    pg.running().drop_database(url)


async def load(servers: list[ServerProcess]) -> dict[str, object]:
    answers: Counter[str] = Counter()
    updated: Counter[str] = Counter()
    events: list[tuple[str, str, str]] = []  # (event id, its user, the city it names)
    problems: list[str] = []
    clients = [server.async_client(timeout=120, connections=CLIENTS) for server in servers]
    try:
        seeded = await clients[0].post("/memories", json={"messages": [
            {"role": "user", "content": f"shared note {i}"} for i in range(4 * USERS)], "user_id": "shared",
            "infer": False})
        targets = [r["id"] for r in seeded.json()["results"]]
        deadline = time.monotonic() + SECONDS

        async def client(n: int) -> None:
            rng = random.Random(n)
            http = clients[n % len(clients)]  # each client talks to one server; together they use all four
            user = f"user{n % USERS}"
            i = 0
            while time.monotonic() < deadline:
                i += 1
                op = rng.choices(["add", "async", "update", "search"], weights=[25, 10, 25, 40])[0]
                try:
                    if op == "add":
                        response = await http.post("/memories", json={"messages": [
                            {"role": "user", "content": f"client {n} note {i}: I play chess"}], "user_id": user,
                            "infer": False})
                    elif op == "async":
                        city, mover = f"Town{n}x{i}", f"mover{n}x{i}"  # a user per move: nothing supersedes it
                        response = await http.post("/memories", json={"messages": [
                            {"role": "user", "content": f"I moved to {city}"}], "user_id": mover,
                            "async_mode": True})
                        if response.status_code == 202:
                            events.append((response.json()["event_id"], mover, city))
                    elif op == "update":
                        target = rng.choice(targets)
                        response = await http.put(f"/memories/{target}", json={"text": f"edited by {n} at {i}"})
                        if response.status_code == 200:
                            updated[target] += 1
                    else:
                        response = await http.post("/search", json={"query": "chess", "user_id": user, "top_k": 5})
                    answers[f"{op} {response.status_code}"] += 1
                    if response.status_code >= 300 and response.status_code != 202:
                        problems.append(f"{op} {response.status_code} {response.text[:200]}")
                except httpx.HTTPError as exc:
                    problems.append(f"{op} {type(exc).__name__}: {exc}")

        await asyncio.gather(*(client(n) for n in range(CLIENTS)))
        history = {t: (await clients[0].get(f"/memories/{t}/history")).json() for t in targets}
        finished: dict[str, dict[str, object]] = {}
        wait_until = time.monotonic() + 120
        while len(finished) < len(events) and time.monotonic() < wait_until:
            for event_id, _, _ in events:
                if event_id not in finished:
                    event = (await clients[1].get(f"/events/{event_id}")).json()
                    if event["status"] in ("SUCCEEDED", "FAILED"):
                        finished[event_id] = event
            await asyncio.sleep(0.2)
        movers = {}
        for _, mover, _ in events:
            listed = (await clients[2].get("/memories", params={"user_id": mover})).json()
            movers[mover] = [m["memory"] for m in listed["results"]]
        return {"answers": answers, "updated": updated, "problems": problems, "history": history,
                "events": events, "finished": finished, "movers": movers}
    finally:
        for http in clients:
            await http.aclose()


def test_four_api_processes_on_one_postgres_lose_nothing(serve: StartServer, database: str) -> None:
    servers = [serve(store=database) for _ in range(SERVERS)]
    result = asyncio.run(load(servers))
    answers: Counter[str] = result["answers"]  # type: ignore[assignment]
    assert result["problems"] == [], result["problems"][:10]  # type: ignore[index]
    assert sum(answers.values()) > 200, answers  # the load really ran
    print(f"\n{SERVERS} servers, {CLIENTS} clients, {SECONDS:g} s: {sum(answers.values())} requests, {dict(answers)}")

    # Every acknowledged update is one history row, chained: none lost, none overwritten unseen.
    updated: Counter[str] = result["updated"]  # type: ignore[assignment]
    for memory_id, rows in result["history"].items():  # type: ignore[attr-defined]
        changes = [row for row in rows if row["event"] == "UPDATE"]
        assert len(changes) == updated[memory_id], (memory_id, len(changes), updated[memory_id])
        assert all(later["old_memory"] == earlier["new_memory"] for earlier, later in pairwise(rows)), rows

    # Every async turn was extracted once, by one of the four servers' workers: one fact per move, no duplicate.
    events: list[tuple[str, str, str]] = result["events"]  # type: ignore[assignment]
    finished: dict[str, dict[str, object]] = result["finished"]  # type: ignore[assignment]
    movers: dict[str, list[str]] = result["movers"]  # type: ignore[assignment]
    assert events and len(finished) == len(events)
    assert all(event["status"] == "SUCCEEDED" and event["attempts"] == 1 for event in finished.values())
    for _, mover, city in events:
        assert [fact for fact in movers[mover] if city in fact] == [f"User moved to {city}"], movers[mover]
