"""64 concurrent clients for ten seconds, mixing add, search, context, get and update on shared memories: no 5xx,
no "database is locked", and exactly one UPDATE history row per acknowledged update."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from pathlib import Path

import httpx

from tests.reliability.conftest import ServerProcess, StartServer, query

CLIENTS = 64
SECONDS = 10.0
USERS = 8
MIX = {"add": 20, "search": 35, "context": 15, "get": 15, "update": 15}  # percent


async def seed(http: httpx.AsyncClient) -> dict[str, list[str]]:
    """20 memories per user, one request each user."""
    ids: dict[str, list[str]] = {}
    for u in range(USERS):
        messages = [{"role": "user", "content": f"user {u} fact {i}: I like {['tea', 'chess', '猫', '咖啡'][i % 4]}"}
                    for i in range(20)]
        response = await http.post("/memories", json={"messages": messages, "user_id": f"user{u}", "infer": False})
        assert response.status_code == 200, response.text
        ids[f"user{u}"] = [r["id"] for r in response.json()["results"]]
    return ids


async def mixed_load(server: ServerProcess) -> tuple[Counter[str], Counter[str], list[str], int]:
    """(answers per "op status", successful updates per memory id, problems, operations done)."""
    answers: Counter[str] = Counter()
    updated: Counter[str] = Counter()
    problems: list[str] = []
    async with server.async_client(timeout=60, connections=CLIENTS) as http:
        ids = await seed(http)
        deadline = time.monotonic() + SECONDS

        async def client(n: int) -> None:
            rng = random.Random(n)
            user = f"user{n % USERS}"
            i = 0
            while time.monotonic() < deadline:
                i += 1
                op = rng.choices(list(MIX), weights=list(MIX.values()))[0]
                target = rng.choice(ids[user])  # clients of one user update the same memories concurrently
                try:
                    if op == "add":
                        response = await http.post("/memories", json={
                            "messages": [{"role": "user", "content": f"client {n} says {i}: I play chess"}],
                            "user_id": user, "infer": rng.random() < 0.5})
                    elif op == "search":
                        response = await http.post("/search", json={"query": rng.choice(["tea", "猫", "chess"]),
                                                                     "filters": {"user_id": user}, "top_k": 5})
                    elif op == "context":
                        response = await http.post("/context", json={"user_id": user, "messages": [
                            {"role": "user", "content": "what should I drink tonight?"}]})
                    elif op == "get":
                        response = await http.get(f"/memories/{target}")
                    else:
                        response = await http.put(f"/memories/{target}", json={"text": f"updated by {n} #{i}"})
                except httpx.HTTPError as exc:
                    problems.append(f"{op}: {type(exc).__name__} {exc}")
                    continue
                answers[f"{op} {response.status_code}"] += 1
                if response.status_code >= 500 or "database is locked" in response.text:
                    problems.append(f"{op}: {response.status_code} {response.text[:200]}")
                elif op == "update" and response.status_code == 200:
                    updated[target] += 1

        await asyncio.gather(*(client(n) for n in range(CLIENTS)))
    return answers, updated, problems, sum(answers.values())


def test_64_clients_mixing_reads_and_writes(serve: StartServer, tmp_path: Path) -> None:
    server = serve()
    answers, updated, problems, done = asyncio.run(mixed_load(server))
    assert not problems, f"{len(problems)} failures, e.g. {problems[:5]}"
    assert {key.split()[1] for key in answers} == {"200"}, answers
    assert done > 300, f"only {done} operations in {SECONDS:g} s: {answers}"  # the load was real
    assert sum(updated.values()) > 30
    history = dict(query(tmp_path / "memory.db",
                         "SELECT memory_id, COUNT(*) FROM history WHERE event = 'UPDATE' GROUP BY memory_id"))
    assert {i: n for i, n in history.items() if i in updated} == dict(updated)
    status, _ = server.terminate()
    assert status == 0
