"""The e5 engine's thread team (embedders/thread_team.py): the whole team on free cores, one thread after query calls
in a row show the cores busy, the whole team again after a while and for large batches; and on the real engine the
team of the calling thread really changes."""

from __future__ import annotations

import time

from jiyi.embedders.thread_team import CONTENDED_CALLS, CONTENDED_SECONDS, LARGE_BATCH, ThreadTeam


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _team() -> tuple[ThreadTeam, list[int], Clock]:
    calls: list[int] = []
    clock = Clock()
    return ThreadTeam(2, calls.append, clock=clock), calls, clock


def test_free_cores_keep_the_whole_team_through_a_hiccup() -> None:
    team, calls, _ = _team()
    for seconds in (0.007, 0.008, 0.030, 0.007, 0.031, 0.032, 0.007):  # slow calls, never CONTENDED_CALLS in a row
        assert team.choose(1) == 2
        team.observe_queries(1, 12, 2, seconds)
    assert calls == [] and team.switches == 0


def test_busy_cores_get_one_thread_for_a_while_then_the_team_again() -> None:
    team, calls, clock = _team()
    team.choose(2)
    team.observe_queries(2, 24, 2, 0.014)  # the pace on free cores: 7 ms a query
    for _ in range(CONTENDED_CALLS):
        assert team.choose(2) == 2
        team.observe_queries(2, 22, 2, 0.040)  # 20 ms a query against 7
    assert team.choose(2) == 1 and calls == [1]
    team.observe_queries(2, 24, 1, 0.030)  # one thread's calls say nothing about the cores
    assert team.choose(LARGE_BATCH) == 2  # a large batch pays for the barrier even on busy cores
    assert team.choose(3) == 1
    clock.now += CONTENDED_SECONDS + 0.1
    assert team.choose(3) == 2
    assert calls == [1, 2, 1, 2]


def test_searches_beyond_the_call_get_one_thread_at_once() -> None:
    """Searches in flight that the call does not embed are ranking memories on the cores: one thread, from the first
    call, without waiting for slow calls to show it; the whole team again once they are done."""
    calls: list[int] = []
    in_flight = [1]
    team = ThreadTeam(2, calls.append, clock=Clock(), searches_in_flight=lambda: in_flight[0])
    assert team.choose(1) == 2  # a lone search: the whole team
    in_flight[0] = 3
    assert team.choose(3) == 2  # every search in flight is in this call
    assert team.choose(1) == 1 and team.choose(2) == 1
    assert team.choose(LARGE_BATCH) == 2  # a large batch pays for the barrier even beside other work
    assert team.choose(1) == 1
    in_flight[0] = 0  # a passage while nobody searches
    assert team.choose(1) == 2
    assert calls == [1, 2, 1, 2]


def test_a_large_batch_with_a_second_engine_beside_it_gets_one_thread() -> None:
    """With a second engine taking the queries a call leaves waiting (e5.py), the two share the cores: a team of
    two beside it would wait at every barrier for the core the second engine holds."""
    in_flight = [40]
    team = ThreadTeam(2, lambda n: None, clock=Clock(), searches_in_flight=lambda: in_flight[0])
    assert team.choose(LARGE_BATCH) == 2
    assert team.choose(LARGE_BATCH, beside=True) == 1
    in_flight[0] = LARGE_BATCH  # every search in flight is in this call: nothing for the second engine
    assert team.choose(LARGE_BATCH, beside=True) == 2 and team.choose(1, beside=False) == 1


def test_a_call_is_compared_with_calls_of_its_size() -> None:
    """A /context query of a whole conversation (hundreds of tokens) is no slow two-word query: calls are compared
    with the fastest of about as many tokens."""
    team, _, _ = _team()
    team.observe_queries(1, 10, 2, 0.007)
    for _ in range(CONTENDED_CALLS):
        team.observe_queries(1, 250, 2, 0.060)  # long queries: no busy cores
        team.observe_queries(1, 11, 2, 0.0075)
    assert team.choose(1) == 2
    for _ in range(CONTENDED_CALLS):
        team.observe_queries(1, 240, 2, 0.200)  # the same long queries, now 3x their pace
    assert team.choose(1) == 1


def test_the_engine_s_team_is_steered_on_its_own_thread() -> None:
    """With the real engine: after choose() the OpenMP runtime gives the engine's thread that team (a thread of its
    own: the caller's team is not touched), and a query still embeds the same."""
    import os

    import numpy as np

    from jiyi.embedders.e5 import E5SmallEmbedder

    embedder = E5SmallEmbedder()
    team = embedder._team
    if team is None:  # a one-core machine (or OMP_NUM_THREADS=1): no team to steer
        assert (os.cpu_count() or 1) == 1 or os.environ.get("OMP_NUM_THREADS") == "1"
        return
    assert team.read_threads is not None
    whole = embedder.embed_query("上海 咖啡 and tea")

    def on_one_thread() -> int:
        team._contended_until = time.monotonic() + 60  # as after busy calls
        team.choose(1)
        assert team.read_threads is not None
        return team.read_threads()

    assert embedder._thread.submit(on_one_thread).result() == 1
    assert team.read_threads() == team.full  # this thread's team is its own
    assert np.allclose(embedder.embed_query("上海 咖啡 and tea"), whole, atol=1e-5)
    team._contended_until = 0.0
    assert embedder._thread.submit(lambda: (team.choose(1), team.read_threads())[1]).result() == team.full
