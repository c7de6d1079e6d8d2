"""`jiyi serve --workers N` (JIYI_WORKERS): several server processes on one port and one store, each with its own
extraction worker and maintenance scheduler, serving as one."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.reliability.conftest import StartServer, children, wait_until


def test_two_worker_processes_serve_one_store_as_one(serve: StartServer) -> None:
    server = serve(JIYI_WORKERS="2")
    def workers() -> list[int]:
        return [c for c in children(server.pid) if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]

    assert len(wait_until(lambda: workers() if len(workers()) == 2 else None, 30, "two worker processes")) == 2

    async def traffic() -> list[int]:
        async with server.async_client() as client:
            adds = [client.post("/memories", json={"messages": [{"role": "user", "content": f"I collect stamp {i}"}],
                                                    "user_id": "alice", "infer": False}) for i in range(30)]
            same = [client.post("/memories", json={"messages": [{"role": "user", "content": "我对花生过敏"}],
                                                    "user_id": "bob"}) for _ in range(10)]
            answers = await asyncio.gather(*adds, *same)
            searches = await asyncio.gather(*(client.post("/search", json={"query": "stamp", "user_id": "alice",
                                                                            "top_k": 50}) for _ in range(20)))
            return [a.status_code for a in [*answers, *searches]] + [len(searches[-1].json()["results"])]

    *statuses, found = asyncio.run(traffic())
    assert set(statuses) == {200} and found == 30  # every add, seen by whichever process answers the search
    with server.client() as client:
        facts = client.get("/memories", params={"user_id": "bob"}).json()["results"]
    assert [f["memory"] for f in facts] == ["用户对花生过敏"]  # ten racing adds over two processes: one fact
    _, seconds = server.terminate()
    assert seconds < 15
