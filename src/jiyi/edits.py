"""The facade's direct changes to memories (blocking; the facade runs them in a worker thread): storing a turn's
messages as they are (infer=False), update, delete, restore and promote. Each writes the memory and its history row
together, and retries a write that lost a race to another writer (compare and swap on the memory's version)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import numpy as np

from jiyi.arguments import UNSET
from jiyi.categorizing import Categorizer
from jiyi.core.categories import DEFAULT_NAMES
from jiyi.core.lifecycle import LifecyclePolicy, entry_layer
from jiyi.core.messages import ChatMessage, in_conversation
from jiyi.embedders.base import Embedder
from jiyi.embedders.scheduler import embedding_lane
from jiyi.entity_path import RECENT_MESSAGES, named_speakers, remember_entities
from jiyi.errors import Conflict, InvalidInput, NotFound
from jiyi.filters import Node
from jiyi.lifecycle import spill_working_memory
from jiyi.records import (
    Category,
    Clock,
    Event,
    Layer,
    MemoryRecord,
    MemoryType,
    Scope,
    Source,
    SourceRef,
    StoredMessage,
    history_row,
    revise,
)
from jiyi.stores.base import MemoryStore
from jiyi.stores.entities import EntityStore
from jiyi.turn_jobs import lane_of

log = logging.getLogger(__name__)

# Read, change, write-if-unchanged: how often a writer tries before it answers Conflict. Each lost race means another
# writer's change landed, so the writers as a whole always progress; 64 concurrent updates of one memory needed at most
# a few dozen attempts each.
CAS_ATTEMPTS = 200

# mem0's app_id names an entity, as user_id does; jiyi scopes nothing by it and keeps it in the metadata (where filters
# find it). A metadata update replaces the caller's keys, not whose memory it is: these stay unless named anew.
ENTITY_METADATA_KEYS = ("app_id",)
_SOURCES = {"user": Source.USER, "assistant": Source.ASSISTANT, "system": Source.SYSTEM}


def replaced_metadata(current: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    kept = {key: current[key] for key in ENTITY_METADATA_KEYS if key in current and key not in new}
    return {**new, **kept}


def stored_messages(parsed: list[ChatMessage], scope: Scope, metadata: dict[str, Any], turn_time: datetime | None,
                    now: datetime) -> list[StoredMessage]:
    return [
        StoredMessage(content=m.content, role=m.role, scope=scope, name=m.name,
                      created_at=m.created_at or turn_time or now, external_id=m.external_id, metadata=metadata)
        for m in parsed
    ]


def _lost_races(memory_id: str, doing: str) -> Conflict:
    return Conflict(f"memory {memory_id} kept changing: {CAS_ATTEMPTS} attempts to {doing} it lost the race")


class MemoryEdits:
    def __init__(self, store: MemoryStore, embedder: Embedder, embedding: Embedder, clock: Clock,
                 lifecycle: LifecyclePolicy, categorizer: Categorizer) -> None:
        """`embedder`: the model the store is bound to; `embedding`: the scheduler every embedding goes through."""
        self.store = store
        self.embedder = embedder
        self.embedding = embedding
        self.clock = clock
        self.lifecycle = lifecycle
        self.categorizer = categorizer

    def bind_learnt_dims(self) -> None:
        if self.store.embedding_binding() is None:
            self.store.bind_embedding(self.embedder.model_id, self.embedder.dims)

    def add_raw(self, parsed: list[ChatMessage], scope: Scope, metadata: dict[str, Any], turn_time: datetime | None,
                expires: datetime | None, kind: MemoryType, importance: float,
                custom_categories: list[dict[str, str]] | None = None) -> dict[str, Any]:
        """infer=False: every non-system message becomes a memory as it is; a reply's vector is made with the other
        party's message before it (core.messages.in_conversation)."""
        now = self.clock()
        stored = stored_messages(parsed, scope, metadata, turn_time, now)
        earlier = self.store.list_messages(scope, limit=RECENT_MESSAGES * 4)  # before this turn's are stored
        self.store.add_messages(stored)
        records = []
        embed_texts = []
        said: list[StoredMessage] = []  # the message each record keeps
        for message, raw, text in zip(parsed, stored, in_conversation(earlier + stored)[len(earlier):], strict=True):
            if message.role == "system" or not message.content.strip():
                continue
            said.append(raw)
            embed_texts.append(text)
            records.append(MemoryRecord(
                content=message.content.strip(), scope=scope, actor_id=message.name, role=message.role,
                memory_type=kind, importance=importance, layer=entry_layer(scope, Category.FACT),
                category=Category.FACT, source=_SOURCES.get(message.role, Source.USER), metadata=dict(metadata),
                provenance=[SourceRef(raw.id, raw.role, raw.created_at, raw.external_id)], created_at=now,
                event_time=message.created_at or turn_time, expiration_date=expires,
            ))
        if not records:
            return {"results": []}
        with embedding_lane(lane_of(scope)):
            vectors = self.embedding.embed_documents(embed_texts)
        self.bind_learnt_dims()
        for record, categories in zip(records, self.categorize(custom_categories, [r.content for r in records],
                                                                vectors), strict=True):
            record.categories = categories
        self.store.insert(records, vectors, [history_row(Event.ADD, r, now) for r in records])
        self._remember_entities(scope, said, records, earlier)
        spill_working_memory(self.store, scope, self.lifecycle, now)
        return {"results": [
            {"id": r.id, "memory": r.content, "event": Event.ADD.value, "actor_id": r.actor_id, "role": r.role,
             "memory_type": r.memory_type.value}
            for r in records
        ]}

    def _remember_entities(self, scope: Scope, said: list[StoredMessage], records: list[MemoryRecord],
                           before: list[StoredMessage]) -> None:
        """Who is who from messages kept as they were said, as the write path does for a turn's facts
        (entity_path.py): each message's entities and relations cite the memory that keeps it. An error is logged;
        the memories stay."""
        if not isinstance(self.store, EntityStore) or not scope.user_id:
            return
        try:
            # Who speaks, from everyone's messages (a lone message of one speaker still has the other's before it);
            # each call below sees one message. Pronouns are read in the user's own messages only.
            speakers = named_speakers(said, [m.content for m in before])
            earlier = [m.content for m in before if m.role == "user"]
            for message, record in zip(said, records, strict=True):
                remember_entities(self.store, scope, [message], earlier, [record.id], with_evidence=False,
                                  speakers=speakers)
                if message.role == "user":
                    earlier = [*earlier, message.content][-RECENT_MESSAGES:]
        except Exception:
            log.exception("the entity graph was not updated for %d memories kept as said", len(records))

    def categorize(self, custom: list[dict[str, str]] | None, texts: list[str],
                   vectors: np.ndarray) -> list[list[str]]:
        """mem0's categories of texts about to be stored with `vectors` (see jiyi/categorizing.py); by their words
        alone when the prototypes cannot be made (the embedder is down: the memory is stored all the same)."""
        taxonomy = self.categorizer.taxonomy(custom)
        try:
            return self.categorizer.categorize(taxonomy, texts, vectors)
        except Exception:
            log.warning("categorising by similarity failed; by words only", exc_info=True)
            return self.categorizer.categorize(taxonomy, texts, None)

    def update(self, memory_id: str, new_text: str | None, metadata: dict[str, Any] | None, expires: Any,
               version: int | None, custom_categories: list[dict[str, str]] | None = None) -> None:
        """`expires`: arguments.UNSET to keep the expiration date as it is."""
        vector = None
        for _ in range(CAS_ATTEMPTS):
            current = self.store.get(memory_id)
            if current is None:
                raise NotFound(f"memory {memory_id} not found")
            now = self.clock()
            changes: dict[str, Any] = {"updated_at": now}
            if new_text is not None:
                changes["content"] = new_text.strip()
            if metadata is not None:
                changes["metadata"] = replaced_metadata(current.metadata, metadata)
            if expires is not UNSET:
                changes["expiration_date"] = expires
            updated, event = revise(current, Event.UPDATE, now, **changes)
            if new_text is not None and vector is None:  # the new text's vector does not depend on the old text
                with embedding_lane(lane_of(current.scope)):
                    vector = self.embedding.embed_documents([updated.content])[0]
            if new_text is not None and vector is not None and (
                    custom_categories is not None or set(current.categories) <= set(DEFAULT_NAMES)):
                updated.categories = self.categorize(custom_categories, [updated.content], vector[None, :])[0]
            try:
                self.store.update(updated, vector, event, expected_version=version or current.version)
                return
            except Conflict:
                if version is not None:
                    raise  # the caller asked for this version and no other
        raise _lost_races(memory_id, "update")

    def delete(self, memory_id: str, reason: str | None, kept_reason: str = "deleted by request") -> None:
        for _ in range(CAS_ATTEMPTS):
            current = self.store.get(memory_id)
            if current is None:
                raise NotFound(f"memory {memory_id} not found")
            now = self.clock()
            event = history_row(Event.DELETE, current, now, reason=reason)
            try:  # history's old_memory is the text deleted, even when an update lands in between
                self.store.soft_delete(memory_id, reason or kept_reason, event, now,
                                       expected_version=current.version)
                return
            except Conflict:
                continue
        raise _lost_races(memory_id, "delete")

    def delete_scope(self, scope: Scope, where: Node | None) -> int:
        """Delete every memory of `scope` that `where` selects; answers how many a listing showed, not counting the
        messages an infer=True add keeps as evidence (deleted too: nothing of the scope stays searchable)."""
        records = self.store.list_records(scope, where, include_expired=True)
        for record in records:
            self.delete(record.id, None, "deleted with delete_all")
        return sum(1 for record in records if record.category is not Category.MESSAGE)

    def delete_entity(self, kind: str, name: str, user_id: str | None, scope: Scope) -> dict[str, Any]:
        """Every memory of one user, agent or run (`scope`), and which entities that left with none."""
        before = self.store.entities(user_id)
        listed = any(e.kind == kind and e.name == name for e in before)
        if not listed and next(iter(self.store.iter_records(scope, include_deleted=True)), None) is None:
            raise NotFound(f"{kind} {name} not found")
        deleted = self.delete_scope(scope, None)
        left = {(e.kind, e.name) for e in self.store.entities(user_id)}
        return {"memories": deleted, "entities": [{"type": e.kind, "name": e.name} for e in before
                                                  if (e.kind, e.name) not in left]}

    def restore(self, memory_id: str, reason: str | None, version: int | None, user_id: str | None,
                agent_id: str | None) -> MemoryRecord:
        for _ in range(CAS_ATTEMPTS):
            current = self.store.get(memory_id, include_deleted=True)
            if current is None or (user_id is not None and current.scope.user_id != user_id) or (
                    agent_id is not None and current.scope.agent_id != agent_id):
                raise NotFound(f"memory {memory_id} not found")
            if current.deleted_at is None:
                raise Conflict(f"memory {memory_id} is not deleted: there is nothing to restore")
            now = self.clock()
            event = history_row(Event.RESTORE, current, now,
                                reason=reason.strip() if reason else "restored by request")
            try:
                return self.store.restore(memory_id, event, now, expected_version=version or current.version)
            except Conflict:
                if version is not None:
                    raise
            except InvalidInput:
                continue  # restored or purged meanwhile: read it again and say which
        raise _lost_races(memory_id, "restore")

    def promote(self, memory_id: str, reason: str | None, version: int | None) -> bool:
        for _ in range(CAS_ATTEMPTS):
            current = self.store.get(memory_id)
            if current is None:
                raise NotFound(f"memory {memory_id} not found")
            if current.category in (Category.CORE, Category.SYSTEM):
                return False
            now = self.clock()
            # Not a new version of the text: updated_at stays, as with the lifecycle's own promotions.
            promoted, event = revise(current, Event.PROMOTE, now, category=Category.CORE, layer=Layer.LONG_TERM,
                                     reason=reason.strip() if reason else "promoted by request")
            try:
                self.store.update(promoted, None, event, expected_version=version or current.version)
                return True
            except Conflict:
                if version is not None:
                    raise
        raise _lost_races(memory_id, "promote")
