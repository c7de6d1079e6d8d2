"""Lifecycle simulation benchmark (issue 5): users chat every day for months; jiyi's maintenance pass runs every
night. Does the store stop growing, how much does it compress, and are the planted facts still found at the end?

    /tmp/venv/bin/python bench/lifecycle.py                # 100 users x 180 days, e5, + the no-lifecycle baseline
    /tmp/venv/bin/python bench/lifecycle.py --users 20 --out bench/results/lifecycle-20u.json    # ~10 min on 2 cores
    /tmp/venv/bin/python bench/lifecycle.py --embedder hashing --users 10 --days 60 --no-baseline   # a quick look
    /tmp/venv/bin/python bench/lifecycle.py --maintain-every 0     # only the baseline: no maintenance at all
    /tmp/venv/bin/python bench/lifecycle.py --embedder hashing --users 3 --limit 20 --no-baseline   # smoke run

On a machine shared with other heavy processes, run with OMP_WAIT_POLICY=PASSIVE (see bench/locomo.py).

What is simulated, and how it is measured (also written into the JSON under "method"):

* Chats: bench/lifecycle_data.py (deterministic from --seed; its docstring says what is planted). Every exchange (a
  user message and the assistant's short reply) is one `AsyncMemory.add(..., timestamp=...)` with infer=True and no
  LLM, so jiyi's offline rules extract and decide; the write path also writes an episode summary every 30 messages.
  All users' exchanges of a day are replayed in time order, one at a time, against one SQLite file (temporary
  unless --store) with the --embedder (e5 by default).
* Time: jiyi reads "now" only through the `clock` it was built with; here a SimClock set to each exchange's
  simulated time. Every --maintain-every days, at 03:00 the next morning, `AsyncMemory.maintain()` runs over every
  user (decay, forgetting, review, consolidation, purge), timed. --maintain-every 0 never runs it: the baseline of
  what the store holds with no lifecycle.
* Month ends (every 30 days, and the last day): live memories (per layer and category), their content bytes
  (UTF-8), the SQLite file size (database + WAL), the rows in its messages and history tables, what was sent.
* Growth: live memories at a month's end over the previous month's, minus 1; the target applies from month 3
  (growth over month 2's end): the largest such month, the mean, and the compound monthly rate from month 2's end
  to the last whole month's. The same for content bytes and the SQLite file.
* Compression: unless --no-baseline, the same chats are simulated a second time into another file with no
  maintenance; the headline ratio is the memories live at the end with no lifecycle over those live with it (also
  content bytes and SQLite file size). Also reported: the memories the write path inserted (facts and episode
  summaries) over the live ones (this overstates: a memory the lifecycle removed is inserted anew when said again),
  facts alone, and the UTF-8 bytes of every message sent (user and assistant; also the user's alone) over the
  content bytes of the live memories.
* Recall, at the end: every planted fact the user said is asked for with `search(query, top_k=5)` in the user's
  language (one user after another; a search counts as a recall of what it returns, so a user's later questions see
  slightly refreshed memories). A hit: one of the 5 memories contains the value's words (and none of its exclusion
  words: "吃素" is not "不再吃素"). For a changed fact only the newest value is a hit, and "newest first" also
  requires that no memory holding only an older value ranks above it. A miss is "not stored" when no live memory of
  the user holds the value (with what deleted the last one that did: merged, forgotten...), else "not retrieved".
  The baseline is probed the same way: what the lifecycle costs in recall.
* Timings: each maintenance pass (all users), each add and each search, wall time per phase.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jiyi
from jiyi import AsyncMemory, Scope, build_embedder, build_store
from jiyi.embedders.base import Embedder
from jiyi.stores.base import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
import lifecycle_data as data
from locomo import git_info

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH_DIR / "results" / "lifecycle.json"
MONTH_DAYS = 30
MAINTAIN_HOUR = 3  # the nightly pass runs at 03:00 after each simulated day
PROBE_HOUR = 9  # the final questions are asked the morning after the last day
TOP_K = 5
MISSES_KEPT = 100


class SimClock:
    """The simulated present: jiyi reads the time only through the clock it is given. Never goes backwards."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, when: datetime) -> None:
        if when < self.now:
            raise ValueError(f"the simulated clock cannot go back from {self.now} to {when}")
        self.now = when


