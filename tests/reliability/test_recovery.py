"""How long a crash hides acknowledged turns. A server is killed with SIGKILL while 16 clients add (sync and async),
then started again on the same store, with the default settings: every turn it had acknowledged, including those the
dead process had claimed, must be searchable within RECOVERY_LIMIT seconds of the kill, on each store.

The dead process's turns wait for their lease to run out (WriteSettings.lease_seconds, renewed while a live worker
works on them), so the recovery time is about the lease, plus the restart and the work left."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from tests import pg
from tests.reliability.conftest import ServerProcess, StartServer, query
from tests.reliability.test_crash import Acknowledged, write_until_killed

RECOVERY_LIMIT = 30.0  # seconds from the kill until every acknowledged turn is searchable
ENOUGH_TURNS = 50  # acknowledged turns (infer=true) before the kill, for the recovery to be judged


def unfinished(server: ServerProcess, turn_ids: list[str]) -> int:
    """How many of these turns are not done, read from the store itself (not through the server)."""
    if server.store.startswith("sqlite:"):
        marks = ", ".join("?" for _ in turn_ids)
        rows = query(server.db, f"SELECT count(*) FROM turns WHERE status != 'done' AND id IN ({marks})", *turn_ids)
        return int(rows[0][0])
    import psycopg  # the PostgreSQL store's driver: only where that store is tested

    with psycopg.connect(server.store) as connection:
        row = connection.execute("SELECT count(*) FROM turns WHERE status <> 'done' AND id = ANY(%s)",
                                 (turn_ids,)).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None: the SQLite file `serve` picks; else a PostgreSQL database of the test's own."""
    if request.param == "sqlite":
        yield None
        return
    request.getfixturevalue("postgres")  # the session stops the server at its end
    url = pg.running().create_database()
    yield url
    pg.running().drop_database(url)


def test_turns_a_killed_server_had_acknowledged_are_searchable_within_30_s(serve: StartServer,
                                                                          store_url: str | None) -> None:
    acknowledged = Acknowledged()
    server = serve(store=store_url)
    killed = asyncio.run(write_until_killed(server, acknowledged, seed=7, kill_after=3.0,
                                            enough=lambda written: len(written.said) > ENOUGH_TURNS))
    assert not acknowledged.server_errors, acknowledged.server_errors[:5]
    turns = sorted(acknowledged.said)
    assert len(turns) > ENOUGH_TURNS, "too little was written to judge"

    server = serve(store=store_url)  # the same store
    restarted = time.monotonic()
    waiting = unfinished(server, turns)
    assert waiting > 0, "every turn was finished before the kill: nothing was left to recover"
    while unfinished(server, turns):
        assert time.monotonic() - killed < RECOVERY_LIMIT, (
            f"{unfinished(server, turns)} of {len(turns)} acknowledged turns still not done "
            f"{RECOVERY_LIMIT:g} s after the kill ({waiting} were waiting at the restart)")
        time.sleep(0.1)
    recovered = time.monotonic() - killed

    print(f"\n{server.store.split(':', 1)[0]}: {len(turns)} acknowledged turns, {waiting} waiting at the restart "
          f"({restarted - killed:.1f} s after the kill); all done {recovered:.1f} s after the kill")

    with server.client() as client:  # done means searchable: a search with the turn's words finds what it remembered
        missing = []
        for event_id, (user, text) in acknowledged.said.items():
            remembered = {r["id"] for r in client.get(f"/events/{event_id}").json()["results"]}
            response = client.post("/search", json={"query": text, "user_id": user, "top_k": 10})
            assert response.status_code == 200, response.text
            found = response.json()["results"]
            if not remembered & {hit["id"] for hit in found} and text not in [hit["memory"] for hit in found]:
                missing.append(text)
    assert not missing, f"{len(missing)} of {len(turns)} acknowledged turns not found, e.g. {missing[:3]}"
