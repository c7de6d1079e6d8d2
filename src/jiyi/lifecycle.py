"""The lifecycle's maintenance pass: decay, forgetting, review, consolidation and purging, one user at a time.

A pass reads the user's memories once, applies core/lifecycle.py's policy to each (forget, review, move to the
long-term layer, purge what was deleted long ago), resolves conflicts (core/conflicts.py), consolidates clusters of
near-duplicates, abstracts repeated events into patterns (core/abstraction.py), and folds old episode summaries
into one. Every change is a history row with its reason. Passes are idempotent: running one twice in a row
changes nothing the second time. The offline reviewer decides by rule; see review_offline.

`AsyncMemory.maintain` runs one on demand (`jiyi maintain`, POST /maintain); jobs/maintenance.py's scheduler runs one
over every user on an interval inside the server. A pass is async, as the write path is: the model is asked on the
caller's event loop, and each step of blocking work (the store, the embedder, the numbers) goes to a worker thread in
one hop and comes back; nothing on a thread waits for the loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

import numpy as np

from jiyi.core import llm_lifecycle
from jiyi.core.abstraction import (
    PATTERN_TAG,
    is_activity,
    is_pattern,
    last_occurrence,
    level_of,
    level_tag,
    occurrence_days,
    pattern_of,
    repeated_activities,
)
from jiyi.core.conflicts import find_conflicts
from jiyi.core.consolidation import foldable, similar_clusters, union_provenance
from jiyi.core.episodes import summarize_episodes
from jiyi.core.importance import importance_score, on_seed_scale
from jiyi.core.lifecycle import Action, LifecyclePolicy, is_stable
from jiyi.core.llm_lifecycle import MAX_SEARCHES
from jiyi.core.retrieval import SearchRequest, hybrid_search
from jiyi.embedders.base import Embedder
from jiyi.embedders.scheduler import embedding_lane
from jiyi.errors import Conflict
from jiyi.leases import let_go, renewed
from jiyi.llms.base import LLM
from jiyi.pass_log import log_pass
from jiyi.records import (
    Category,
    Clock,
    Event,
    Layer,
    MemoryRecord,
    MemoryType,
    Scope,
    Source,
    history_row,
    revise,
    utcnow,
)
from jiyi.stores.base import MemoryStore, ScoredId
from jiyi.text import has_cjk

log = logging.getLogger("jiyi.maintenance")
T = TypeVar("T")
ABSTRACTED_TAG = "abstraction-reviewed"  # an L1 pattern the LLM has looked at for L2 / L3
MAX_ABSTRACTION_BASIS = 60  # the patterns and lasting facts shown to the model at most
# Seconds a pass holds a user, renewed while it runs (leases.py): a process that dies mid-pass frees it after this.
MAINTAIN_LEASE = 60.0
REVIEWS = (Action.REVIEW_FORGET, Action.REVIEW_PROMOTE)
EPISODES_KEPT = 20  # beyond this many episode summaries, the older ones are folded into one


@dataclass(slots=True)
class PassStats:
    processed: int = 0
    decayed: int = 0  # memories whose effective importance is below their stored one
    forgotten: int = 0
    reviewed: int = 0
    kept: int = 0
    promoted: int = 0
    moved: int = 0
    merged: int = 0  # memories folded into another by consolidation
    summarized: int = 0  # episode summaries folded into one
    abstracted: int = 0  # patterns written from repeated events (core/abstraction.py)
    conflicts: int = 0  # memories superseded by a conflicting newer or more certain one (core/conflicts.py)
    llm_calls: int = 0  # reviews, merges and abstractions asked of the LLM
    llm_failures: int = 0  # of which failed: the offline rules decided instead
    purged: int = 0
    skipped: int = 0  # users another process was maintaining at the time
    saved_bytes: int = 0
    live_before: int = 0
    live_after: int = 0
    seconds: float = 0.0

    def add(self, other: PassStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["seconds"] = round(self.seconds, 4)
        data["compression_ratio"] = round(self.live_before / self.live_after, 4) if self.live_after else None
        data["retention_rate"] = round(1 - self.forgotten / self.processed, 4) if self.processed else None
        return data


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the policy says to do to one memory, and (for a review) what the model answered."""

    record: MemoryRecord
    action: Action
    reason: str
    verdict: tuple[str, str] | None = None  # a review's (PROMOTE / KEEP / DELETE, why); None: the offline rules decide