class StoreWatch:
    """Counts the memories the store inserts, by phase ("add": the write path, "maintain": the lifecycle) and
    category, and notes every deletion (user, content, reason), which stays known after the lifecycle purges the row.
    Wraps `insert` and `soft_delete` on this store instance only."""

    def __init__(self, store: MemoryStore) -> None:
        self.phase = "add"
        self.counts: Counter[tuple[str, str]] = Counter()
        self.deleted: dict[str, list[tuple[str, str]]] = defaultdict(list)  # user -> [(content, reason)]
        insert, soft_delete = store.insert, store.soft_delete

        def counted_insert(records: Any, vectors: Any, history: Any) -> None:
            for record in records:
                self.counts[(self.phase, record.category.value)] += 1
            return insert(records, vectors, history)

        def noted_soft_delete(memory_id: str, reason: str, history: Any, when: datetime, **options: Any) -> None:
            record = store.get(memory_id)
            result = soft_delete(memory_id, reason, history, when, **options)  # may refuse (a stale version)
            if record is not None:
                self.deleted[record.scope.user_id or ""].append((record.content, reason))
            return result

        store.insert = counted_insert  # type: ignore[method-assign]
        store.soft_delete = noted_soft_delete  # type: ignore[method-assign]

    def total(self, phase: str, *, episodes: bool = True) -> int:
        return sum(n for (p, category), n in self.counts.items() if p == phase and (episodes or category != "episode"))


# --- measuring the store ------------------------------------------------------------------------------------------


def file_bytes(db_path: Path) -> int:
    return sum(p.stat().st_size for p in (db_path, Path(f"{db_path}-wal")) if p.exists())


def table_rows(db_path: Path) -> dict[str, int | None]:
    """Rows in the SQLite file's tables, read through a separate read-only connection (None if unreadable)."""
    queries = {"messages": "SELECT COUNT(*) FROM messages", "history": "SELECT COUNT(*) FROM history",
               "memories_incl_deleted": "SELECT COUNT(*) FROM memories",
               "memories_soft_deleted": "SELECT COUNT(*) FROM memories WHERE deleted_at IS NOT NULL"}
    out: dict[str, int | None] = {}
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    except sqlite3.Error:
        return dict.fromkeys(queries)
    try:
        for name, sql in queries.items():
            try:
                out[name] = db.execute(sql).fetchone()[0]
            except sqlite3.Error:
                out[name] = None
    finally:
        db.close()
    return out


