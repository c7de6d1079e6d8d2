"""Write-path benchmark: what Memory.add(infer=True) costs per chat turn offline, and how fast an async-mode
POST /memories answers while a slow LLM is configured.

    . /tmp/venv/bin/activate
    python bench/write_path.py              # full: ~4-5 min on 2 cores
    python bench/write_path.py --quick      # ~1.5 min: fewer users and POSTs
    python bench/write_path.py --skip-http  # the offline part only

What is measured, and how (also written into the JSON under "method"):

* Turns: the user messages of bench/data/extraction_eval.json (Chinese and English, 232 turns, ~30 % labelled
  chit-chat: no expected facts), replayed in dialogue order, one message per add. Each replaying user is one long
  conversation (no run_id), so episode summaries are written every 30 messages, as in a real chat.
* Offline, in process: `Memory(SqliteStore file in a temp dir, e5)` without an LLM, so jiyi's rules extract and
  decide. Fresh run: U users start empty, turns round-robin over users. Preloaded run: each user first gets
  ~1,000 memories from bench/corpus.py through `add(infer=False)` in batches of 100 (vectors from scale.py's cache in
  bench/.cache when present: "insert fast"), then one unmeasured chit-chat turn (it writes the catch-up episode over
  the preloaded messages and loads the scope's vectors), then the same replay. Every measured infer=True add is
  followed by the infer=False add of the same message for a parallel "raw" user: the baseline, same conditions.
  The split of each add comes from wrapping the store's, the embedder's and the offline rules' functions with
  timers; "rest" is wall time in none of them (facade, thread hops, record building). Throughput: turns / summed
  wall time (sequential), and with C users replaying concurrently through one AsyncMemory.
* Async HTTP: a FakeOpenAI server (jiyi.testing.fake_openai, its own process) answers every chat completion after
  --llm-delay s: extraction prompts with the hand-labelled facts of the turn (so chit-chat gives {"facts": []}),
  decision prompts with ADD (NONE when the fact is already stored), episode prompts with a summary. jiyi's server
  runs as in production: uvicorn in a separate (spawned) process around create_app(AsyncMemory(sqlite, e5,
  llm=...)), with its extraction worker. --prefill unmeasured async turns are queued first, so the worker is busy
  (LLM waits, embedding, writes) while the client measures. Then async_mode POSTs over keep-alive connections:
  one client at random (Poisson) times, --rate per second, so the posts span several worker cycles; then 8 client
  threads (one connection each) back to back. Latency is client-side, request to parsed 202 answer. Then the
  sync-mode baseline (POSTs that wait for the LLM), while the worker drains the queue; then every measured event is
  polled (GET /events/{id}) until SUCCEEDED. Worker throughput = completed turns / time between the first and the
  last completion (server timestamps), with a backlog the whole time.
* Other load: the machine may be shared; the cores other processes kept busy during each phase are recorded
  (steal time of the hypervisor separately), and --quiet-wait N waits up to N s before each phase.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from jiyi import AsyncMemory, Memory, build_embedder, build_store
from jiyi.core import offline as offline_rules
from jiyi.embedders.base import Embedder

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
import corpus
import scale
from scale import CpuMeter, Interval, free_port, log, machine_info, summary

BENCH_DIR = Path(__file__).resolve().parent
DATA = BENCH_DIR / "data" / "extraction_eval.json"
PRELOAD_BATCH = 100
WARMUP_TURNS = 20
CLIENT_THREADS = 8

TARGETS = {
    "offline_add_p50_ms": 30.0,  # Memory.add(infer=True), no LLM, in process, e5, SQLite file
    "async_post_p99_ms": 50.0,  # POST /memories async_mode, 2 s LLM configured, client-side
}


# --- load on the machine ------------------------------------------------------------------------------------------


def steal_s() -> float:
    """CPU seconds the hypervisor gave to others while this VM wanted to run (steal column of /proc/stat)."""
    return int(Path("/proc/stat").read_text().split("\n", 1)[0].split()[8]) / os.sysconf("SC_CLK_TCK")


class Load:
    """What else kept the cores busy during a phase: other processes, steal included (scale.CpuMeter), and steal
    alone (other tenants of the host; a vCPU taken away stalls the embedder's OpenMP team)."""

    def __init__(self, pids: Sequence[int]) -> None:
        self.cpu, self.steal, self.started = CpuMeter(pids), steal_s(), time.perf_counter()

    def result(self) -> dict[str, float]:
        wall = max(time.perf_counter() - self.started, 1e-9)
        return {"other_cores": self.cpu.foreign_cores(), "steal_cores": round((steal_s() - self.steal) / wall, 2)}


def quiet(args: argparse.Namespace, pids: Sequence[int], out: dict[str, Any], phase: str) -> None:
    """With --quiet-wait N: wait up to N s for other processes to go quiet before a phase; note what was seen."""
    if args.quiet_wait > 0:
        out.setdefault("load_before", {})[phase] = scale.wait_for_quiet(args.quiet_wait, pids)


# --- the turns -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    dialogue: str
    lang: str
    text: str
    facts: tuple[str, ...]  # hand-labelled facts; none = chit-chat

    @property
    def chit_chat(self) -> bool:
        return not self.facts


def load_turns(path: Path = DATA) -> list[Turn]:
    dialogues = json.loads(path.read_text())["dialogues"]
    return [Turn(d["id"], d["lang"], t["user"], tuple(f["text"] for f in t["facts"]))
            for d in dialogues for t in d["turns"]]


def user_message(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


# --- timing the parts of a call ------------------------------------------------------------------------------------


@contextmanager
def timed_calls(targets: Sequence[tuple[Any, str, str]]) -> Iterator[dict[str, list[Interval]]]:
    """Wrap each (object, attribute) with a timer under `label` for the block; async functions are timed until
    their result. Unlike scale.timed_methods this also restores module functions (not only instance methods)."""
    calls: dict[str, list[Interval]] = {label: [] for _, _, label in targets}
    saved: list[tuple[Any, str, bool, Any]] = []

    def wrap(fn: Callable[..., Any], out: list[Interval]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(fn):
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    out.append((started, time.perf_counter()))
            return timed_async

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                out.append((started, time.perf_counter()))
        return timed

    for obj, name, label in targets:
        own = name in vars(obj)
        original = getattr(obj, name)
        saved.append((obj, name, own, original))
        setattr(obj, name, wrap(original, calls[label]))
    try:
        yield calls
    finally:
        for obj, name, own, original in reversed(saved):
            if own:
                setattr(obj, name, original)
            else:
                delattr(obj, name)  # back to the class attribute


def write_path_targets(memory: Memory) -> list[tuple[Any, str, str]]:
    store, embedder = memory.store, memory.embedder
    targets = [
        (store, "add_turn", "store_turn"),
        (store, "add_messages", "store_messages"),
        (store, "list_messages", "load_context"),
        (offline_rules, "extract_user_facts", "extract_rules"),
        (embedder, "embed_documents", "embed"),
        (store, "vector_search", "vector_search"),
        (store, "keyword_search", "keyword_search"),
        (store, "get_many", "load_candidates"),
        (offline_rules, "decide_offline", "decide_rules"),
        (store, "insert", "store_insert"),
        (store, "update", "store_update"),
        (store, "get", "store_get"),
        (store, "soft_delete", "store_delete"),
        (store, "save_turn", "save_turn"),
        (memory.aio.write_path, "_write_episode_if_due", "episode"),
    ]
    return [t for t in targets if hasattr(t[0], t[1])]


def split(calls: dict[str, list[Interval]], marks: dict[str, int], wall_ms: float) -> tuple[dict[str, float], bool]:
    """ms per part for the calls made since `marks`, and whether an episode summary was written. Calls made inside
    the episode step count as "episode" only, so the parts are disjoint and "rest" = wall - their sum."""
    mine = {label: found[marks[label]:] for label, found in calls.items()}
    episodes = mine.get("episode", [])
    parts: dict[str, float] = {}
    episode_written = False
    for label, intervals in mine.items():
        if label != "episode":
            inside = [(s, e) for s, e in intervals if any(es <= s and e <= ee for es, ee in episodes)]
            episode_written |= label == "store_insert" and bool(inside)
            intervals = [i for i in intervals if i not in inside]
        ms = sum(e - s for s, e in intervals) * 1000
        if ms:
            parts[label] = round(ms, 3)
    parts["rest"] = round(wall_ms - sum(parts.values()), 3)
    return parts, episode_written


class TimedAdds:
    """Times Memory.add calls one at a time, with their split into parts."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    @contextmanager
    def active(self) -> Iterator[TimedAdds]:
        with timed_calls(write_path_targets(self.memory)) as calls:
            self.calls = calls
            yield self

    def add(self, text: str, user_id: str, infer: bool) -> tuple[float, dict[str, float], dict[str, Any]]:
        """Wall ms, ms per part, and the add's result with "episode_written" added."""
        marks = {label: len(found) for label, found in self.calls.items()}
        started = time.perf_counter()
        result = self.memory.add(user_message(text), user_id=user_id, infer=infer)
        wall = (time.perf_counter() - started) * 1000
        parts, result["episode_written"] = split(self.calls, marks, wall)
        return wall, parts, result


# --- offline: in process -------------------------------------------------------------------------------------------


class CachedVectors:
    """The e5 embedder, answering texts whose vectors scale.py cached in bench/.cache from that cache: the preload
    inserts 1,000s of memories in seconds. Same model_id and dims, so the store takes the vectors."""

    def __init__(self, embedder: Embedder, known: dict[str, np.ndarray]) -> None:
        self._embedder, self._known = embedder, known
        self.model_id, self.dims, self.calibration = embedder.model_id, embedder.dims, embedder.calibration

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self._known]
        if missing:
            for text, vector in zip(missing, self._embedder.embed_documents(missing), strict=True):
                self._known[text] = vector
        return np.stack([self._known[t] for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embedder.embed_query(text)


def preload(db_path: Path, embedder: Embedder, users: Sequence[str], per_user: int, seed: int) -> dict[str, Any]:
    """`per_user` corpus memories for each user through add(infer=False), PRELOAD_BATCH messages per call."""
    texts = corpus.memories(per_user * len(users), seed)
    cached = scale.load_cache("e5", seed, embedder, texts)  # empty when absent or made by another model
    known = dict(zip(texts, cached, strict=False))
    memory = Memory(build_store(f"sqlite:///{db_path}"), CachedVectors(embedder, known))
    started = time.perf_counter()
    for k, user in enumerate(users):
        mine = texts[k * per_user:(k + 1) * per_user]
        for i in range(0, len(mine), PRELOAD_BATCH):
            memory.add([{"role": "user", "content": t} for t in mine[i:i + PRELOAD_BATCH]], user_id=user,
                       infer=False)
    seconds = time.perf_counter() - started
    memory.close()
    return {"memories_per_user": per_user, "users": len(users), "vectors_from_cache": len(known),
            "seconds": round(seconds, 1), "memories_per_s": round(per_user * len(users) / seconds, 1)}


def replay(timer: TimedAdds, turns: Sequence[Turn], users: Sequence[str], run: str,
           baseline: bool = True) -> list[dict[str, Any]]:
    """Every turn for every user, round-robin over users; each infer=True add followed by the infer=False add of the
    same message for the user's raw twin."""
    rows = []
    for index, turn in enumerate(turns):
        for user in users:
            ms, parts, result = timer.add(turn.text, user, infer=True)
            row: dict[str, Any] = {
                "run": run, "user": user, "turn": index, "dialogue": turn.dialogue, "lang": turn.lang,
                "chit_chat": turn.chit_chat, "ms": round(ms, 3), "parts": parts,
                "events": dict(Counter(r["event"] for r in result["results"])),
                "episode_written": result["episode_written"],
            }
            if baseline:
                raw_ms, raw_parts, _ = timer.add(turn.text, f"{user}-raw", infer=False)
                row["raw_ms"], row["raw_parts"] = round(raw_ms, 3), raw_parts
            rows.append(row)
    return rows


def extracted(row: dict[str, Any]) -> bool:
    """Did the rules find a fact in this turn? (they then embed and compare; otherwise the turn is nearly free)"""
    return "extract_rules" in row["parts"] and ("embed" in row["parts"] or "vector_search" in row["parts"])


def group_stats(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    groups = {
        "all": rows,
        "chit_chat": [r for r in rows if r["chit_chat"]],
        "fact": [r for r in rows if not r["chit_chat"]],
        "rules_found_facts": [r for r in rows if extracted(r)],
        "rules_found_nothing": [r for r in rows if not extracted(r)],
        "episode_written": [r for r in rows if r["episode_written"]],
    }
    out = {}
    for name, group in groups.items():
        if not group:
            continue
        entry: dict[str, Any] = {"add_ms": summary([r["ms"] for r in group])}
        if "raw_ms" in group[0]:
            entry["raw_add_ms"] = summary([r["raw_ms"] for r in group])
            entry["p50_ratio_to_raw"] = round(entry["add_ms"]["p50"] / entry["raw_add_ms"]["p50"], 2)
        entry["mean_parts_ms"] = mean_parts(group)
        out[name] = entry
    return out


def mean_parts(rows: Sequence[dict[str, Any]], key: str = "parts") -> dict[str, float]:
    totals: Counter[str] = Counter()
    for r in rows:
        totals.update(r[key])
    return {k: round(v / len(rows), 3) for k, v in totals.most_common()}


def slowest(rows: Sequence[dict[str, Any]], share: float = 0.01) -> dict[str, Any]:
    """The slowest `share` of turns: what they spent the time on."""
    top = sorted(rows, key=lambda r: -r["ms"])[:max(1, round(len(rows) * share))]
    return {"turns": len(top), "min_ms": top[-1]["ms"], "mean_parts_ms": mean_parts(top),
            "examples": [{k: r[k] for k in ("run", "user", "turn", "dialogue", "ms", "parts", "events")}
                         for r in top[:5]]}


def event_counts(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for r in rows:
        total.update(r["events"])
    return dict(total)


async def concurrent_replay(memory: AsyncMemory, turns: Sequence[Turn], users: Sequence[str]) -> float:
    """Each user replays every turn in order; the users run concurrently. Returns the wall time in s."""
    async def one(user: str) -> None:
        for turn in turns:
            await memory.add(user_message(turn.text), user_id=user)

    started = time.perf_counter()
    await asyncio.gather(*(one(u) for u in users))
    return time.perf_counter() - started


def run_offline(args: argparse.Namespace, turns: Sequence[Turn], workdir: Path) -> dict[str, Any]:
    started = time.perf_counter()
    embedder = build_embedder("e5")
    embedder.embed_documents(["warm-up 预热"])
    load_s = time.perf_counter() - started
    for n in (1, 2, 3, 1):  # the engine's first calls of each size are slow; do them before anything is timed
        embedder.embed_documents(["warm-up 预热 sentence"] * n)
    pids = [os.getpid()]
    out: dict[str, Any] = {"model_load_s": round(load_s, 2), "load": {}}

    # Fresh users, empty store.
    fresh_db = workdir / "fresh.db"
    memory = Memory(build_store(f"sqlite:///{fresh_db}"), embedder)
    fresh_users = [f"u{k}" for k in range(args.users)]
    timer = TimedAdds(memory)
    with timer.active():
        for turn in turns[:WARMUP_TURNS]:
            timer.add(turn.text, "warmup", infer=True)
            timer.add(turn.text, "warmup-raw", infer=False)
        quiet(args, pids, out, "fresh")
        log(f"offline, fresh: {len(turns)} turns x {len(fresh_users)} users, each + its infer=False baseline")
        meter = Load(pids)
        fresh = replay(timer, turns, fresh_users, "fresh")
        out["load"]["fresh"] = meter.result()
    if args.concurrent_users:
        users = [f"c{k}" for k in range(args.concurrent_users)]
        quiet(args, pids, out, "concurrent")
        log(f"offline, concurrent: {len(users)} users replay the first half of the turns at once (one AsyncMemory)")
        meter = Load(pids)
        half = turns[:len(turns) // 2]
        wall = asyncio.run(concurrent_replay(memory.aio, half, users))
        out["load"]["concurrent"] = meter.result()
        out["concurrent"] = {"users": len(users), "turns": len(half) * len(users), "seconds": round(wall, 2),
                             "turns_per_s": round(len(half) * len(users) / wall, 1)}
    out["fresh_store"] = {"memories": sum(memory.store.count().values())}
    memory.close()
    gc.collect()

    # Users with ~1,000 memories each.
    pre_db = workdir / "preloaded.db"
    pre_users = [f"p{k}" for k in range(args.preloaded_users)]
    log(f"offline, preloaded: {args.preload} memories for each of {len(pre_users)} users (infer=False, batches)")
    out["preload"] = preload(pre_db, embedder, pre_users, args.preload, args.seed)
    memory = Memory(build_store(f"sqlite:///{pre_db}"), embedder)
    timer = TimedAdds(memory)
    with timer.active():
        first = []
        for user in pre_users:  # unmeasured: catch-up episode over the preloaded messages, scope vectors loaded
            ms, parts, _ = timer.add("好的，谢谢你", user, infer=True)
            first.append({"user": user, "ms": round(ms, 1), "parts": parts})
        out["preload"]["first_turn_after_preload"] = first
        quiet(args, pids, out, "preloaded")
        log(f"offline, preloaded: {len(turns)} turns x {len(pre_users)} users")
        meter = Load(pids)
        loaded = replay(timer, turns, pre_users, "preloaded")
        out["load"]["preloaded"] = meter.result()
    memory.close()

    rows = fresh + loaded
    out["runs"] = {}
    for name, group in (("fresh", fresh), ("preloaded", loaded), ("both", rows)):
        seconds = sum(r["ms"] for r in group) / 1000
        out["runs"][name] = {
            "users": len({r["user"] for r in group}), "turns": len(group),
            "turns_per_s_sequential": round(len(group) / seconds, 1),
            "raw_turns_per_s_sequential": round(len(group) / (sum(r["raw_ms"] for r in group) / 1000), 1),
            "events": event_counts(group),
            "groups": group_stats(group),
            "slowest_1pct": slowest(group),
            "raw_mean_parts_ms": mean_parts(group, "raw_parts"),
        }
    if args.keep_turns:
        out["turns"] = rows
    return out


# --- async HTTP: the server and the slow LLM, each in its own process ---------------------------------------------


class LabelledLLM:
    """The fake LLM's answers: a turn's hand-labelled facts for an extraction prompt, ADD (NONE for a fact stored
    word for word) for a decision prompt, a summary for an episode prompt; each after `delay` seconds. `counts`
    (shared with the parent) counts extraction / decision / episode / other calls."""

    def __init__(self, facts: dict[str, list[str]], delay: float, counts: Any) -> None:
        self.facts, self.delay, self.counts = facts, delay, counts

    def __call__(self, body: dict[str, Any]) -> Any:
        from jiyi.core import prompts
        from jiyi.testing.fake_openai import Reply

        messages = body.get("messages") or [{}]
        system = str(messages[0].get("content") or "")
        data = str(messages[-1].get("content") or "")
        if system in (prompts.DECIDE_EN, prompts.DECIDE_ZH):
            kind, answer = 1, self._decide(data)
        elif system in (prompts.EPISODE_EN, prompts.EPISODE_ZH):
            kind, answer = 2, {"summary": "聊了最近的生活 / talked about recent life"}
        elif system in (prompts.USER_FACTS_EN, prompts.USER_FACTS_ZH):
            said = [line[len("user: "):] for line in data.splitlines() if line.startswith("user: ")]
            facts = [f for text in said for f in self.facts.get(text.strip(), [])]
            kind, answer = 0, {"facts": [{"text": f, "type": "other", "importance": 0.6, "category": "fact"}
                                         for f in facts]}
        else:
            kind, answer = 3, {}
        with self.counts.get_lock():
            self.counts[kind] += 1
        return Reply(content=json.dumps(answer, ensure_ascii=False), delay=self.delay)

    @staticmethod
    def _decide(data: str) -> dict[str, Any]:
        existing: list[dict[str, str]] = []
        new: list[str] = []
        for line in data.splitlines():
            if line.startswith("Existing memories: "):
                existing = json.loads(line[len("Existing memories: "):])
            elif line.startswith("New facts: "):
                new = json.loads(line[len("New facts: "):])
        stored = {m["text"]: m["id"] for m in existing}
        return {"memory": [{"id": stored[f], "text": f, "event": "NONE"} if f in stored else
                           {"id": str(len(existing) + i), "text": f, "event": "ADD"} for i, f in enumerate(new)]}


def serve_fake_llm(port: int, facts: dict[str, list[str]], delay: float, counts: Any) -> None:
    """Child process: FakeOpenAI on 127.0.0.1:port."""
    from jiyi.testing.fake_openai import FakeOpenAI

    FakeOpenAI(LabelledLLM(facts, delay, counts), port=port).serve_forever()


def serve_jiyi(db_path: str, llm_url: str, port: int) -> None:
    """Child process: the real jiyi server (uvicorn, create_app with its extraction worker) with the fake LLM."""
    import uvicorn

    from jiyi.llms import build_llm
    from jiyi.server import create_app

    llm = build_llm("openai:fake", base_url=llm_url, timeout=30)
    app = create_app(AsyncMemory(build_store(f"sqlite:///{db_path}"), build_embedder("e5"), llm=llm))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


@contextmanager
def child(target: Callable[..., None], args: tuple[Any, ...], ready_url: str,
          timeout_s: float = 120) -> Iterator[int]:
    """Start `target` in a spawned process, wait until `ready_url` answers 200; yield its pid; stop it after."""
    process = multiprocessing.get_context("spawn").Process(target=target, args=args, daemon=True)
    process.start()
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if httpx.get(ready_url, timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or not process.is_alive():
                raise RuntimeError(f"{target.__name__} did not start")
            time.sleep(0.1)
        yield int(process.pid or 0)
    finally:
        process.terminate()
        process.join(timeout=20)
        if process.is_alive():
            process.kill()
            process.join()


@dataclass
class Posted:
    latencies_ms: list[float] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)  # perf_counter
    event_ids: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    seconds: float = 0.0


def post_async(client: httpx.Client, text: str, user: str, out: Posted) -> None:
    started = time.perf_counter()
    response = client.post("/memories", json={"messages": user_message(text), "user_id": user, "async_mode": True})
    body = response.json()
    out.latencies_ms.append((time.perf_counter() - started) * 1000)
    out.sent_at.append(started)
    out.statuses[response.status_code] += 1
    if response.status_code == 202:
        out.event_ids.append(body["event_id"])


def posts_sequential(url: str, items: Sequence[tuple[str, str]], rate: float, seed: int) -> Posted:
    """One client; with `rate` > 0 the posts are sent at random (Poisson) times, `rate` per second on average, so
    they span several cycles of the worker instead of finishing before its first LLM answer."""
    out = Posted()
    gaps = np.random.default_rng(seed).exponential(1 / rate, len(items)) if rate > 0 else np.zeros(len(items))
    with httpx.Client(base_url=url, timeout=60) as client:
        client.get("/health")
        started = time.perf_counter()
        due = started
        for (text, user), gap in zip(items, gaps, strict=True):
            due += gap
            if (wait := due - time.perf_counter()) > 0:
                time.sleep(wait)
            post_async(client, text, user, out)
        out.seconds = time.perf_counter() - started
    return out


def posts_concurrent(url: str, items: Sequence[tuple[str, str]], threads: int) -> Posted:
    """`threads` clients, one keep-alive connection each, posting back to back."""
    parts = [Posted() for _ in range(threads)]
    barrier = threading.Barrier(threads + 1)

    def client_thread(k: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            client.get("/health")  # open the connection before the clock starts
            barrier.wait()
            for text, user in items[k::threads]:
                post_async(client, text, user, parts[k])

    workers = [threading.Thread(target=client_thread, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    started = time.perf_counter()
    for w in workers:
        w.join()
    out = Posted(seconds=time.perf_counter() - started)
    for p in parts:
        out.latencies_ms += p.latencies_ms
        out.sent_at += p.sent_at
        out.event_ids += p.event_ids
        out.statuses.update(p.statuses)
    return out


def posts_sync(url: str, items: Sequence[tuple[str, str]]) -> dict[str, Any]:
    latencies, events = [], Counter[str]()
    with httpx.Client(base_url=url, timeout=120) as client:
        for text, user in items:
            started = time.perf_counter()
            response = client.post("/memories", json={"messages": user_message(text), "user_id": user})
            response.raise_for_status()
            latencies.append((time.perf_counter() - started) * 1000)
            events.update(r["event"] for r in response.json()["results"])
    return {"requests": len(items), "latency_ms": summary(latencies), "events": dict(events)}


def add_handler_buckets(url: str) -> dict[str, float]:
    """The server's own add-latency histogram (time inside Memory.add, as the route measures it), cumulative counts
    per upper bound in ms: tells waiting inside the handler apart from queueing in HTTP / the event loop."""
    counts: dict[str, float] = {}
    for line in httpx.get(f"{url}/metrics", timeout=30).text.splitlines():
        if line.startswith("memory_add_latency_seconds_bucket{"):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            key = bound if bound == "+Inf" else f"{float(bound) * 1000:g}"
            counts[key] = float(line.rsplit(" ", 1)[1])
    return counts


def drain(url: str, event_ids: Sequence[str], timeout_s: float) -> tuple[list[dict[str, Any]], float]:
    """Poll GET /events/{id} until every turn is SUCCEEDED or FAILED (or the time is up). Turns are claimed oldest
    first, so a sweep stops at the first unfinished one. Returns the final events and the seconds waited."""
    finished: dict[str, dict[str, Any]] = {}
    pending = list(event_ids)
    started = time.perf_counter()
    with httpx.Client(base_url=url, timeout=60) as client:
        while pending and time.perf_counter() - started < timeout_s:
            still = []
            for i, event_id in enumerate(pending):
                event = client.get(f"/events/{event_id}").json()
                if event["status"] in ("SUCCEEDED", "FAILED"):
                    finished[event_id] = event
                else:
                    still = pending[i:]
                    break
            pending = still
            if pending:
                time.sleep(2.0)
        for event_id in pending:  # out of time: record where they are
            finished[event_id] = client.get(f"/events/{event_id}").json()
    return [finished[i] for i in event_ids], time.perf_counter() - started


def completion_bursts(ends: Sequence[float], gap_s: float = 0.5) -> dict[str, Any]:
    """Completion times grouped where they are less than `gap_s` apart: the worker finishes a claimed batch
    together, then claims the next one."""
    groups: list[list[float]] = [[ends[0]]]
    for t in ends[1:]:
        if t - groups[-1][-1] > gap_s:
            groups.append([])
        groups[-1].append(t)
    starts = [g[0] for g in groups]
    return {"groups": len(groups), "turns_per_group": summary([len(g) for g in groups]),
            "seconds_between_groups": summary(list(np.diff(starts))) if len(starts) > 1 else {"n": 0}}


def worker_stats(events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    done = [e for e in events if e["status"] == "SUCCEEDED"]
    statuses = Counter(e["status"] for e in events)
    out: dict[str, Any] = {"turns": len(events), "statuses": dict(statuses),
                           "extractor": dict(Counter(e["extractor"] for e in events)),
                           "events": dict(Counter(r["event"] for e in done for r in e["results"]))}
    if len(done) >= 2:
        ends = sorted(datetime.fromisoformat(e["updated_at"]).timestamp() for e in done)
        lags = [datetime.fromisoformat(e["updated_at"]).timestamp() - datetime.fromisoformat(e["created_at"])
                .timestamp() for e in done]
        out["turns_per_s"] = round((len(ends) - 1) / (ends[-1] - ends[0]), 2)
        out["queue_to_done_s"] = summary(lags)
        out["completion_bursts"] = completion_bursts(ends)
    return out


def run_http(args: argparse.Namespace, turns: Sequence[Turn], workdir: Path) -> dict[str, Any]:
    facts = {t.text.strip(): list(t.facts) for t in turns}
    counts = multiprocessing.get_context("spawn").Array("i", 4)
    llm_port, jiyi_port = free_port(), free_port()
    llm_url, url = f"http://127.0.0.1:{llm_port}/v1", f"http://127.0.0.1:{jiyi_port}"
    db_path = workdir / "server.db"
    out: dict[str, Any] = {"llm_delay_s": args.llm_delay, "server": "uvicorn in a spawned process (multiprocessing), "
                           "create_app(AsyncMemory(sqlite file, e5, llm=openai:fake)) with its extraction worker",
                           "load": {}}
    seq_users = [f"h{k:03d}" for k in range(args.http_users)]
    con_users = [f"k{k:03d}" for k in range(args.http_users)]
    seq_items = [(turns[i % len(turns)].text, seq_users[i % len(seq_users)]) for i in range(args.posts)]
    con_items = [(turns[(i + 97) % len(turns)].text, con_users[i % len(con_users)]) for i in range(args.posts)]
    sync_items = [(t.text, "sync0") for t in turns[:args.sync_posts]]
    with child(serve_fake_llm, (llm_port, facts, args.llm_delay, counts), f"{llm_url}/models") as llm_pid, \
            child(serve_jiyi, (str(db_path), llm_url, jiyi_port), f"{url}/health") as server_pid:
        pids = [os.getpid(), llm_pid, server_pid]
        with httpx.Client(base_url=url, timeout=60) as client:  # warm the routes, the model, SQLite
            for turn in turns[:5]:
                client.post("/memories", json={"messages": user_message(turn.text), "user_id": "warmup",
                                               "infer": False}).raise_for_status()
            # Unmeasured async turns first: the worker is busy (LLM calls, embedding, writes) during the measurement.
            prefill = Posted()
            for i in range(args.prefill):
                post_async(client, turns[(i + 41) % len(turns)].text, f"w{i % args.http_users:03d}", prefill)
        out["prefill_async_turns"] = args.prefill
        quiet(args, pids, out, "sequential")
        phases = {
            "async_sequential": (f"{len(seq_items)} async POSTs, sequential, ~{args.rate:g}/s",
                                 lambda: posts_sequential(url, seq_items, args.rate, args.seed)),
            "async_concurrent": (f"{len(con_items)} async POSTs from {CLIENT_THREADS} client threads, back to back",
                                 lambda: posts_concurrent(url, con_items, CLIENT_THREADS)),
        }
        posted_by: dict[str, Posted] = {}
        for name, (what, post) in phases.items():
            log(f"http: {what}")
            meter, handler_before = Load(pids), add_handler_buckets(url)
            cpu_before = {"client": scale.process_cpu_s(os.getpid()), "server": scale.process_cpu_s(server_pid)}
            posted = posted_by[name] = post()
            cpu = {k: scale.process_cpu_s(pid) - cpu_before[k]
                   for k, pid in (("client", os.getpid()), ("server", server_pid))}
            out["load"][name.removeprefix("async_")] = meter.result()
            handler_after = add_handler_buckets(url)
            first = min(posted.sent_at)
            slow = sorted(zip(posted.latencies_ms, posted.sent_at, strict=True), reverse=True)[:8]
            n = len(posted.latencies_ms)
            out[name] = {"requests": n, "statuses": dict(posted.statuses), "latency_ms": summary(posted.latencies_ms),
                         "requests_per_s": round(n / posted.seconds, 1), "seconds": round(posted.seconds, 2),
                         "cpu_ms_per_request": {k: round(v * 1000 / n, 2) for k, v in cpu.items()},
                         "in_handler_le_ms": {k: int(v - handler_before.get(k, 0)) for k, v in handler_after.items()},
                         "slowest": [{"ms": round(ms, 1), "sent_s": round(at - first, 3)} for ms, at in slow]}
        sequential, concurrent = posted_by["async_sequential"], posted_by["async_concurrent"]
        log(f"http: {len(sync_items)} sync POSTs (the baseline), while the worker drains the queue")
        out["sync_baseline"] = posts_sync(url, sync_items)
        for name in ("async_sequential", "async_concurrent"):
            out[name]["p99_ratio_to_sync_p50"] = round(
                out[name]["latency_ms"]["p99"] / out["sync_baseline"]["latency_ms"]["p50"], 4)
        log("http: polling GET /events/{id} until every async turn is done")
        events, waited = drain(url, sequential.event_ids + concurrent.event_ids, args.drain_timeout)
        out["worker"] = {**worker_stats(events), "polled_s": round(waited, 1)}
        out["llm_calls"] = dict(zip(("extraction", "decision", "episode", "other"), counts[:], strict=True))
    return out


# --- report --------------------------------------------------------------------------------------------------------


METHOD = {
    "turns": "user messages of bench/data/extraction_eval.json in dialogue order, one message per add; "
             "chit_chat = turns labelled with no facts; fact = the others",
    "offline": "Memory(sqlite file, e5), no LLM (jiyi's rules), sequential in-process calls, wall time around "
               "Memory.add; each infer=True add is followed by the infer=False add of the same message "
               "for a twin user (the raw baseline)",
    "preloaded": "users first get corpus memories via add(infer=False) in batches of 100 (vectors from bench/.cache "
                 "when present), then one unmeasured chit-chat turn, then the replay",
    "parts": "time inside the wrapped store / embedder / rule functions during the add; calls made by the episode "
             "summary count as 'episode' only; rest = wall - sum of parts (facade, event-loop and thread hops, "
             "record building)",
    "rules_found_facts": "turns where the offline rules extracted at least one fact (embedding + candidate search ran)",
    "concurrent": "users replaying the first half of the turns at once through one AsyncMemory (asyncio.gather), "
                  "turns / wall time",
    "http_async": "POST /memories with async_mode=true, client-side latency to the parsed 202 answer, keep-alive "
                  "httpx clients, after --prefill unmeasured async turns (the worker is busy throughout); "
                  "sequential = one client, Poisson arrivals at --rate/s; concurrent = 8 threads with a "
                  "connection each, back to back (closed loop: latency includes queueing at the server)",
    "cpu_ms_per_request": "CPU time of the client process and of the server process (its worker included) during the "
                          "phase, divided by the requests",
    "in_handler_le_ms": "requests of the phase by the server's memory_add_latency_seconds histogram (time inside "
                        "Memory.add in the route), cumulative counts per upper bound in ms",
    "http_sync": "POST /memories without async_mode: waits for extraction (+ decision) by the slow LLM",
    "worker": "GET /events/{id} polled after the posts; turns_per_s = (done - 1) / (last updated_at - first "
              "updated_at), server clock, with a backlog throughout; queue_to_done_s = updated_at - created_at",
}


def fmt(stats: dict[str, Any], keys: Sequence[str] = ("p50", "p90", "p99")) -> str:
    return " / ".join(f"{stats[k]:.1f}" for k in keys)


def load_line(load: dict[str, dict[str, float]]) -> str:
    return "other load (cores busy outside this benchmark / of which steal): " + ", ".join(
        f"{phase} {v['other_cores']:.2f} / {v['steal_cores']:.2f}" for phase, v in load.items())


def table(report: dict[str, Any]) -> str:
    lines = []
    off = report.get("offline")
    if off:
        lines += ["Offline Memory.add (in process, e5, SQLite file, jiyi rules); ms p50 / p90 / p99",
                  "| run | turns | group | n | infer=True | infer=False (raw) | p50 ratio |",
                  "|---|---|---|---|---|---|---|"]
        for run in ("fresh", "preloaded"):
            r = off["runs"][run]
            label = f"{run} ({r['users']} users" + (f", {off['preload']['memories_per_user']} mem each)"
                                                    if run == "preloaded" else ")")
            for group in ("all", "chit_chat", "fact", "rules_found_facts", "rules_found_nothing", "episode_written"):
                g = r["groups"].get(group)
                if g:
                    lines.append(f"| {label} | {r['turns']} | {group} | {g['add_ms']['n']} | {fmt(g['add_ms'])} "
                                 f"| {fmt(g['raw_add_ms'])} | {g['p50_ratio_to_raw']:.2f} |")
        lines.append("")
        for run in ("fresh", "preloaded"):
            r = off["runs"][run]
            parts = r["groups"]["rules_found_facts"]["mean_parts_ms"] if "rules_found_facts" in r["groups"] else {}
            lines.append(f"{run}: sequential {r['turns_per_s_sequential']:.0f} turns/s (raw "
                         f"{r['raw_turns_per_s_sequential']:.0f}/s); events {r['events']}")
            lines.append("  mean ms per turn where rules found facts: "
                         + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()))
            s = r["slowest_1pct"]
            lines.append(f"  slowest 1% ({s['turns']} turns, >= {s['min_ms']:.0f} ms): "
                         + ", ".join(f"{k} {v:.1f}" for k, v in list(s["mean_parts_ms"].items())[:6]))
        if "concurrent" in off:
            c = off["concurrent"]
            lines.append(f"concurrent: {c['users']} users at once, {c['turns']} turns in {c['seconds']} s = "
                         f"{c['turns_per_s']:.0f} turns/s")
        lines.append(load_line(off["load"]))
        lines.append("")
    http = report.get("http")
    if http:
        lines += [f"Async POST /memories, LLM answers after {http['llm_delay_s']} s; ms client-side",
                  "| mode | requests | statuses | p50 / p90 / p99 | max | req/s | p99 / sync p50 "
                  "| CPU ms/req client / server | in handler <=5 / <=25 ms |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for name in ("async_sequential", "async_concurrent"):
            h = http[name]
            mode = (f"one client, ~{report['args']['rate']:g}/s" if name == "async_sequential"
                    else f"{CLIENT_THREADS} clients, back to back")
            lines.append(f"| {mode} | {h['requests']} | {h['statuses']} | {fmt(h['latency_ms'])} "
                         f"| {h['latency_ms']['max']:.1f} | {h['requests_per_s']:.0f} | {h['p99_ratio_to_sync_p50']} "
                         f"| {h['cpu_ms_per_request']['client']:.2f} / {h['cpu_ms_per_request']['server']:.2f} "
                         f"| {h['in_handler_le_ms'].get('5', 0)} / {h['in_handler_le_ms'].get('25', 0)} |")
        s = http["sync_baseline"]
        lines.append(f"| sync (baseline) | {s['requests']} | - | {fmt(s['latency_ms'])} | {s['latency_ms']['max']:.1f} "
                     "| - | - | - | - |")
        w = http["worker"]
        lag = fmt(w["queue_to_done_s"], ("p50", "p99")) if "queue_to_done_s" in w else "-"
        lines.append(f"worker: {w['statuses']} of {w['turns']} async turns, {w.get('turns_per_s', '-')} turns/s, "
                     f"queue->done s p50/p99 {lag}; LLM calls {http['llm_calls']}")
        b = w.get("completion_bursts")
        if b:
            lines.append(f"worker completions come in {b['groups']} bursts: p50 {b['turns_per_group']['p50']:.0f} "
                         f"turns each, p50 {b['seconds_between_groups'].get('p50', 0):.1f} s apart")
        lines.append(load_line(http["load"]))
        lines.append("")
    lines += ["| target | goal | measured | met |", "|---|---|---|---|"]
    for c in report["target_check"]:
        lines.append(f"| {c['target']} | {c['goal']:g} | {c['measured']:g} | {'yes' if c['met'] else 'NO'} |")
    return "\n".join(lines)


def target_check(report: dict[str, Any]) -> list[dict[str, Any]]:
    checks = []
    if report.get("offline"):
        for run in ("fresh", "preloaded"):
            value = report["offline"]["runs"][run]["groups"]["all"]["add_ms"]["p50"]
            checks.append({"target": f"offline_add_p50_ms ({run})", "goal": TARGETS["offline_add_p50_ms"],
                           "measured": value, "met": value <= TARGETS["offline_add_p50_ms"]})
    if report.get("http"):
        for mode in ("async_sequential", "async_concurrent"):
            value = report["http"][mode]["latency_ms"]["p99"]
            checks.append({"target": f"async_post_p99_ms ({mode})", "goal": TARGETS["async_post_p99_ms"],
                           "measured": value, "met": value <= TARGETS["async_post_p99_ms"]})
    return checks


# --- main ----------------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer users and POSTs (~1.5 min)")
    parser.add_argument("--users", type=int, default=4, help="fresh users replaying every turn (offline)")
    parser.add_argument("--preloaded-users", type=int, default=3, help="users with --preload memories (offline)")
    parser.add_argument("--preload", type=int, default=1000, help="memories per preloaded user")
    parser.add_argument("--concurrent-users", type=int, default=4, help="users replaying at once (0: skip)")
    parser.add_argument("--posts", type=int, default=300, help="async POSTs per mode (sequential, concurrent)")
    parser.add_argument("--http-users", type=int, default=32, help="users the async POSTs are spread over")
    parser.add_argument("--rate", type=float, default=25.0,
                        help="mean async POSTs per second of the sequential client (0: back to back)")
    parser.add_argument("--prefill", type=int, default=24, help="unmeasured async turns queued before measuring")
    parser.add_argument("--sync-posts", type=int, default=10, help="sync-mode POSTs (the baseline)")
    parser.add_argument("--llm-delay", type=float, default=2.0, help="seconds the fake LLM takes per answer")
    parser.add_argument("--drain-timeout", type=float, default=300.0, help="max seconds to wait for the worker")
    parser.add_argument("--quiet-wait", type=float, default=0.0,
                        help="before each phase, wait up to this many seconds for other processes to go quiet")
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--keep-turns", action="store_true", help="write every timed turn into the JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(BENCH_DIR / "results" / "write_path.json"))
    parser.add_argument("--note", default="", help="free text stored in the JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.users, args.preloaded_users, args.concurrent_users = 1, 1, 2
        args.posts, args.sync_posts, args.prefill = 96, 4, 16
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    turns = load_turns()
    started = time.perf_counter()
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine_info(), "args": vars(args),
        "method": METHOD, "targets": TARGETS,
        "turns": {"count": len(turns), "chit_chat": sum(t.chit_chat for t in turns),
                  "chinese": sum(t.lang == "zh" for t in turns),
                  "mean_chars": round(sum(len(t.text) for t in turns) / len(turns), 1)},
    }
    out = Path(args.out)
    workdir = Path(tempfile.mkdtemp(prefix="jiyi-write-path-"))
    try:
        if not args.skip_offline:
            report["offline"] = run_offline(args, turns, workdir)
        if not args.skip_http:
            report["http"] = run_http(args, turns, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["target_check"] = target_check(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(table(report))
    print(f"\n{report['seconds']:.0f} s; written: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
