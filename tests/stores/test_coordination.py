"""The Coordination port's contract (stores/base.py: locks, idempotency keys, named values): every store
(conftest.STORE_KINDS) must pass it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jiyi.stores.base import Coordination, MemoryStore
from tests.stores.ports import as_port


@pytest.fixture
def coordination(store: MemoryStore) -> Coordination:
    return as_port(store, Coordination)


def test_a_named_lock_has_one_holder_until_it_lets_go_or_its_lease_runs_out(coordination: Coordination) -> None:
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert coordination.try_lock("decide:user_id=alice", "a", later)
    assert not coordination.try_lock("decide:user_id=alice", "b", later)
    assert coordination.try_lock("decide:user_id=bob", "b", later)  # another name: nobody waits
    coordination.unlock("decide:user_id=alice", "b")  # not b's to release
    assert not coordination.try_lock("decide:user_id=alice", "b", later)
    coordination.unlock("decide:user_id=alice", "a")
    assert coordination.try_lock("decide:user_id=alice", "b", datetime.now(UTC) - timedelta(seconds=1))  # lease over
    assert coordination.try_lock("decide:user_id=alice", "c", later)  # a dead holder's lease does not hold anyone up


def test_only_a_locks_holder_renews_its_lease(coordination: Coordination) -> None:
    soon = datetime.now(UTC) + timedelta(seconds=10)
    past = datetime.now(UTC) - timedelta(seconds=1)
    assert coordination.try_lock("decide:user_id=alice", "a", past)  # runs out at once
    assert coordination.renew_lock("decide:user_id=alice", "a", soon)  # the heartbeat came in time: held again
    assert not coordination.try_lock("decide:user_id=alice", "b", soon)
    assert not coordination.renew_lock("decide:user_id=alice", "b", soon)  # not b's: nothing changes
    coordination.unlock("decide:user_id=alice", "a")
    assert not coordination.renew_lock("decide:user_id=alice", "a", soon)  # let go: a late beat does not take it back
    assert coordination.try_lock("decide:user_id=alice", "b", datetime.now(UTC) - timedelta(seconds=1))
    assert coordination.try_lock("decide:user_id=alice", "c", soon)  # b's lease ran out and c took it over...
    assert not coordination.renew_lock("decide:user_id=alice", "b", soon)  # ...so b's beat is too late
    assert not coordination.try_lock("decide:user_id=alice", "b", soon)


def test_an_idempotency_key_is_claimed_once_then_answers_what_the_first_request_stored(
        coordination: Coordination) -> None:
    now = datetime.now(UTC)
    day = timedelta(days=1)
    assert coordination.claim_request("k1", now, day) == (True, None)
    assert coordination.claim_request("k1", now, day) == (False, None)  # the first request still runs
    coordination.finish_request("k1", '{"results": []}')
    assert coordination.claim_request("k1", now, day) == (False, '{"results": []}')
    assert coordination.claim_request("k2", now, day) == (True, None)
    coordination.finish_request("k2", None)  # it failed: a retry may run it
    assert coordination.claim_request("k2", now, day) == (True, None)
    assert coordination.claim_request("k1", now + 2 * day, day) == (True, None)  # forgotten after `keep`




def test_a_named_value_is_kept_and_replaced(coordination: Coordination) -> None:
    assert coordination.get_state("episodes:alice") is None
    coordination.set_state("episodes:alice", "m-12")
    coordination.set_state("episodes:bob", "m-3")
    coordination.set_state("episodes:alice", "m-40")
    assert (coordination.get_state("episodes:alice"), coordination.get_state("episodes:bob")) == ("m-40", "m-3")
