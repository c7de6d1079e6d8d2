"""The store contract, by role. MemoryIndex (memories, vectors, text index, history), MessageLog (the evidence
layer), TurnQueue (the write path's queue) and Coordination (locks, idempotency keys, state) make a MemoryStore;
KeyStore, SessionStore and ConsoleStore here, EntityStore (stores/entities.py) and WebhookStore (webhooks/store.py)
are roles a backend may add. A backend declares the ports it implements as its bases and passes the contract tests
of each (tests/stores/).

Stores are synchronous and thread-safe; the async Memory facade runs them in worker threads. A change to a memory
and the history row that records it are written in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

import numpy as np

from jiyi.filters import Node
from jiyi.keys import ApiKey
from jiyi.records import (
    HistoryEvent,
    MemoryRecord,
    Scope,
    StoredMessage,
    TurnRecord,
    TurnStatus,
)
from jiyi.webhooks.store import WebhookStore as WebhookStore  # the port lives with the webhooks that use it


@dataclass(frozen=True, slots=True)
class Entity:
    """One user, agent or run that has live memories (mem0's "entities"), with how many and since when."""

    kind: str  # "user" | "agent" | "run"
    name: str
    memories: int
    first_created: datetime
    last_updated: datetime


@dataclass(frozen=True, slots=True)
class ScoredId:
    memory_id: str
    score: float


@runtime_checkable
class MemoryIndex(Protocol):
    """The memories: each record with its vector and its text index, and the history rows written with its
    changes (one transaction each). What the read and write paths search and change."""
    url: str

    def bind_embedding(self, model_id: str, dims: int) -> None:
        """Record the embedding model on first use; raise EmbeddingMismatch if the store holds another one's vectors."""
        ...

    def embedding_binding(self) -> tuple[str, int] | None:
        """(model id, dimension) the store's vectors were made with, or None while it holds none."""
        ...

    def insert(self, records: Sequence[MemoryRecord], vectors: np.ndarray, history: Sequence[HistoryEvent]) -> None:
        ...

    def update(self, record: MemoryRecord, vector: np.ndarray | None, history: HistoryEvent | None, *,
               expected_version: int | None = None) -> None:
        """Replace a live record's fields (and its vector when given); the stored version moves on by one and
        `record.version` is set to it. With `expected_version`, only if the memory is still at that version (checked
        in the same transaction), else Conflict and nothing is written."""
        ...

    def soft_delete(self, memory_id: str, reason: str, history: HistoryEvent, when: datetime, *,
                    expected_version: int | None = None) -> None:
        """Mark a live record deleted (history row `history`); `expected_version` as in update()."""
        ...

    def restore(self, memory_id: str, history: HistoryEvent, when: datetime, *,
                expected_version: int | None = None) -> MemoryRecord:
        """Take back a soft delete not yet purged: the memory is live and searchable again (text index, vectors),
        `updated_at` is `when`, the version moves on by one, and `history` (a RESTORE row) is written in the same
        transaction; returns the record as stored. InvalidInput when the memory is not deleted or no longer exists;
        `expected_version` as in update()."""
        ...

    def purge(self, deleted_before: datetime, scope: Scope | None = None) -> int:
        """Remove memories soft-deleted before `deleted_before` for good; their history rows stay, without the text.
        Returns how many."""
        ...

    def get(self, memory_id: str, include_deleted: bool = False) -> MemoryRecord | None:
        ...

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """Live records by id; unknown or deleted ids are left out."""
        ...

    def known_ids(self, memory_ids: Sequence[str]) -> set[str]:
        """Which of these ids exist, deleted or not."""
        ...

    def get_vectors(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these live memories (consolidation compares them); unknown ids are left out."""
        ...

    def list_records(
        self,
        scope: Scope,
        where: Node | None = None,
        limit: int | None = None,
        include_expired: bool = False,
        offset: int = 0,
        every_scope: bool = False,
    ) -> list[MemoryRecord]:
        """Live records in scope, newest first; `offset` skips that many (a page). An empty scope is refused unless
        `every_scope` says the caller (an admin listing) means every user's memories."""
        ...

    def count_records(self, scope: Scope, where: Node | None = None, include_expired: bool = False,
                      every_scope: bool = False) -> int:
        """How many records list_records would give without a limit."""
        ...

    def iter_records(self, scope: Scope | None = None, include_deleted: bool = False) -> Iterator[MemoryRecord]:
        """Every record (in scope, if given), oldest first, read in pages."""
        ...

    def count(self, scope: Scope | None = None) -> dict[str, int]:
        """Live memories per layer."""
        ...

    def entities(self, user_id: str | None = None) -> list[Entity]:
        """The users, agents and runs with live memories (evidence messages not counted), or only those in one user's
        memories."""
        ...

    def user_ids(self) -> list[str]:
        """Every user_id that has live memories (the maintenance scheduler's work list)."""
        ...

    def vector_search(
        self,
        scope: Scope,
        query: np.ndarray,
        limit: int,
        where: Node | None = None,
        include_expired: bool = False,
    ) -> list[ScoredId]:
        """Exact cosine search within the scope, best first."""
        ...

    def keyword_search(
        self,
        scope: Scope,
        terms: Sequence[str],
        limit: int,
        where: Node | None = None,
        include_expired: bool = False,
    ) -> list[ScoredId]:
        """BM25 over segmented text (see jiyi.text), best first; a higher score is better."""
        ...

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many indexed memories contain each term (as jiyi.text analyses it), and how many there are: store-wide,
        not per scope — the point is to tell common words from rare ones, cheaply."""
        ...

    def record_access(self, memory_ids: Sequence[str], when: datetime) -> None:
        """Each listed id's access_count + 1 (an id listed twice: + 2), last_accessed_at = when; one transaction."""
        ...

    def add_history(self, events: Sequence[HistoryEvent]) -> None:
        """Append history rows as they are (imports); normal changes pass their row to insert/update/delete."""
        ...

    def history(self, memory_id: str) -> list[HistoryEvent]:
        """Oldest first."""
        ...

    def purged_history(self) -> Iterator[HistoryEvent]:
        """The history rows of memories purged for good (their audit trail: events, times, reasons, no text), in the
        order they were written, read in pages: what a full export keeps of them."""
        ...


@runtime_checkable
class MessageLog(Protocol):
    """The messages of each scope as they were said: the evidence layer (a turn's messages are kept before
    anything is extracted from them)."""

    def add_messages(self, messages: Sequence[StoredMessage]) -> None:
        ...

    def list_messages(self, scope: Scope, limit: int | None = None, after: str | None = None) -> list[StoredMessage]:
        """Oldest first; the last `limit` ones; only those stored after the message with id `after`, if given."""
        ...

    def get_messages(self, message_ids: Sequence[str]) -> list[StoredMessage]:
        """These messages, in the order they were stored; unknown ids are left out."""
        ...

    def previous_messages(self, message_ids: Sequence[str]) -> dict[str, str]:
        """For each of these messages, the id of the message stored just before it in the same scope (the same
        user_id, agent_id and run_id); the first message of a scope and unknown ids are left out. The read path asks
        it for a few dozen candidates per search: one indexed lookup each, whatever the scope's size."""
        ...


@runtime_checkable
class TurnQueue(Protocol):
    """The write path's queue of turns: a turn stored with its messages, claimed under a lease by one worker
    at a time, its lease renewed while it is worked on, taken again when its worker died."""

    def add_turn(self, turn: TurnRecord, messages: Sequence[StoredMessage]) -> None:
        """Store a turn's messages and its queue entry in one transaction."""
        ...

    def get_turn(self, turn_id: str) -> TurnRecord | None:
        ...

    def save_turn(self, turn: TurnRecord) -> None:
        """Write a turn's status, attempts, results and error."""
        ...

    def claim_turns(self, now: datetime, lease_until: datetime, limit: int, *,
                    abandoned_only: bool = False) -> list[TurnRecord]:
        """Atomically take up to `limit` due turns (queued, retry due, or processing with an expired lease), oldest
        first, marking them processing until `lease_until`; a turn is never given to two claimers at once.
        `abandoned_only`: only the processing ones whose lease ran out (the process that held them died)."""
        ...

    def renew_turns(self, turn_ids: Sequence[str], lease_until: datetime) -> list[str]:
        """Move the lease of these turns to `lease_until` (the heartbeat of the worker processing them); the ids
        renewed. A turn no longer processing (finished, or handed back to the queue) is left as it is."""
        ...

    def turn_counts(self) -> dict[str, int]:
        """Turns per status."""
        ...


@runtime_checkable
class Coordination(Protocol):
    """What processes sharing one store agree through it: named locks with leases, idempotency keys, and
    small named values (where the last episode summary ended)."""

    def try_lock(self, name: str, holder: str, until: datetime) -> bool:
        """Take the named lock for `holder` until `until` (wall-clock UTC) if no one else holds it, or the holder's
        lease has run out; across every process on the store. True when taken. Never waits."""
        ...

    def unlock(self, name: str, holder: str) -> None:
        """Let go of a lock `holder` took; nothing if it does not hold it (its lease ran out and another took it)."""
        ...

    def renew_lock(self, name: str, holder: str, until: datetime) -> bool:
        """Move the lease of a lock `holder` holds to `until` (its heartbeat); False, and nothing changed, when it does
        not hold it (let go, or taken over after its lease ran out)."""
        ...

    def claim_request(self, key: str, now: datetime, keep: timedelta) -> tuple[bool, str | None]:
        """Claim an idempotency key: (True, None) when no request holds it (now this one does), else (False, the
        first request's stored answer, or None while it still runs). Keys older than `keep` are forgotten first."""
        ...

    def finish_request(self, key: str, response: str | None) -> None:
        """Store the claimed key's answer; None lets the key go (the request failed: a retry may run it)."""
        ...

    def get_state(self, key: str) -> str | None:
        """A small named value the write path keeps (e.g. where the last episode summary ended)."""
        ...

    def set_state(self, key: str, value: str) -> None:
        ...


@runtime_checkable
class MemoryStore(MemoryIndex, MessageLog, TurnQueue, Coordination, Protocol):
    """What every backend is: the four roles above over one database, and its lifecycle. The facade and the server
    take a MemoryStore; a module that needs one role takes that role's port. A store class declares the ports it
    implements by naming them as its bases (tests/stores/test_ports.py checks it, and runs each port's contract
    tests on the stores that declare it)."""

    def reset(self) -> None:
        """Delete everything: memories, history, messages, turns, state (the embedding binding too)."""
        ...

    def close(self) -> None:
        ...


@runtime_checkable
class KeyStore(Protocol):
    """API keys issued with `jiyi keys create` (jiyi/keys.py): only their hashes. A reset keeps them."""

    def add_api_key(self, key: ApiKey) -> None:
        ...

    def api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash, revoked or not."""
        ...

    def list_api_keys(self) -> list[ApiKey]:
        """Every key, newest first."""
        ...

    def revoke_api_key(self, key_id: str, when: datetime) -> bool:
        """Revoke a key; False if there is no such key or it was revoked already."""
        ...

    def touch_api_key(self, key_id: str, when: datetime) -> None:
        """Record that the key was used."""
        ...

    def keys_issued(self) -> bool:
        """Whether any key was ever issued, revoked ones too: a server with issued keys refuses requests without one,
        and revoking the last key must not open it to everyone."""
        ...


@dataclass(frozen=True, slots=True)
class ConsoleSession:
    """A console sign-in as stored (server/ui/session.py): neither the session's id nor the key it was opened with."""

    id_hash: str  # the SHA-256 of the session id, which only the browser holds (in its cookie)
    sealed_key: str  # the key's SHA-256, encrypted under the session id: only the cookie's holder can read it
    opened_at: datetime
    seen_at: datetime  # when it was last used (written at most once a minute, not per request)


@runtime_checkable
class SessionStore(Protocol):
    """Console sign-ins, shared by every server process on the store and kept across restarts: the browser's cookie
    holds the session id, this only its hash. A reset keeps them."""

    def add_console_session(self, session: ConsoleSession) -> None:
        ...

    def console_session_by_hash(self, id_hash: str) -> ConsoleSession | None:
        ...

    def touch_console_session(self, id_hash: str, when: datetime) -> None:
        """Record that the session was used: its idle time starts again."""
        ...

    def delete_console_session(self, id_hash: str) -> bool:
        """End a session; False when there was none."""
        ...

    def prune_console_sessions(self, seen_before: datetime, opened_before: datetime) -> int:
        """Remove the sessions last used before `seen_before` or opened before `opened_before`; returns how many."""
        ...


@dataclass(frozen=True, slots=True)
class Tally:
    """Live memories of one owner (a user, agent or run) in one layer and category."""

    owner: str
    layer: str
    category: str
    memories: int


@dataclass(frozen=True, slots=True)
class RecordPage:
    """One page of a scope's memories and how many match in all."""

    total: int
    records: list[MemoryRecord]


@dataclass(frozen=True, slots=True)
class ScopeTally:
    """Live memories of one agent and run of a scope (None: none named) in one layer and category."""

    agent_id: str | None
    run_id: str | None
    layer: str
    category: str
    memories: int


@dataclass(frozen=True, slots=True)
class Vitals:
    """What the forgetting curve needs of a scope's live memories, as columns (entry i of each is one memory): no
    text, no vector, and no Python object per memory, so that 100k memories are a few arrays."""

    categories: np.ndarray  # of str (dtype object)
    memory_types: np.ndarray  # of str (dtype object)
    importance: np.ndarray  # float64
    access_counts: np.ndarray  # float64: how often each was recalled
    last_reinforced: np.ndarray  # float64, POSIX seconds: the latest of created_at, updated_at, last_accessed_at

    def __len__(self) -> int:
        return len(self.categories)


# What browse_records may sort by: a column every store has, so the console's sort links work on each.
BROWSE_ORDERS = ("created_at", "updated_at", "last_accessed_at", "deleted_at", "importance", "access_count")


@runtime_checkable
class ConsoleStore(Protocol):
    """What the web console (server/ui/) asks beyond the memory contract: counts by owner, sorted pages, a scope's
    counts and numbers without its texts (from an index, not the rows), and its extraction queue. A role of its own:
    a store without it still serves memories, only not the console."""

    def tallies(self, kind: str, user_id: str | None = None) -> list[Tally]:
        """Live memories per owner, layer and category, for owners of `kind` ("user", "agent" or "run"); within one
        user's memories when `user_id` is given. Owners in id order."""
        ...

    def browse_records(self, scope: Scope, where: Node | None = None, *, order_by: str = "created_at",
                       descending: bool = True, limit: int = 50, offset: int = 0, contains: str | None = None,
                       deleted: bool = False) -> RecordPage:
        """A page of the scope's memories (expired ones too) sorted by `order_by` (one of BROWSE_ORDERS; ties newest
        first), with the total that match. `contains`: only memories whose text holds this substring. `deleted`:
        the soft-deleted memories not yet purged instead of the live ones."""
        ...

    def list_turns(self, scope: Scope, statuses: Sequence[TurnStatus], limit: int = 50) -> list[TurnRecord]:
        """The scope's turns in these statuses, newest first."""
        ...

    def scope_turn_counts(self, scope: Scope) -> dict[str, int]:
        """The scope's turns per status (turn_counts() for one scope)."""
        ...

    def turns_with_messages(self, scope: Scope, message_ids: Sequence[str]) -> list[TurnRecord]:
        """The scope's turns that hold any of these messages (the turn a memory was made from), oldest first."""
        ...

    def scope_tallies(self, scope: Scope) -> list[ScopeTally]:
        """The scope's live memories (expired ones too) per agent, run, layer and category: counted by the store,
        not read."""
        ...

    def vitals(self, scope: Scope, where: Node | None = None) -> Vitals:
        """Category, kind, importance, recalls and last reinforcement of every live memory in the scope that matches
        `where` (expired ones too), in no particular order: the scope's retention curve, without its texts."""
        ...