@dataclass(slots=True)
class MaintenancePass:
    store: MemoryStore
    embedder: Embedder
    clock: Clock
    policy: LifecyclePolicy = field(default_factory=LifecyclePolicy)
    # With an LLM, reviews, merges and L2/L3 abstraction ask the model; each falls back to the offline rules when the
    # model fails.
    llm: LLM | None = None
    llm_timeout: float = 20.0
    holder: str = field(default_factory=lambda: uuid.uuid4().hex)  # this pass, as the holder of per-user locks

    async def run_each(self, users: Sequence[str]) -> PassStats:
        """A pass over each user's memories in turn, in the user's embedding lane, each logged for the console
        (pass_log); returns their sum."""
        total = PassStats()
        for user in users:
            with embedding_lane(f"user:{user}"):
                stats = await self.run(user)
            total.add(stats)
            await _io(log_pass, self.store, Scope(user), stats.as_dict(), self.clock())
        return total

    async def run(self, user_id: str) -> PassStats:
        """One user's pass, unless another process (another API worker's scheduler) is running one for this user
        right now: then nothing is done here (`skipped`), and the user is not processed twice at once."""
        lock = f"maintain:user_id={user_id}"
        if not await _io(self.store.try_lock, lock, self.holder, utcnow() + timedelta(seconds=MAINTAIN_LEASE)):
            return PassStats(skipped=1)

        async def renew() -> None:
            if not await _io(self.store.renew_lock, lock, self.holder, utcnow() + timedelta(seconds=MAINTAIN_LEASE)):
                log.warning("maintenance: the hold on %s ran out during the pass", user_id)

        try:
            async with renewed(renew, MAINTAIN_LEASE, lock):
                return await self._run(user_id)
        finally:  # also when cancelled: the user is not left held until the lease runs out
            await let_go(self.store.unlock, lock, self.holder)

    async def _run(self, user_id: str) -> PassStats:
        started = time.perf_counter()
        now = self.clock()
        scope = Scope(user_id)
        stats = PassStats()
        plans = await _io(self._plan, scope, now, stats)
        survivors = await self._apply_plans(plans, now, stats)
        superseded, groups = await _io(self._supersede_and_group, survivors, now, stats)
        survivors = [r for r in survivors if r.id not in superseded]
        written = [await self._merge_by_model([keeper, *others], stats) for keeper, others in groups]
        habits, kept = await _io(self._merge_and_abstract, survivors, groups, written, now, stats)
        found = await self._abstract_higher(habits, [r for r in kept if _lasting(r)], stats)
        stats.live_after = await _io(self._write_abstractions, found, habits, scope, now, stats)
        stats.seconds = time.perf_counter() - started
        return stats

    # --- the steps on a worker thread ---------------------------------------------------------------------------

    def _plan(self, scope: Scope, now: datetime, stats: PassStats) -> list[_Plan]:
        """Purge, read the user's memories, fold old episode summaries, and plan what to do to each of the rest."""
        stats.purged = self.store.purge(now - timedelta(days=self.policy.purge_after_days), scope)
        records = [r for r in self.store.iter_records(scope) if r.scope.user_id == scope.user_id]
        stats.live_before = len(records)
        # Episodes are summarized before the old ones are forgotten: what was talked about survives in one line.
        folded = self._fold_episodes([r for r in records if r.category is Category.EPISODE], now, stats)
        sessions = session_activity(records)
        plans = []
        for record in records:
            if record.id in folded:
                continue
            stats.processed += 1
            if self.policy.effective_importance(record, now) < record.importance:
                stats.decayed += 1
            plans.append(_Plan(record, *self.policy.plan(record, now, sessions.get(_session_key(record.scope)))))
        return plans

    def _apply_each(self, plans: list[_Plan], now: datetime, stats: PassStats) -> list[MemoryRecord | None]:
        return [self._apply(plan, now, stats) for plan in plans]

    def _supersede_and_group(self, survivors: list[MemoryRecord], now: datetime,
                             stats: PassStats) -> tuple[set[str], list[tuple[MemoryRecord, list[MemoryRecord]]]]:
        """Resolve conflicts; the groups of near-duplicates among the rest that consolidation would fold."""
        superseded = self._resolve_conflicts(survivors, now, stats)
        return superseded, self._similar_groups([r for r in survivors if r.id not in superseded and _consolidable(r)])

    def _merge_and_abstract(self, survivors: list[MemoryRecord], groups: list[tuple[MemoryRecord, list[MemoryRecord]]],
                            written: list[str | None], now: datetime,
                            stats: PassStats) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
        merged = self._consolidate(groups, written, now, stats)
        kept = [r for r in survivors if r.id not in merged]
        return self._abstract(kept, now, stats), kept

    # --- one memory ---------------------------------------------------------------------------------------------

    async def _apply_plans(self, plans: list[_Plan], now: datetime, stats: PassStats) -> list[MemoryRecord]:
        """Carry out the plans in order; the memories as they are afterwards (those still there). Offline, in one
        hop. With a model, each review is asked on the loop, after the changes planned before it are written: the
        reviewer's searches see the pass's earlier changes."""
        after: list[MemoryRecord | None] = []
        pending: list[_Plan] = []
        for plan in plans:
            if self.llm is not None and plan.action in REVIEWS:
                if pending:
                    after += await _io(self._apply_each, pending, now, stats)
                    pending = []
                promotion = plan.action is Action.REVIEW_PROMOTE
                plan = replace(plan, verdict=await self._review_by_model(plan.record, stats, promotion=promotion))
            pending.append(plan)
        if pending:
            after += await _io(self._apply_each, pending, now, stats)
        # As stored now: later steps must not write back what was read before.
        return [record for record in after if record is not None]

    def _apply(self, plan: _Plan, now: datetime, stats: PassStats) -> MemoryRecord | None:
        """Apply the policy's action; the memory as it is afterwards, or None if it is gone (or changed meanwhile by
        someone else: it is left for the next pass)."""
        record, action, reason = plan.record, plan.action, plan.reason
        if action is Action.FORGET:
            self._forget(record, now, reason, stats)
            return None
        if action is Action.REVIEW_FORGET:
            stats.reviewed += 1
            verdict, why = plan.verdict or _review_offline(record, promotion=False)
            keep = verdict == "KEEP"
            if not keep:
                self._forget(record, now, f"{reason}; reviewed: {why}", stats)
                return None
            stats.kept += 1
            # The seed's rule: a memory kept on review starts again from importance 0.5, and the review counts as a
            # recall (the decay clock restarts).
            kept = replace(record, importance=max(record.importance, self.policy.keep_importance),
                           last_accessed_at=now)
            return self._change(kept, Event.KEEP, now, f"{reason}; reviewed: {why}")
        elif action is Action.REVIEW_PROMOTE:
            stats.reviewed += 1
            verdict, why = plan.verdict or _review_offline(record, promotion=True)
            if verdict == "PROMOTE":
                stats.promoted += 1
                return self._change(replace(record, category=Category.CORE, layer=Layer.LONG_TERM), Event.PROMOTE,
                                    now, f"{reason}; reviewed: {why}")
            if verdict == "DELETE":
                self._forget(record, now, f"{reason}; reviewed: {why}", stats)
                return None
            return self._change(replace(record, tags=[*record.tags, "promotion-reviewed"]), Event.KEEP, now,
                                f"{reason}; reviewed, not promoted: {why}")
        if action is Action.MOVE_LONG_TERM:
            stats.moved += 1
            return self._change(replace(record, layer=Layer.LONG_TERM), Event.MOVE, now, reason)
        if action is Action.MOVE_SHORT_TERM:
            stats.moved += 1
            return self._change(replace(record, layer=Layer.SHORT_TERM), Event.MOVE, now, reason)
        return record

    def _change(self, record: MemoryRecord, event: Event, now: datetime, reason: str) -> MemoryRecord | None:
        """Write one of the lifecycle's changes; the record as stored, or None when the memory changed since this
        pass read it (a turn's UPDATE, a PUT): it is left for the next pass rather than overwritten with old text."""
        # Not a new version of the memory: updated_at stays, or the bookkeeping would count as a recall.
        try:
            self.store.update(record, None, history_row(event, record, now, reason=reason),
                              expected_version=record.version)
        except Conflict:
            log.info("maintenance: %s changed during the pass; %s left for the next one", record.id, event.value)
            return None
        return record

    # --- the model's judgement, when there is one ---------------------------------------------------------------

    async def _ask(self, call: Coroutine[Any, Any, T], stats: PassStats) -> T | None:
        """Await one LLM call; None (and logged) when it fails or there is no model."""
        if self.llm is None:
            call.close()
            return None
        stats.llm_calls += 1
        try:
            return await asyncio.wait_for(call, self.llm_timeout * (MAX_SEARCHES + 2))
        except Exception as exc:  # LLMError, a timeout: the offline rules stand in
            stats.llm_failures += 1
            log.warning("lifecycle LLM call failed, using the offline rules: %s", exc)
            return None

    async def _review_by_model(self, record: MemoryRecord, stats: PassStats, *,
                               promotion: bool) -> tuple[str, str] | None:
        """The model's PROMOTE / KEEP / DELETE (promotion review) or KEEP / DELETE (forgetting review), and why; None
        when it failed (the offline rules decide)."""
        if self.llm is None:
            return None
        verdict = await self._ask(llm_lifecycle.review(self.llm, record, self._related(record), promotion=promotion,
                                                       timeout=self.llm_timeout), stats)
        if verdict is None:
            return None
        looked = f" (looked up: {'; '.join(verdict.searches)})" if verdict.searches else ""
        return verdict.action, f"{verdict.reason or verdict.action.lower()}{looked} [LLM]"

    async def _merge_by_model(self, members: list[MemoryRecord], stats: PassStats) -> str | None:
        """One memory the model writes for a group of near-duplicates; None without a model, or when it failed."""
        if self.llm is None:
            return None
        return await self._ask(llm_lifecycle.merge(self.llm, [r.content for r in members], timeout=self.llm_timeout),
                               stats)

    def _related(self, record: MemoryRecord) -> llm_lifecycle.Search:
        async def search(query: str) -> list[str]:
            request = SearchRequest(query, Scope(record.scope.user_id), top_k=6, rules=False, now=self.clock())
            found = await _io(hybrid_search, self.store, self.embedder, request)
            return [hit.record.content for hit in found.hits if hit.record.id != record.id][:5]
        return search

    def _forget(self, record: MemoryRecord, now: datetime, reason: str, stats: PassStats) -> None:
        try:
            self.store.soft_delete(record.id, reason, history_row(Event.DELETE, record, now, reason=reason), now,
                                   expected_version=record.version)
        except Conflict:
            log.info("maintenance: %s changed during the pass; not forgotten now", record.id)
            return
        stats.forgotten += 1
        stats.saved_bytes += len(record.content.encode())

    # --- several memories ---------------------------------------------------------------------------------------

    def _fold_episodes(self, episodes: list[MemoryRecord], now: datetime, stats: PassStats) -> set[str]:
        """More than EPISODES_KEPT summaries: the older ones become one long-term memory. Returns the folded ids."""
        if len(episodes) <= EPISODES_KEPT:
            return set()
        episodes.sort(key=lambda r: r.event_time or r.created_at)
        old = episodes[: len(episodes) - EPISODES_KEPT // 2]
        start = old[0].event_time or old[0].created_at
        end = old[-1].event_time or old[-1].created_at
        summary = summarize_episodes([r.content for r in old], start, end)
        folded = MemoryRecord(
            content=summary, scope=old[0].scope, memory_type=MemoryType.EPISODIC, layer=Layer.LONG_TERM,
            category=Category.FACT, importance=1.0, source=Source.BACKGROUND, tags=["episode-summary"],
            provenance=union_provenance(old), compression_source_ids=[r.id for r in old], created_at=now,
            event_time=start,
        )
        vector = self.embedder.embed_documents([summary])
        reason = f"{len(old)} episode summaries folded into one"
        self.store.insert([folded], vector, [history_row(Event.ADD, folded, now, role="system", reason=reason)])
        for record in old:
            self._forget(record, now, f"summarized into {folded.id}", stats)
            stats.forgotten -= 1  # folded, not forgotten
            stats.summarized += 1
        return {r.id for r in old}

    def _resolve_conflicts(self, records: list[MemoryRecord], now: datetime, stats: PassStats) -> set[str]:
        gone = set()
        for resolution in find_conflicts(records):
            if resolution.loser.id in gone:
                continue
            self._forget(resolution.loser, now, f"superseded: {resolution.reason}", stats)
            stats.forgotten -= 1
            stats.conflicts += 1
            gone.add(resolution.loser.id)
        return gone

    def _similar_groups(self, candidates: list[MemoryRecord]) -> list[tuple[MemoryRecord, list[MemoryRecord]]]:
        """The groups consolidation folds: each a keeper and the near-duplicates folded into it."""
        vectors = self.store.get_vectors([r.id for r in candidates])
        candidates = [r for r in candidates if r.id in vectors]
        if len(candidates) < 3:
            return []
        matrix = np.stack([vectors[r.id] for r in candidates])
        cjk = [has_cjk(r.content) for r in candidates]
        clusters = similar_clusters(matrix, self.embedder.calibration, cjk)
        return [group for cluster in clusters for group in foldable([candidates[i] for i in cluster])]

    def _consolidate(self, groups: list[tuple[MemoryRecord, list[MemoryRecord]]], written_by_model: list[str | None],
                     now: datetime, stats: PassStats) -> set[str]:
        """Fold each group into its keeper, rewritten as the model wrote it (`written_by_model`, one per group, None
        when there is no model or it failed). Returns the ids of the memories merged into others."""
        gone: set[str] = set()
        for (keeper, others), written in zip(groups, written_by_model, strict=True):
            members = [keeper, *others]
            if written and written != keeper.content:
                vector = self.embedder.embed_documents([written])
                rewritten, history = revise(keeper, Event.UPDATE, now, content=written,
                                            updated_at=keeper.updated_at or keeper.created_at,
                                            reason=f"{len(members)} similar memories merged [LLM]")
                try:
                    self.store.update(rewritten, vector[0], history, expected_version=keeper.version)
                except Conflict:  # the user changed it while the model wrote: theirs stands, the cluster waits
                    log.info("maintenance: %s changed during the pass; its merge left for the next one", keeper.id)
                    continue
                keeper = rewritten
            merged = replace(
                keeper, layer=Layer.LONG_TERM, importance=max(r.importance for r in members),
                access_count=sum(r.access_count for r in members), provenance=union_provenance([keeper, *others]),
                compression_source_ids=list(dict.fromkeys(
                    [*keeper.compression_source_ids, *(r.id for r in others)])),
                created_at=min(r.created_at for r in members),
                tags=list(dict.fromkeys(t for r in members for t in r.tags)),
                categories=shared_categories([keeper, *others]),
            )
            if self._change(merged, Event.MERGE, now, f"consolidated {len(members)} similar memories") is None:
                continue  # not merged, so the others are not forgotten as merged into it
            for record in others:
                self._forget(record, now, f"merged into {keeper.id}", stats)
                stats.forgotten -= 1
                stats.merged += 1
                gone.add(record.id)
        return gone


    def _abstract(self, records: list[MemoryRecord], now: datetime, stats: PassStats) -> list[MemoryRecord]:
        """Repeated events become an L1 pattern; a later occurrence joins its pattern. Occurrences older than the
        grace period that a pattern holds are folded into it: the pattern says what they said, and when. Returns the
        user's L1 patterns as they are now."""
        patterns = [r for r in records if is_pattern(r) and level_of(r) == 1]
        current = {p.id: p for p in patterns}
        merged_into = {source: p for p in patterns for source in p.compression_source_ids}
        activities = [r for r in records if is_activity(r)]
        joined: dict[str, list[MemoryRecord]] = {}
        loose = []
        for record in activities:
            if record.id in merged_into:
                continue
            pattern = pattern_of(record, patterns)
            if pattern is None:
                loose.append(record)
            else:
                joined.setdefault(pattern.id, []).append(record)
        for pattern in patterns:
            if pattern.id in joined:
                pattern = current[pattern.id] = self._reinforce(pattern, joined[pattern.id], now)
                merged_into.update({r.id: pattern for r in joined[pattern.id]})
        for group in repeated_activities(loose):
            pattern = self._new_pattern(group.members, group.sentence, now, stats)
            current[pattern.id] = pattern
            merged_into.update({r.id: pattern for r in group.members})
        grace = timedelta(days=self.policy.grace_days)
        due: dict[str, list[MemoryRecord]] = {}
        for record in activities:
            pattern = merged_into.get(record.id)
            if pattern is not None and now - (record.event_time or record.created_at) >= grace:
                due.setdefault(pattern.id, []).append(record)
        for pattern_id, folded in due.items():
            pattern = merged_into[folded[0].id]
            known = {ref.message_id for ref in pattern.provenance}
            said_since = [r for r in folded if any(ref.message_id not in known for ref in r.provenance)]
            if said_since:  # said again after the pattern was written: the pattern keeps those sources
                current[pattern_id] = self._reinforce(current[pattern_id], said_since, now)
            for record in folded:
                self._forget(record, now, f"abstracted into pattern {pattern_id}", stats)
                stats.forgotten -= 1
                stats.merged += 1
        return list(current.values())

    async def _abstract_higher(self, habits: list[MemoryRecord], lasting: list[MemoryRecord],
                               stats: PassStats) -> list[llm_lifecycle.Abstraction] | None:
        """L2 / L3 from the LLM, when there is an L1 pattern (`habits`) it has not seen yet. The model sees the habits
        and the user's lasting facts and higher patterns (`lasting`); None when there is nothing new to show it, or
        it failed (then it is asked again on the next pass)."""
        if self.llm is None or all(ABSTRACTED_TAG in r.tags for r in habits):
            return None
        basis = [*lasting, *habits]
        return await self._ask(llm_lifecycle.abstract(self.llm, basis[-MAX_ABSTRACTION_BASIS:], level_of,
                                                      timeout=self.llm_timeout), stats)

    def _write_abstractions(self, found: list[llm_lifecycle.Abstraction] | None, habits: list[MemoryRecord],
                            scope: Scope, now: datetime, stats: PassStats) -> int:
        """Store what the model abstracted, each tagged with its level and its sources' ids, and mark the habits it
        saw. Returns the user's live memories after the pass."""
        for item in found or ():
            agents = {r.scope.agent_id for r in item.sources}
            record = MemoryRecord(
                content=item.text, scope=Scope(scope.user_id, agents.pop() if len(agents) == 1 else None),
                memory_type=MemoryType.SEMANTIC, layer=Layer.LONG_TERM, category=Category.FACT,
                importance=max(r.importance for r in item.sources), source=Source.BACKGROUND,
                tags=[PATTERN_TAG, level_tag(item.level), "habit", ABSTRACTED_TAG],
                provenance=union_provenance(item.sources)[-200:], compression_source_ids=[r.id for r in item.sources],
                created_at=now, metadata={"abstraction": {"level": item.level}},
                categories=shared_categories(item.sources),
            )
            reason = f"L{item.level} abstraction of {len(item.sources)} memories [LLM]"
            self.store.insert([record], self.embedder.embed_documents([item.text]),
                              [history_row(Event.ADD, record, now, role="system", reason=reason)])
            stats.abstracted += 1
        seen = [r for r in habits if ABSTRACTED_TAG not in r.tags] if found is not None else []
        for pattern in seen:  # bookkeeping only: the model has seen it
            try:
                self.store.update(replace(pattern, tags=[*pattern.tags, ABSTRACTED_TAG]), None, None,
                                  expected_version=pattern.version)
            except Conflict:  # changed since this pass read it: the next pass shows it to the model again
                log.info("maintenance: %s changed during the pass; left unmarked", pattern.id)
        return sum(self.store.count(scope).values())

    def _pair_similarity(self, text: str, hits: list[ScoredId]) -> float:
        """How alike `text` and the first hit's memory are, on the embedder's range for two stored texts."""
        nearest = self.store.get(hits[0].memory_id) if hits else None
        if nearest is None:
            return 0.0
        return self.embedder.calibration.for_pair(text, nearest.content).relevance(hits[0].score)

    def _new_pattern(self, members: list[MemoryRecord], sentence: str, now: datetime,
                     stats: PassStats) -> MemoryRecord:
        agents = {r.scope.agent_id for r in members}
        scope = Scope(members[0].scope.user_id, agents.pop() if len(agents) == 1 else None)
        vector = self.embedder.embed_documents([sentence])
        # Its members are the nearest memories by construction; its scarcity is against the nearest other one.
        member_ids = {r.id for r in members}
        nearest = [h for h in self.store.vector_search(scope, vector[0], len(member_ids) + 1)
                   if h.memory_id not in member_ids][:1]
        score = importance_score(kinds=["pattern"], text=sentence, confidence=0.9,
                                 max_similarity=self._pair_similarity(sentence, nearest))
        last = last_occurrence(members)
        pattern = MemoryRecord(
            content=sentence, scope=scope, memory_type=MemoryType.SEMANTIC, layer=Layer.LONG_TERM,
            category=Category.FACT, importance=on_seed_scale(score), source=Source.BACKGROUND,
            tags=[PATTERN_TAG, level_tag(1), "habit"], provenance=union_provenance(members),
            compression_source_ids=[r.id for r in members], created_at=now, updated_at=last,
            event_time=min(r.event_time or r.created_at for r in members), categories=shared_categories(members),
            metadata={"abstraction": {"level": 1, "days": occurrence_days(members), "last_seen": last.isoformat()}},
        )
        reason = f"L1 pattern from {len(members)} memories of it on {occurrence_days(members)} days"
        self.store.insert([pattern], vector, [history_row(Event.ADD, pattern, now, role="system", reason=reason)])
        stats.abstracted += 1
        return pattern

    def _reinforce(self, pattern: MemoryRecord, occurrences: list[MemoryRecord], now: datetime) -> MemoryRecord:
        last = last_occurrence(occurrences)
        info = dict(pattern.metadata.get("abstraction") or {})
        info.update(days=occurrence_days([pattern, *occurrences]), last_seen=last.isoformat())
        # A new occurrence renews the pattern: its decay restarts from the last time it happened.
        reinforced = replace(
            pattern, compression_source_ids=list(dict.fromkeys(
                [*pattern.compression_source_ids, *(r.id for r in occurrences)])),
            provenance=union_provenance([pattern, *occurrences])[-200:],
            updated_at=max(pattern.updated_at or last, last),
            metadata={**pattern.metadata, "abstraction": info})
        self._change(reinforced, Event.MERGE, now, f"{len(occurrences)} more memories of the pattern")
        return reinforced


async def _io(fn: Callable[..., T], *args: Any) -> T:
    """Blocking work on a worker thread, in the caller's context (the embedding lane travels with it)."""
    return await asyncio.to_thread(fn, *args)


def _review_offline(record: MemoryRecord, *, promotion: bool) -> tuple[str, str]:
    """review_offline's answer as a verdict: PROMOTE / KEEP (promotion review) or KEEP / DELETE, and why."""
    keep, why = review_offline(record, forgetting=not promotion)
    if promotion:
        return ("PROMOTE" if keep else "KEEP"), why
    return ("KEEP" if keep else "DELETE"), why


def shared_categories(members: Sequence[MemoryRecord], most: int = 2) -> list[str]:
    """mem0's categories of a memory made of others (a merge, a pattern): theirs, the most common first (the first
    member's first among equals)."""
    counts = Counter(c for r in members for c in r.categories)
    return [name for name, _ in counts.most_common(most)]


def _session_key(scope: Scope) -> tuple[str | None, str | None, str | None]:
    return scope.user_id, scope.agent_id, scope.run_id


def session_activity(records: list[MemoryRecord]) -> dict[tuple[str | None, str | None, str | None], datetime]:
    """When each session (user, agent, run) last had a memory written or changed."""
    active: dict[tuple[str | None, str | None, str | None], datetime] = {}
    for record in records:
        if record.scope.run_id:
            key = _session_key(record.scope)
            when = max(record.created_at, record.updated_at or record.created_at)
            active[key] = max(active.get(key, when), when)
    return active


def spill_working_memory(store: MemoryStore, scope: Scope, policy: LifecyclePolicy, now: datetime) -> int:
    """Keep a session's working memory within policy.working_capacity: the oldest move to short-term, each with a MOVE
    history row. Returns how many moved."""
    if not scope.run_id or store.count(scope).get(Layer.WORKING.value, 0) <= policy.working_capacity:
        return 0
    working = sorted((r for r in store.iter_records(scope) if r.layer is Layer.WORKING and r.scope == scope),
                     key=lambda r: (r.created_at, r.id))
    overflow = working[: max(len(working) - policy.working_capacity, 0)]
    moved = 0
    for record in overflow:
        reason = f"working memory full: {policy.working_capacity} per session"
        try:
            spilled, history = revise(record, Event.MOVE, now, reason=reason, layer=Layer.SHORT_TERM)
            store.update(spilled, None, history, expected_version=record.version)
        except Conflict:  # changed (or forgotten) since it was read: the next spill looks at it again
            continue
        moved += 1
    return moved


def _lasting(record: MemoryRecord) -> bool:
    """What higher abstraction builds on besides the L1 habits: L2 / L3 patterns and the user's lasting facts."""
    if is_pattern(record):
        return level_of(record) > 1
    return is_stable(record) and record.role != "assistant"


def _consolidable(record: MemoryRecord) -> bool:
    return record.category is Category.FACT and "episode-summary" not in record.tags


def review_offline(record: MemoryRecord, *, forgetting: bool) -> tuple[bool, str]:
    """The offline reviewer. Forgetting review: keep a stable fact about the person (name, family, health, lasting
    likes) or one recalled three times or more. Promotion review: promote a stable fact, not a passing state or
    plan. Returns (keep / promote, why)."""
    stable = is_stable(record)
    if forgetting:
        if stable:
            return True, "a stable fact about the person"
        if record.access_count >= 3:
            return True, f"recalled {record.access_count} times"
        return False, "a passing detail, rarely recalled"
    if stable:
        return True, "a stable fact about the person"
    return False, "not a lasting fact (a state, plan or event)"
