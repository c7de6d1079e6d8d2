"""What the lifecycle does to one memory at a given time: the companion seed's decay rules as a pure policy.

    memory               decay                                  forgotten
    system, core         never (nor importance >= 3.0)          never
    episode summary      x0.8 a week, after a week's grace      14 days after it happened or was last recalled
    plan, event, state   x0.7 a week, after a week's grace      once its importance falls below 0.3 (~5 weeks)
    other facts          x0.95 a week, after a week's grace     once its importance falls below 0.3

Layers: a memory made within a session (a run_id) starts in working memory, which is bounded (working_capacity per
session; beyond it the oldest move on) and does not fade; when the session has been quiet for session_idle_minutes its
working memories move to short-term. Stable facts move from short-term to long-term after a week; core and system
memories live there. Every move is a MOVE history row with its reason.

Decay is computed, not stored: a memory's effective importance is its stored importance times the decay for the time
since it was last written, updated or recalled (a recall restarts the clock, as a review does). Stored importance only
changes when something happens to the memory (BOOST, review). Between "forgotten" and "kept" sits the review band:
below 0.5 a memory is reviewed before it is forgotten; at 2.5 it is reviewed for promotion to core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from jiyi.core.forgetting import SECONDS_PER_DAY, last_reinforced
from jiyi.errors import ConfigError
from jiyi.records import Category, Layer, MemoryRecord, Scope

# The kinds of fact that describe the person rather than a moment (see core/facts.py FactKind).
STABLE_KINDS = frozenset({"personal", "relationship", "health", "preference", "persona", "habit"})
# Facts about a moment: a plan, something that happened, a passing mood. They matter for a few weeks; what lasts of
# them is the pattern they form (core/abstraction.py), not each one.
TRANSIENT_KINDS = frozenset({"plan", "event", "state"})


class Action(StrEnum):
    NONE = "none"
    FORGET = "forget"  # soft delete, with the reason
    REVIEW_FORGET = "review_forget"  # faded into the review band: keep or forget?
    REVIEW_PROMOTE = "review_promote"  # important enough to be core?
    MOVE_LONG_TERM = "move_long_term"  # a stable fact that has lasted: long-term layer
    MOVE_SHORT_TERM = "move_short_term"  # its session is over: out of working memory
    PURGE = "purge"  # soft-deleted long enough ago: remove for good


@dataclass(frozen=True, slots=True)
class LifecyclePolicy:
    grace_days: float = 7.0
    episode_decay: float = 0.8  # per week after the grace
    episode_max_days: float = 14.0
    # Messages kept as evidence (Category.MESSAGE) are forgotten when unused this long: sooner when a fact extracted
    # from them holds what they said and no search ever returned them, later when they are the only record of it.
    # Word-for-word memory fades within weeks, the gist (facts, episode summaries, habits) lasts: with longer
    # windows every day's chat would keep adding to the store for months (the 180-day simulation, bench/lifecycle.py).
    # A message a search returns starts its window again. The raw messages themselves are never deleted.
    message_max_days: float = 60.0
    covered_message_days: float = 14.0
    fact_decay: float = 0.95  # per week after the grace
    transient_decay: float = 0.7  # per week after the grace, for plans, events and states
    forget_below: float = 0.3
    review_below: float = 0.5
    promote_at: float = 2.5
    lasting_importance: float = 3.0
    long_term_after_days: float = 7.0  # a stable fact this old moves to the long-term layer
    purge_after_days: float = 30.0  # soft-deleted memories are removed for good after this
    keep_importance: float = 0.5  # what a memory kept on review is reset to (the seed's rule)
    session_idle_minutes: float = 30.0  # a session (run_id) this quiet is over: its working memory moves on
    working_capacity: int = 20  # working memories per session; beyond this the oldest move to short-term

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> LifecyclePolicy:
        """From config["lifecycle"]: any field above."""
        section = config.get("lifecycle") or {}
        unknown = set(section) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown lifecycle settings: {sorted(unknown)}")
        return cls(**section)

    def lasts(self, record: MemoryRecord) -> bool:
        return record.category in (Category.SYSTEM, Category.CORE) or record.importance >= self.lasting_importance

    def effective_importance(self, record: MemoryRecord, now: datetime) -> float:
        if self.lasts(record):
            return record.importance
        idle_days = _days(now - last_reinforced(record))
        weeks = max(idle_days - self.grace_days, 0.0) / 7.0
        # math.pow, not **: a float ** float is typed Any (a negative base gives a complex); decay is in (0, 1]
        return record.importance * math.pow(self.decay_per_week(record), weeks)

    def decay_per_week(self, record: MemoryRecord) -> float:
        if record.category is Category.EPISODE:
            return self.episode_decay
        return self.transient_decay if is_transient(record) else self.fact_decay

    def plan(self, record: MemoryRecord, now: datetime,
             session_active: datetime | None = None) -> tuple[Action, str]:
        """The one thing to do to this memory now, and why. `session_active`: when the memory's session (run_id)
        last saw anything written; by default, the memory's own last change."""
        if record.deleted_at is not None:
            if _days(now - record.deleted_at) >= self.purge_after_days:
                return Action.PURGE, f"deleted more than {self.purge_after_days:g} days ago"
            return Action.NONE, ""
        if record.layer is Layer.WORKING:
            idle = now - (session_active or last_reinforced(record))
            if idle >= timedelta(minutes=self.session_idle_minutes):
                return Action.MOVE_SHORT_TERM, f"session over: idle {self.session_idle_minutes:g} minutes"
            return Action.NONE, ""  # nothing fades while its conversation goes on
        if record.category is Category.MESSAGE:
            covered = "covered" in record.tags and not record.access_count
            limit = self.covered_message_days if covered else self.message_max_days
            if _days(now - last_reinforced(record)) >= limit:
                held = "; a fact holds what it said" if covered else ""
                return Action.FORGET, f"message unused for {limit:g} days{held}"
            return Action.NONE, ""
        if self.lasts(record):
            if record.layer is not Layer.LONG_TERM:
                return Action.MOVE_LONG_TERM, "a core memory belongs to the long-term layer"
            return Action.NONE, ""
        if record.category is Category.EPISODE:
            happened = max(record.event_time or record.created_at, last_reinforced(record))
            if _days(now - happened) >= self.episode_max_days:
                return Action.FORGET, f"episode older than {self.episode_max_days:g} days"
            return Action.NONE, ""
        importance = self.effective_importance(record, now)
        if importance < self.forget_below:
            return Action.FORGET, f"faded: importance {importance:.2f} < {self.forget_below:g}"
        if importance < self.review_below:
            return Action.REVIEW_FORGET, f"faded: importance {importance:.2f} < {self.review_below:g}"
        if record.importance >= self.promote_at and "promotion-reviewed" not in record.tags:
            return Action.REVIEW_PROMOTE, f"importance {record.importance:.2f} reached {self.promote_at:g}"
        if (record.layer is Layer.SHORT_TERM and is_stable(record)
                and _days(now - record.created_at) >= self.long_term_after_days):
            return Action.MOVE_LONG_TERM, f"a stable fact older than {self.long_term_after_days:g} days"
        return Action.NONE, ""


def entry_layer(scope: Scope, category: Category) -> Layer:
    """Where a new memory starts: core and system in long-term; within a session (a run_id), working memory; else
    short-term."""
    if category in (Category.CORE, Category.SYSTEM):
        return Layer.LONG_TERM
    return Layer.WORKING if scope.run_id else Layer.SHORT_TERM


def is_stable(record: MemoryRecord) -> bool:
    """A fact about the person (name, family, health, lasting likes), not a passing state or a plan."""
    return bool(STABLE_KINDS.intersection(record.tags)) or record.memory_type.value == "preference"


def is_transient(record: MemoryRecord) -> bool:
    """A fact about a moment (see TRANSIENT_KINDS); memories stored verbatim are not judged by kind."""
    return record.category is Category.FACT and bool(TRANSIENT_KINDS.intersection(record.tags))


def _days(delta: timedelta) -> float:
    return max(delta.total_seconds(), 0.0) / SECONDS_PER_DAY
