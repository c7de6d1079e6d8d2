"""A candidate said next to a better-than-typical candidate is lifted (core/retrieval.py: neighbour_support)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from jiyi import build_store
from jiyi.core.retrieval import neighbour_support
from jiyi.records import Category, MemoryRecord, Scope, SourceRef, StoredMessage
from jiyi.stores.base import MemoryStore

ALICE = Scope("alice")
T0 = datetime(2026, 5, 1, 20, 0, tzinfo=UTC)
GAP = 1800.0


@pytest.fixture
def store() -> Iterator[MemoryStore]:
    s = build_store("sqlite://:memory:")
    yield s
    s.close()


def conversation(store: MemoryStore, *minutes: float) -> list[StoredMessage]:
    """Messages said at these minutes after T0, one after another in Alice's scope, named m0, m1, ..."""
    messages = [StoredMessage(content=f"m{i}", role="user" if i % 2 == 0 else "assistant", scope=ALICE,
                              created_at=T0 + timedelta(minutes=m)) for i, m in enumerate(minutes)]
    store.add_messages(messages)
    return messages


def lifts(store: MemoryStore, *candidates: tuple[StoredMessage, float, Category],
          weight: float = 0.3) -> dict[str, float]:
    """neighbour_support for candidates (the message each came from, its match, its category), by message content."""
    records = {m.content: MemoryRecord(content=m.content, scope=ALICE, id=m.content, category=category,
                                       provenance=[SourceRef(m.id, m.role, m.created_at)])
               for m, _, category in candidates}
    matches = {m.content: match for m, match, _ in candidates}
    return neighbour_support(store, records, matches, weight, GAP)


MESSAGE, FACT, EPISODE = Category.MESSAGE, Category.FACT, Category.EPISODE


def test_the_turn_after_a_strong_match_is_lifted_by_how_far_it_stands_above_the_median(store: MemoryStore) -> None:
    question, answer, aside, filler1, filler2 = conversation(store, 0, 1, 5, 6, 7)
    lifted = lifts(store, (question, 0.6, MESSAGE), (aside, 0.4, MESSAGE), (answer, 0.4, MESSAGE),
                   (filler1, 0.1, MESSAGE), (filler2, 0.1, MESSAGE))
    # The median candidate matches 0.4: the answer gains 0.3 x (0.6 - 0.4). The question's neighbour (0.4) is no
    # better than the median: it lends nothing back, and the aside (after the answer) gains nothing from it either.
    assert lifted == {"m1": pytest.approx(0.06)}


def test_a_neighbour_no_better_than_the_typical_candidate_lifts_nothing(store: MemoryStore) -> None:
    old_mood, plan, filler = conversation(store, 0, 1, 30)
    lifted = lifts(store, (old_mood, 0.30, MESSAGE), (filler, 0.28, MESSAGE), (plan, 0.10, MESSAGE))
    # The plan matches below the median candidate (0.28): the old mood next to it gains nothing; the plan gains a
    # little from the mood, which stands above the median.
    assert lifted == {"m1": pytest.approx(0.3 * 0.02)}


def test_consecutive_messages_far_apart_in_time_are_different_conversations(store: MemoryStore) -> None:
    evening, next_day, filler1, filler2 = conversation(store, 0, 24 * 60, 24 * 60 + 90, 24 * 60 + 200)
    assert lifts(store, (evening, 0.7, MESSAGE), (next_day, 0.3, MESSAGE), (filler1, 0.3, MESSAGE),
                 (filler2, 0.3, MESSAGE)) == {}


def test_a_fact_is_placed_by_the_message_it_came_from_and_a_summary_by_none(store: MemoryStore) -> None:
    question, answer, later, filler1, filler2 = conversation(store, 0, 1, 2, 3, 4)
    lifted = lifts(store, (question, 0.8, EPISODE), (answer, 0.6, FACT), (later, 0.5, MESSAGE),
                   (filler1, 0.1, MESSAGE), (filler2, 0.1, MESSAGE))
    # The message after the fact's source gains from the fact (0.6 over the median 0.5); the summary citing m0 lends
    # the fact nothing, though it is next to it and matches best.
    assert lifted == {"m2": pytest.approx(0.3 * 0.1)}


def test_weight_zero_turns_it_off(store: MemoryStore) -> None:
    question, answer, filler = conversation(store, 0, 1, 2)
    assert lifts(store, (question, 0.9, MESSAGE), (filler, 0.3, MESSAGE), (answer, 0.2, MESSAGE), weight=0.0) == {}
