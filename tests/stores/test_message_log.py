"""The MessageLog port's contract (stores/base.py): every store (conftest.STORE_KINDS) must pass it."""

from __future__ import annotations

import pytest

from jiyi.records import Scope, StoredMessage
from jiyi.stores.base import MemoryStore, MessageLog
from tests.stores.ports import as_port

ALICE = Scope(user_id="alice")
BOB = Scope(user_id="bob")


@pytest.fixture
def log(store: MemoryStore) -> MessageLog:
    return as_port(store, MessageLog)


def test_messages_are_kept_in_order(log: MessageLog) -> None:
    msgs = [StoredMessage(content=f"m{i}", role="user" if i % 2 == 0 else "assistant", scope=ALICE) for i in range(5)]
    log.add_messages(msgs)
    log.add_messages([StoredMessage(content="bob's", role="user", scope=BOB)])
    assert [m.content for m in log.list_messages(ALICE)] == ["m0", "m1", "m2", "m3", "m4"]
    assert [m.content for m in log.list_messages(ALICE, limit=2)] == ["m3", "m4"]
    assert log.list_messages(ALICE)[0] == msgs[0]


def test_previous_messages_follow_the_scope_not_the_store(log: MessageLog) -> None:
    chat = Scope("alice", "xiaoxiang", "chat-1")
    other_run = Scope("alice", "xiaoxiang", "chat-2")
    a1, a2 = (StoredMessage(content=f"a{i}", role="user", scope=chat) for i in range(2))
    b1 = StoredMessage(content="bob's", role="user", scope=BOB)
    r1 = StoredMessage(content="another chat", role="user", scope=other_run)
    a3 = StoredMessage(content="a3", role="assistant", scope=chat)
    only_user = StoredMessage(content="no agent", role="user", scope=ALICE)
    for message in (a1, a2, b1, r1, a3, only_user):  # interleaved, as concurrent users write
        log.add_messages([message])
    previous = log.previous_messages([a1.id, a2.id, a3.id, b1.id, r1.id, only_user.id, "unknown"])
    # Another user's or another run's message in between is not "before" in this conversation; a scope's first has none.
    assert previous == {a2.id: a1.id, a3.id: a2.id}
    assert log.previous_messages([]) == {}


def test_previous_messages_stay_right_as_the_log_grows(log: MessageLog) -> None:
    """Asked search after search (the read path's neighbours): an answer given before more messages came, or before
    an id was stored at all, is still right after."""
    first, second, third = (StoredMessage(content=f"m{i}", role="user", scope=ALICE) for i in range(3))
    log.add_messages([first])
    assert log.previous_messages([first.id, second.id]) == {}
    log.add_messages([second, StoredMessage(content="bob's", role="user", scope=BOB)])
    assert log.previous_messages([first.id, second.id, third.id]) == {second.id: first.id}
    log.add_messages([third])
    assert log.previous_messages([third.id, second.id, first.id]) == {second.id: first.id, third.id: second.id}


def test_messages_are_got_by_id_in_the_order_they_were_stored(log: MessageLog) -> None:
    first, second, third = (StoredMessage(content=f"m{i}", role="user", scope=ALICE) for i in range(3))
    log.add_messages([first, second])
    log.add_messages([third])
    assert log.get_messages([third.id, "unknown", first.id]) == [first, third]
    assert log.get_messages([]) == []