def live_memories(store: MemoryStore) -> dict[str, Any]:
    categories: Counter[str] = Counter()
    kinds: Counter[str] = Counter()  # what the write path saw in it: personal, plan, state, other...; see FactKind
    per_user: Counter[str] = Counter()
    content_bytes = 0
    for record in store.iter_records():
        categories[record.category.value] += 1
        kinds[next((t for t in record.tags if not t.startswith("slot:")), "untagged")] += 1
        per_user[record.scope.user_id or ""] += 1
        content_bytes += len(record.content.encode())
    counts = sorted(per_user.values())
    return {
        "live": sum(categories.values()),
        "layers": dict(sorted(store.count().items())),
        "categories": dict(sorted(categories.items())),
        "kinds": dict(kinds.most_common()),
        "content_bytes": content_bytes,
        "per_user": {"p50": counts[len(counts) // 2], "max": counts[-1]} if counts else {"p50": 0, "max": 0},
    }


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"n": len(ordered), "p50": at(0.5), "p99": at(0.99), "max": round(ordered[-1], 3),
            "mean": round(statistics.fmean(ordered), 3), "total": round(sum(ordered), 3)}


# --- the simulation -----------------------------------------------------------------------------------------------


def day_exchanges(histories: Sequence[data.History], day: int) -> list[tuple[datetime, data.Session, int]]:
    """Every exchange of the day, all users interleaved in time order (a user's own sessions never overlap)."""
    items = [(s.time_of(i), s, i) for s in data.day_plan(histories, day) for i in range(len(s.exchanges))]
    return sorted(items, key=lambda item: (item[0], item[1].user_id))


def numeric(stats: dict[str, Any]) -> dict[str, float]:
    return {k: v for k, v in stats.items() if isinstance(v, int | float) and not isinstance(v, bool)}


async def simulate(memory: AsyncMemory, clock: SimClock, histories: Sequence[data.History], days: int,
                   maintain_every: int, watch: StoreWatch, db_path: Path,
                   log: Callable[[str], None]) -> dict[str, Any]:
    months: list[dict[str, Any]] = []
    passes: list[dict[str, Any]] = []
    add_ms: list[float] = []
    events: Counter[str] = Counter()
    sent: Counter[str] = Counter()
    maintain_totals: Counter[str] = Counter()
    started = time.perf_counter()
    for day in range(days):
        for when, session, index in day_exchanges(histories, day):
            exchange = session.exchanges[index]
            clock.set(when)
            t0 = time.perf_counter()
            result = await memory.add([{"role": "user", "content": exchange.user},
                                       {"role": "assistant", "content": exchange.assistant}],
                                      user_id=session.user_id, timestamp=when.isoformat())
            add_ms.append((time.perf_counter() - t0) * 1000)
            events.update(r["event"] for r in result["results"])
            sent["exchanges"] += 1
            sent["user_bytes"] += len(exchange.user.encode())
            sent["assistant_bytes"] += len(exchange.assistant.encode())
        if maintain_every and (day + 1) % maintain_every == 0:
            clock.set(data.START + timedelta(days=day + 1, hours=MAINTAIN_HOUR))
            watch.phase = "maintain"
            t0 = time.perf_counter()
            stats = await memory.maintain()
            seconds = time.perf_counter() - t0
            watch.phase = "add"
            passes.append({"day": day, "seconds": round(seconds, 4), **numeric(stats)})
            maintain_totals.update({k: v for k, v in numeric(stats).items()
                                    if k not in ("compression_ratio", "retention_rate", "seconds")})
        if (day + 1) % MONTH_DAYS == 0 or day == days - 1:
            snapshot = {
                "month": len(months) + 1,
                "day": day + 1,
                **live_memories(memory.store),
                "sqlite_bytes": file_bytes(db_path),
                "rows": table_rows(db_path),
                "exchanges_sent": sent["exchanges"],
                "messages_sent": 2 * sent["exchanges"],
                "message_bytes_sent": sent["user_bytes"] + sent["assistant_bytes"],
                "write_path_memories": watch.total("add"),
                "lifecycle_inserts": watch.total("maintain"),
            }
            months.append(snapshot)
            log(f"day {day + 1}: {snapshot['live']} live memories {snapshot['categories']}, "
                f"{snapshot['write_path_memories']} written so far, {snapshot['sqlite_bytes'] / 1e6:.1f} MB; "
                f"{time.perf_counter() - started:.0f} s")
    return {"months": months, "passes": passes, "add_ms": add_ms, "events": dict(events), "sent": dict(sent),
            "maintain_totals": dict(maintain_totals), "seconds": time.perf_counter() - started}


def first_rank(texts: Sequence[str], accept: Callable[[str], bool]) -> int | None:
    return next((i for i, text in enumerate(texts) if accept(text)), None)


async def probe(memory: AsyncMemory, histories: Sequence[data.History], watch: StoreWatch) -> list[dict[str, Any]]:
    rows = []
    for history in histories:
        stored = [r.content for r in memory.store.iter_records(Scope(history.user_id))]
        deleted = watch.deleted.get(history.user_id, [])
        for p in history.probes:
            t0 = time.perf_counter()
            found = await memory.search(p.query, user_id=history.user_id, top_k=TOP_K)
            ms = (time.perf_counter() - t0) * 1000
            texts = [r["memory"] for r in found["results"]]

            def only_old(text: str, p: data.Probe = p) -> bool:
                return not p.value.matches(text) and any(v.matches(text) for v in p.old)

            rank, old_rank = first_rank(texts, p.value.matches), first_rank(texts, only_old)
            rows.append({
                "user_id": history.user_id, "lang": history.lang, "fact": p.fact, "changed": p.changed,
                "query": p.query, "expected": p.value.key, "old": [v.key for v in p.old],
                "times_said": p.times_said, "last_said_day": p.last_said_day,
                "hit": rank is not None, "rank": rank, "old_rank": old_rank,
                "newest_first": rank is not None and (old_rank is None or rank < old_rank),
                "stored": any(p.value.matches(t) for t in stored),
                "old_stored": any(only_old(t) for t in stored),
                "deleted_because": [reason for content, reason in deleted if p.value.matches(content)],
                "ms": round(ms, 3), "top": texts,
            })
    return rows


# --- summaries ----------------------------------------------------------------------------------------------------


def rate(rows: Sequence[dict[str, Any]], key: str = "hit") -> dict[str, Any]:
    n = len(rows)
    return {"n": n, "rate": round(sum(bool(r[key]) for r in rows) / n, 4) if n else None}


def loss(row: dict[str, Any]) -> str:
    """Why a planted fact has no live memory: what deleted the last memory that held it."""
    if not row["deleted_because"]:
        return "never stored"
    reason = row["deleted_because"][-1]
    for prefix, name in (("merged into", "merged"), ("summarized into", "summarized"), ("faded", "forgotten"),
                         ("episode older", "forgotten")):
        if reason.startswith(prefix):
            return name
    return reason


def recall_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def grouped(key: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            groups[key(row)].append(row)
        return {name: rate(group) for name, group in sorted(groups.items())}

    changed = [r for r in rows if r["changed"]]
    misses = [r for r in rows if not r["hit"]]
    return {
        "overall": rate(rows),
        "by_fact": grouped(lambda r: r["fact"]),
        "by_language": grouped(lambda r: r["lang"]),
        "stable_vs_changed": grouped(lambda r: "changed" if r["changed"] else "stable"),
        "said_once_vs_more": grouped(lambda r: "once" if r["times_said"] == 1 else "more"),
        "changed_newest_first": rate(changed, "newest_first"),
        "changed_old_value_still_stored": rate(changed, "old_stored"),
        "misses": {"total": len(misses), "not_stored": sum(not r["stored"] for r in misses),
                   "not_retrieved": sum(r["stored"] for r in misses),
                   "not_stored_because": dict(Counter(loss(r) for r in misses if not r["stored"]).most_common())},
        "search_ms": percentiles([r["ms"] for r in rows]),
    }


def growth(months: Sequence[dict[str, Any]], key: str) -> list[float | None]:
    """Percent growth of `key` over each month (None for the first month)."""
    out: list[float | None] = [None]
    for previous, current in itertools.pairwise(months):
        out.append(round((current[key] / previous[key] - 1) * 100, 2) if previous[key] else None)
    return out


def growth_summary(months: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("live", "content_bytes", "sqlite_bytes"):
        per_month = growth(months, key)
        # Only whole months count: a last partial month would be compared at another scale.
        after_2 = [g for m, g in zip(months, per_month, strict=True)
                   if m["month"] >= 3 and g is not None and m["day"] % MONTH_DAYS == 0]
        whole = [m for m in months if m["day"] % MONTH_DAYS == 0]
        # The trend from month 2's end to the last whole month's, as a steady monthly rate: a store that hovers
        # around a plateau has months of -10 % and +7 %, and a compound rate near 0.
        span = len(whole) - 2
        compound = (round(((whole[-1][key] / whole[1][key]) ** (1 / span) - 1) * 100, 2)
                    if span > 0 and whole[1][key] else None)
        out[key] = {"pct_per_month": per_month,
                    "after_month_2": {"max": max(after_2), "mean": round(statistics.fmean(after_2), 2),
                                      "compound": compound, "to_month": whole[-1]["month"]} if after_2 else None}
    return out


def compression_summary(end: dict[str, Any], watch: StoreWatch, sent: dict[str, int]) -> dict[str, Any]:
    live = end["live"]
    live_facts = live - end["categories"].get("episode", 0)
    written = watch.total("add")
    written_facts = watch.total("add", episodes=False)
    message_bytes = sent.get("user_bytes", 0) + sent.get("assistant_bytes", 0)

    def ratio(a: float, b: float) -> float | None:
        return round(a / b, 2) if b else None

    return {
        "memories": {"written_by_write_path": written, "live": live, "ratio": ratio(written, live)},
        "facts": {"written_by_write_path": written_facts, "live": live_facts,
                  "ratio": ratio(written_facts, live_facts)},
        "bytes": {"messages": message_bytes, "user_messages": sent.get("user_bytes", 0),
                  "live_content": end["content_bytes"], "ratio": ratio(message_bytes, end["content_bytes"]),
                  "user_ratio": ratio(sent.get("user_bytes", 0), end["content_bytes"])},
        "lifecycle_inserts": watch.total("maintain"),
    }


def month_table(months: Sequence[dict[str, Any]]) -> str:
    live_growth, byte_growth = growth(months, "live"), growth(months, "content_bytes")
    lines = ["| month | day | live | growth | fact | core | episode | short / long term | content KB | growth "
             "| SQLite MB | messages | written |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m, g, bg in zip(months, live_growth, byte_growth, strict=True):
        c, layers = m["categories"], m["layers"]
        lines.append(
            f"| {m['month']} | {m['day']} | {m['live']} | {_pct(g)} | {c.get('fact', 0)} | {c.get('core', 0)} "
            f"| {c.get('episode', 0)} | {layers.get('short_term', 0)} / {layers.get('long_term', 0)} "
            f"| {m['content_bytes'] / 1024:.0f} | {_pct(bg)} | {m['sqlite_bytes'] / 1e6:.1f} "
            f"| {m['messages_sent']} | {m['write_path_memories']} |")
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:+.1f} %"


def compression_lines(c: dict[str, Any]) -> list[str]:
    lines = []
    if "vs_no_lifecycle" in c:
        v = c["vs_no_lifecycle"]
        lines.append(f"compression vs no lifecycle: memories {v['live']} -> {c['memories']['live']} = "
                     f"{v['memories_ratio']}:1, content bytes {v['bytes_ratio']}:1, SQLite file {v['sqlite_ratio']}:1 "
                     "(target >= 3)")
    lines.append(f"memories the write path wrote / live: {c['memories']['written_by_write_path']} / "
                 f"{c['memories']['live']} = {c['memories']['ratio']}:1 (facts alone {c['facts']['ratio']}:1); "
                 f"message bytes / live content bytes {c['bytes']['ratio']}:1 "
                 f"(user messages alone {c['bytes']['user_ratio']}:1)")
    return lines


def report(result: dict[str, Any]) -> str:
    r, c, g = result["recall"], result["compression"], result["growth"]["live"]
    facts = ", ".join(f"{k} {100 * v['rate']:.1f}" for k, v in r["by_fact"].items() if v["rate"] is not None)
    passes = result["timings"]["maintain_s"]
    after = g["after_month_2"]
    lines = [
        f"### jiyi lifecycle: {result['settings']['users']} users x {result['days_simulated']} days, "
        f"embedder {result['settings']['embedder']}, maintain every {result['settings']['maintain_every']} day(s)",
        "",
        month_table(result["months"]),
        "",
        "growth of live memories after month 2: "
        + (f"max {after['max']:+.2f} %/month, mean {after['mean']:+.2f} %, month 2 to {after['to_month']} "
           f"compound {after['compound']:+.2f} %/month (target < 5)" if after else "n/a"),
        *compression_lines(c),
        f"recall@{TOP_K}: {100 * r['overall']['rate']:.1f} % of {r['overall']['n']} planted facts (target >= 95); "
        f"{facts}",
        f"changed facts: newest value first {100 * (r['changed_newest_first']['rate'] or 0):.1f} % "
        f"of {r['changed_newest_first']['n']}; misses {r['misses']['total']} "
        f"(not stored {r['misses']['not_stored']}: {r['misses']['not_stored_because']}; "
        f"not retrieved {r['misses']['not_retrieved']})",
    ]
    if "no_lifecycle" in result:
        base = result["no_lifecycle"]
        lines.append(f"no lifecycle (same chats): live memories per month {[m['live'] for m in base['months']]}, "
                     f"recall@{TOP_K} {100 * base['recall']['overall']['rate']:.1f} %, changed facts newest first "
                     f"{100 * (base['recall']['changed_newest_first']['rate'] or 0):.1f} %")
    if passes.get("n"):
        lines.append(f"maintenance pass (all users): p50 {passes['p50']} s, p99 {passes['p99']} s, "
                     f"total {passes['total']} s over {passes['n']} passes")
    lines.append(f"add p50 {result['timings']['add_ms']['p50']} ms, p99 {result['timings']['add_ms']['p99']} ms; "
                 f"search p50 {r['search_ms'].get('p50')} ms; wall {result['wall_seconds']} s")
    return "\n".join(lines)


def source_digest(package: Path) -> str:
    """sha256 over the library's .py files: which code was measured, also when its git tree is dirty."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


# --- command line -------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--days", type=int, default=180, help="length of each user's history")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, metavar="DAYS",
                        help="smoke run: simulate only the first DAYS days of the --days histories (truth as of then)")
    parser.add_argument("--maintain-every", type=int, default=1, metavar="DAYS",
                        help="run maintain() every DAYS simulated days; 0: never (the no-lifecycle baseline)")
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--store", type=Path, help="SQLite file to create and keep (default: a temporary one)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON result file")
    parser.add_argument("--no-baseline", dest="baseline", action="store_false",
                        help="skip the second simulation of the same chats with no maintenance (halves the time)")
    parser.add_argument("--details", action="store_true", help="also write every probe's result and every pass")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    if args.users < 1 or args.days < 1 or args.maintain_every < 0 or (args.limit is not None and args.limit < 1):
        parser.error("--users, --days and --limit must be positive, --maintain-every >= 0")
    if args.store is not None and args.store.exists():
        parser.error(f"{args.store} exists; give a new path (the simulation needs an empty store)")
    return args


async def run_store(histories: Sequence[data.History], days: int, embedder: Embedder, db_path: Path,
                    maintain_every: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Simulate every history into a new SQLite file, then probe the planted facts."""
    store = build_store(f"sqlite:///{db_path}")
    watch = StoreWatch(store)
    clock = SimClock(data.START)
    memory = AsyncMemory(store, embedder, clock=clock)
    try:
        sim = await simulate(memory, clock, histories, days, maintain_every, watch, db_path, log)
        clock.set(data.START + timedelta(days=days, hours=PROBE_HOUR))
        log(f"probing {sum(len(h.probes) for h in histories)} planted facts")
        t0 = time.perf_counter()
        rows = await probe(memory, histories, watch)
        probe_s = time.perf_counter() - t0
    finally:
        await memory.close()
    months, passes = sim["months"], sim["passes"]
    return {
        "months": months,
        "growth": growth_summary(months),
        "compression": compression_summary(months[-1], watch, sim["sent"]),
        "inserts": {f"{phase}:{category}": n for (phase, category), n in sorted(watch.counts.items())},
        "write_path_events": sim["events"],
        "maintenance": {"passes": len(passes), "totals": sim["maintain_totals"]},
        "recall": recall_summary(rows),
        "timings": {
            "simulation_s": round(sim["seconds"], 1),
            "probe_s": round(probe_s, 1),
            "add_ms": percentiles(sim["add_ms"]),
            "maintain_s": percentiles([p["seconds"] for p in passes]),
            "maintain_s_per_user": percentiles([p["seconds"] / max(p.get("users", 1), 1) for p in passes]),
        },
        "_rows": rows,
        "_passes": passes,
    }


def verdict(result: dict[str, Any]) -> dict[str, Any]:
    """Each target of the issue, the measured value, and whether it is met (None: not measured in this run)."""
    after = result["growth"]["live"]["after_month_2"]
    compression = result["compression"]
    ratio = compression.get("vs_no_lifecycle", {}).get("memories_ratio")
    recall = result["recall"]["overall"]["rate"]
    return {
        "growth_pct_per_month_after_month_2": {"value": after["max"] if after else None, "target": "< 5",
                                               "met": after["max"] < 5.0 if after else None},
        "compression_vs_no_lifecycle": {"value": ratio, "target": ">= 3", "met": ratio >= 3.0 if ratio else None},
        "recall_at_5": {"value": recall, "target": ">= 0.95", "met": recall >= 0.95 if recall is not None else None},
    }


def versus_baseline(result: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    """What the lifecycle saved: the no-lifecycle store at the end over the lifecycle's."""
    end, base = result["months"][-1], baseline["months"][-1]

    def ratio(key: str) -> float | None:
        return round(base[key] / end[key], 2) if end[key] else None

    return {"live": base["live"], "content_bytes": base["content_bytes"], "sqlite_bytes": base["sqlite_bytes"],
            "memories_ratio": ratio("live"), "bytes_ratio": ratio("content_bytes"),
            "sqlite_ratio": ratio("sqlite_bytes")}


async def run(args: argparse.Namespace, tmp: Path, log: Callable[[str], None]) -> dict[str, Any]:
    days = min(args.limit or args.days, args.days)
    histories = data.histories(args.users, args.days, args.seed, until=days)
    log(f"generated {args.users} users x {days} days (of {args.days}): {data.totals(histories)['exchanges']} "
        f"exchanges, {sum(len(h.probes) for h in histories)} planted facts")
    if args.maintain_every and not hasattr(AsyncMemory, "maintain"):
        raise SystemExit("this jiyi has no AsyncMemory.maintain(); run with --maintain-every 0 for the baseline")
    t0 = time.perf_counter()
    embedder = build_embedder(args.embedder)
    embedder.embed_documents(["warm-up 预热"])
    load_s = time.perf_counter() - t0
    db_path = args.store if args.store is not None else tmp / "lifecycle.db"
    result = await run_store(histories, days, embedder, db_path, args.maintain_every, log)
    result["timings"]["embedder_load_s"] = round(load_s, 2)
    if args.baseline and args.maintain_every:
        log("baseline: the same chats with no maintenance")
        baseline = await run_store(histories, days, embedder, tmp / "no-lifecycle.db", 0, log)
        del baseline["_rows"], baseline["_passes"]
        result["compression"]["vs_no_lifecycle"] = versus_baseline(result, baseline)
        result["no_lifecycle"] = baseline
    return {"days_simulated": days, "data": data.totals(histories), "verdict": verdict(result), **result}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    started = time.perf_counter()

    def log(message: str) -> None:
        if not args.quiet:
            print(f"[{time.perf_counter() - started:6.0f} s] {message}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="jiyi-lifecycle-") as tmp:
        result = asyncio.run(run(args, Path(tmp), log))
    rows, passes = result.pop("_rows"), result.pop("_passes")
    misses = [r for r in rows if not r["hit"] or not r["newest_first"]]
    output = {
        "benchmark": "lifecycle",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "git": git_info(BENCH_DIR),  # of the harness; "library" says which jiyi was measured
        "library": {"jiyi": jiyi.__version__, "path": str(Path(jiyi.__file__).parent),
                    "git": git_info(Path(jiyi.__file__).parent),
                    "source_sha256": source_digest(Path(jiyi.__file__).parent)},
        "settings": {"users": args.users, "days": args.days, "limit": args.limit, "seed": args.seed,
                     "maintain_every": args.maintain_every, "embedder": args.embedder, "top_k": TOP_K,
                     "baseline": bool(args.baseline and args.maintain_every),
                     "store": str(args.store) if args.store else None},
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                    "env": {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "JIYI_"))}},
        "method": __doc__.split("What is simulated, and how it is measured", 1)[1].split("\n", 1)[1].strip(),
        **result,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "misses": misses[:MISSES_KEPT],
    }
    if args.details:
        output["probes"] = rows
        output["passes"] = passes
    print(report(output), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(output, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    return output


if __name__ == "__main__":
    main()
