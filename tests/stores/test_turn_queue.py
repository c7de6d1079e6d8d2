"""The store contract for the write path's queue of turns: every store (conftest.STORE_KINDS) must pass it.

A turn is stored with its messages before any extraction, claimed by exactly one worker at a time, and its state
survives a save/load round trip; the small key/value state (episode cursors) and `list_messages(after=...)` too.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from jiyi.records import Scope, StoredMessage, TurnRecord, TurnStatus
from jiyi.stores.base import MemoryStore

ALICE = Scope(user_id="alice")
BOB = Scope(user_id="bob")
T0 = datetime(2026, 1, 3, 18, 0, tzinfo=UTC)


def messages(scope: Scope, *texts: str) -> list[StoredMessage]:
    return [StoredMessage(content=t, role="user" if i % 2 == 0 else "assistant", scope=scope,
                          created_at=T0 + timedelta(seconds=i)) for i, t in enumerate(texts)]


def queue(store: MemoryStore, scope: Scope = ALICE, *texts: str, due: datetime = T0,
          status: TurnStatus = TurnStatus.QUEUED) -> TurnRecord:
    stored = messages(scope, *(texts or ("我住在杭州",)))
    turn = TurnRecord(scope=scope, message_ids=[m.id for m in stored], status=status, next_attempt_at=due,
                      created_at=due)
    store.add_turn(turn, stored)
    return turn


# --- add_turn / get_turn --------------------------------------------------------------------------------------

def test_add_turn_stores_the_messages_and_the_turn(store: MemoryStore) -> None:
    stored = messages(ALICE, "我下周三面试", "加油！")
    turn = TurnRecord(scope=ALICE, message_ids=[m.id for m in stored], options={"metadata": {"k": "v"}})
    store.add_turn(turn, stored)
    assert store.get_turn(turn.id) == turn
    assert store.get_messages(turn.message_ids) == stored
    assert store.list_messages(ALICE) == stored


def test_add_turn_is_atomic(store: MemoryStore) -> None:
    first = queue(store, ALICE, "first")
    again = messages(ALICE, "must not be stored")
    clash = TurnRecord(scope=ALICE, message_ids=[m.id for m in again], id=first.id)
    # The contract does not name the error; what matters is that nothing of the failed turn is left behind.
    with pytest.raises(Exception):  # noqa: B017
        store.add_turn(clash, again)
    assert store.get_messages([m.id for m in again]) == []
    assert [m.content for m in store.list_messages(ALICE)] == ["first"]
    assert store.get_turn(first.id) == first


def test_get_turn_of_unknown_id_is_none(store: MemoryStore) -> None:
    assert store.get_turn("no-such-turn") is None


# --- save_turn ------------------------------------------------------------------------------------------------

def test_save_turn_round_trips_every_field(store: MemoryStore) -> None:
    turn = queue(store, Scope("alice", "xiaoxiang", "chat-1"), "我对海鲜过敏", "记住了")
    turn.status = TurnStatus.RETRY
    turn.options = {"metadata": {"topic": "饮食", "n": 2, "nested": {"a": [1, 2]}}, "memory_type": "fact",
                    "prompt": "只记健康信息", "expiration_date": "2027-01-01T00:00:00+00:00",
                    "injected_memory_ids": ["m1", "m2"]}
    turn.attempts = 3
    turn.next_attempt_at = T0 + timedelta(minutes=2, microseconds=123456)
    turn.lease_until = T0 + timedelta(minutes=5)
    turn.last_error = "LLM at http://127.0.0.1/v1 answered HTTP 500: 服务不可用"
    turn.extractor = "offline-fallback"
    turn.results = [{"id": "m9", "memory": "用户对海鲜过敏", "event": "ADD", "role": "user"},
                    {"id": "m1", "memory": "用户吃素", "event": "NONE"}]
    turn.updated_at = T0 + timedelta(minutes=1)
    store.save_turn(turn)
    assert store.get_turn(turn.id) == turn


@pytest.mark.parametrize("status", list(TurnStatus))
def test_every_status_round_trips(store: MemoryStore, status: TurnStatus) -> None:
    turn = queue(store)
    turn.status = status
    store.save_turn(turn)
    loaded = store.get_turn(turn.id)
    assert loaded is not None and loaded.status is status


def test_save_turn_changes_only_that_turn(store: MemoryStore) -> None:
    one, two = queue(store), queue(store)
    one.status, one.attempts = TurnStatus.DONE, 1
    store.save_turn(one)
    assert store.get_turn(two.id) == two


# --- claim_turns ----------------------------------------------------------------------------------------------

def test_claim_takes_due_turns_oldest_first_and_marks_them_processing(store: MemoryStore) -> None:
    turns = [queue(store, ALICE, f"turn {i}", due=T0 + timedelta(seconds=i)) for i in range(3)]
    lease = T0 + timedelta(minutes=5)
    claimed = store.claim_turns(T0 + timedelta(minutes=1), lease, 2)
    assert [t.id for t in claimed] == [turns[0].id, turns[1].id]
    for turn in claimed:
        assert turn.status is TurnStatus.PROCESSING and turn.lease_until == lease
        stored = store.get_turn(turn.id)
        assert stored is not None and stored.status is TurnStatus.PROCESSING and stored.lease_until == lease
    assert [t.id for t in store.claim_turns(T0 + timedelta(minutes=1), lease, 10)] == [turns[2].id]
    assert store.claim_turns(T0 + timedelta(minutes=1), lease, 10) == []


def test_claim_skips_turns_not_yet_due(store: MemoryStore) -> None:
    later = queue(store, due=T0 + timedelta(minutes=10))
    retry_later = queue(store, due=T0 + timedelta(minutes=10), status=TurnStatus.RETRY)
    retry_due = queue(store, due=T0, status=TurnStatus.RETRY)
    lease = T0 + timedelta(hours=1)
    assert [t.id for t in store.claim_turns(T0 + timedelta(minutes=1), lease, 10)] == [retry_due.id]
    claimed = store.claim_turns(T0 + timedelta(minutes=11), lease, 10)
    assert [t.id for t in claimed] == [later.id, retry_later.id]


@pytest.mark.parametrize("status", [TurnStatus.DONE, TurnStatus.FAILED])
def test_finished_turns_are_never_claimed(store: MemoryStore, status: TurnStatus) -> None:
    queue(store, status=status)
    assert store.claim_turns(T0 + timedelta(days=1), T0 + timedelta(days=2), 10) == []


def test_a_processing_turn_is_claimed_again_only_after_its_lease_expired(store: MemoryStore) -> None:
    turn = queue(store)
    lease = T0 + timedelta(minutes=5)
    assert [t.id for t in store.claim_turns(T0, lease, 10)] == [turn.id]
    assert store.claim_turns(T0 + timedelta(minutes=4), T0 + timedelta(minutes=9), 10) == []  # the worker may live
    [again] = store.claim_turns(T0 + timedelta(minutes=6), T0 + timedelta(minutes=11), 10)  # it died
    assert again.id == turn.id and again.lease_until == T0 + timedelta(minutes=11)


def test_claiming_the_abandoned_only_leaves_queued_and_retried_turns(store: MemoryStore) -> None:
    queued = queue(store)
    retry = queue(store, status=TurnStatus.RETRY)
    held = queue(store, ALICE, "held")
    assert store.claim_turns(T0, T0 + timedelta(minutes=5), 10, abandoned_only=True) == []  # none being processed
    assert store.claim_turns(T0, T0 + timedelta(minutes=5), 1)[0].id == queued.id  # a worker takes the first
    assert store.claim_turns(T0 + timedelta(minutes=1), T0 + timedelta(minutes=6), 10, abandoned_only=True) == []
    [again] = store.claim_turns(T0 + timedelta(minutes=6), T0 + timedelta(minutes=11), 10, abandoned_only=True)
    assert again.id == queued.id  # its worker died: its lease ran out
    statuses = {t.id: t.status for t in (store.get_turn(retry.id), store.get_turn(held.id)) if t is not None}
    assert statuses == {retry.id: TurnStatus.RETRY, held.id: TurnStatus.QUEUED}


# --- renew_turns ----------------------------------------------------------------------------------------------

def test_a_renewed_lease_keeps_a_turn_from_other_claimers_until_it_runs_out(store: MemoryStore) -> None:
    turn = queue(store)
    [claimed] = store.claim_turns(T0, T0 + timedelta(seconds=15), 10)
    assert store.renew_turns([claimed.id], T0 + timedelta(seconds=25)) == [turn.id]  # the worker's heartbeat
    assert store.claim_turns(T0 + timedelta(seconds=20), T0 + timedelta(seconds=35), 10) == []  # past the first lease
    stored = store.get_turn(turn.id)
    assert stored is not None and stored.lease_until == T0 + timedelta(seconds=25)
    [again] = store.claim_turns(T0 + timedelta(seconds=26), T0 + timedelta(seconds=41), 10)  # no more beats: died
    assert again.id == turn.id


def test_renewing_leaves_turns_that_are_not_processing_alone(store: MemoryStore) -> None:
    done, processing = queue(store), queue(store)
    assert [t.id for t in store.claim_turns(T0, T0 + timedelta(seconds=15), 2)] == [done.id, processing.id]
    done.status, done.lease_until = TurnStatus.DONE, None  # finished before the beat's renewal landed
    store.save_turn(done)
    queued, retry = queue(store), queue(store, status=TurnStatus.RETRY)
    ids = [done.id, processing.id, queued.id, retry.id, "no-such-turn"]
    assert store.renew_turns(ids, T0 + timedelta(minutes=1)) == [processing.id]
    assert store.get_turn(done.id) == done
    assert store.get_turn(queued.id) == queued and store.get_turn(retry.id) == retry
    renewed = store.get_turn(processing.id)
    assert renewed is not None and renewed.lease_until == T0 + timedelta(minutes=1)
    assert store.renew_turns([], T0 + timedelta(minutes=1)) == []


def test_concurrent_claimers_never_get_the_same_turn(store: MemoryStore) -> None:
    ids = {queue(store, ALICE if i % 2 else BOB, f"turn {i}").id for i in range(60)}
    now, lease = T0 + timedelta(minutes=1), T0 + timedelta(minutes=30)
    start = threading.Barrier(2)
    got: list[list[str]] = [[], []]
    errors: list[BaseException] = []

    def claimer(slot: int) -> None:
        try:
            start.wait()
            while batch := store.claim_turns(now, lease, 3):
                got[slot].extend(t.id for t in batch)
        except BaseException as exc:  # surfaced below: an exception in a thread would otherwise vanish
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    assert not set(got[0]) & set(got[1])
    assert sorted(got[0] + got[1]) == sorted(ids)  # each turn exactly once


# --- turn_counts ----------------------------------------------------------------------------------------------

def test_turn_counts_per_status(store: MemoryStore) -> None:
    assert store.turn_counts() == {}
    for status, n in ((TurnStatus.QUEUED, 3), (TurnStatus.RETRY, 2), (TurnStatus.DONE, 1)):
        for _ in range(n):
            queue(store, status=status)
    assert store.turn_counts() == {"queued": 3, "retry": 2, "done": 1}
    store.claim_turns(T0 + timedelta(minutes=1), T0 + timedelta(minutes=5), 2)
    assert store.turn_counts() == {"queued": 1, "retry": 2, "done": 1, "processing": 2}


# --- state ----------------------------------------------------------------------------------------------------

def test_state_is_none_until_set_then_overwritten(store: MemoryStore) -> None:
    assert store.get_state("episode:user_id=alice") is None
    store.set_state("episode:user_id=alice", "m-30")
    store.set_state("episode:user_id=bob", "m-7")
    store.set_state("episode:user_id=alice", "m-60")
    assert store.get_state("episode:user_id=alice") == "m-60"
    assert store.get_state("episode:user_id=bob") == "m-7"


def test_reset_clears_turns_and_state(store: MemoryStore) -> None:
    turn = queue(store)
    store.set_state("k", "v")
    store.reset()
    assert store.get_turn(turn.id) is None and store.get_state("k") is None and store.turn_counts() == {}


# --- list_messages(after=...) ---------------------------------------------------------------------------------

def test_list_messages_after_a_message(store: MemoryStore) -> None:
    mine = [m for i in range(5) for m in messages(ALICE, f"alice {i}")]
    for i, message in enumerate(mine):
        store.add_messages([message])
        store.add_messages(messages(BOB, f"bob {i}"))
    assert [m.content for m in store.list_messages(ALICE, after=mine[1].id)] == ["alice 2", "alice 3", "alice 4"]
    assert [m.content for m in store.list_messages(ALICE, 2, after=mine[1].id)] == ["alice 3", "alice 4"]
    assert store.list_messages(ALICE, after=mine[-1].id) == []
    assert [m.content for m in store.list_messages(ALICE)] == [f"alice {i}" for i in range(5)]


def test_list_messages_after_includes_messages_stored_with_turns(store: MemoryStore) -> None:
    first = queue(store, ALICE, "one", "two")
    queue(store, ALICE, "three", "four")
    after = store.list_messages(ALICE, after=first.message_ids[-1])
    assert [m.content for m in after] == ["three", "four"]
