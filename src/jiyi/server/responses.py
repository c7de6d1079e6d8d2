"""What the routes answer, as typed models for the OpenAPI document: a client generated from /openapi.json returns
typed objects, and schemathesis (tests/server/test_openapi.py) checks every real answer against these schemas.

The handlers still return plain dicts (`response_model=None`): the models document, they do not re-validate a list
of a thousand memories on every answer. Each model allows more fields than it names, as JSON clients expect."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class SourceRef(_Answer):
    """A message a memory came from."""

    message_id: str
    role: str | None = None
    created_at: str | None = None
    external_id: str | None = Field(default=None, description="the caller's own id for the message")


class MemoryItem(_Answer):
    """A memory as mem0 shapes it (id, memory, hash, metadata, ids, times), with jiyi's own fields after."""

    id: str
    memory: str
    hash: str | None = None
    metadata: dict[str, Any] | None = None
    created_at: str | None = None
    updated_at: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    actor_id: str | None = None
    role: str | None = None
    expiration_date: str | None = Field(default=None, description="YYYY-MM-DD; hidden after it")
    memory_type: str = Field(description="semantic, episodic, procedural, … (mem0's), or jiyi's fact/preference")
    layer: str = Field(description="working, short_term or long_term")
    category: str = Field(description="jiyi's kind of record: core, fact, episode, message, …")
    categories: list[str] = Field(default_factory=list, description=(
        "mem0's categories (personal_details, food, travel, … or the project's custom_categories)"))
    importance: float
    confidence: float
    access_count: int
    source: str
    tags: list[str]
    event_time: str | None = Field(default=None, description="when the thing it tells of happened, if known")
    provenance: list[SourceRef]
    version: int = Field(description="moves on with every change; give it back as If-Match to update only this one")


class SearchHit(MemoryItem):
    score: float
    score_details: dict[str, Any] | None = Field(default=None, description="with explain: every path's part")


class MemoryList(_Answer):
    results: list[MemoryItem]


class SearchResults(_Answer):
    results: list[SearchHit]


class AddEvent(_Answer):
    """One change an add made: ADD, UPDATE or DELETE of a memory."""

    id: str
    memory: str | None = None
    event: str = Field(description="ADD, UPDATE or DELETE")


class AddResult(_Answer):
    results: list[AddEvent]
    event_id: str | None = Field(default=None, description="the turn, pollable at GET /events/{event_id}")


class AddAccepted(_Answer):
    """async_mode: the turn is stored and its extraction queued."""

    results: list[Any]
    event_id: str
    status: Literal["PENDING"]
    message: str


class Event(_Answer):
    """A turn's extraction, as mem0's platform reports an async add."""

    id: str
    status: str = Field(description="PENDING, RUNNING, RETRYING, SUCCEEDED or FAILED")
    results: list[dict[str, Any]]
    attempts: int
    extractor: str | None = None
    error: str | None = None
    next_attempt_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


class HistoryRow(_Answer):
    """One row of a memory's history, mem0's columns (plus the lifecycle's reason)."""

    id: str
    memory_id: str
    old_memory: str | None
    new_memory: str | None
    event: str
    created_at: str | None
    updated_at: str | None
    is_deleted: bool
    actor_id: str | None
    role: str | None
    reason: str | None = None


class Message(_Answer):
    message: str


class Health(_Answer):
    status: str
    store: str
    embedder: str


class ContextMemory(_Answer):
    id: str
    memory: str
    score: float
    relevance: float
    category: str


class Context(_Answer):
    messages: list[dict[str, Any]] = Field(description="the request's messages, the memory block in the first "
                                                       "system message")
    memory_block: str
    memories: list[ContextMemory]
    who_is_who: str | None = Field(None, description="the line before the memories that says who the people the "
                                                      "question names are to the user, when it names any")
    stages: list[dict[str, Any]]
    degraded: bool
    error: str | None
    elapsed_ms: float


class Maintenance(_Answer):
    """What one lifecycle pass did (counts of memories), and the store's compression and retention after it."""

    processed: int
    decayed: int
    forgotten: int
    reviewed: int
    kept: int
    promoted: int
    moved: int
    merged: int
    summarized: int
    abstracted: int
    conflicts: int
    purged: int
    saved_bytes: int
    live_before: int
    live_after: int
    seconds: float
    compression_ratio: float | None
    retention_rate: float | None


# --- mem0's platform API ---------------------------------------------------------------------------------------


class PlatformItem(MemoryItem):
    app_id: str | None = None


class PlatformHit(PlatformItem):
    score: float


class PlatformResults(_Answer):
    results: list[PlatformHit]


class Page(_Answer):
    count: int
    next: str | None
    previous: str | None
    results: list[PlatformItem]


class PlatformAdded(_Answer):
    """The memories an add made, or (async, the v3 default) one PENDING entry with the event to poll."""

    results: list[dict[str, Any]]
    event_id: str | None = None


class Ping(_Answer):
    status: Literal["ok"]
    org_id: str
    project_id: str
    user_id: str | None = None


class EntityItem(_Answer):
    id: str
    name: str
    type: str = Field(description="user, agent or run")
    total_memories: int
    created_at: str
    updated_at: str
    owner: str


class Entities(_Answer):
    count: int
    next: str | None
    previous: str | None
    results: list[EntityItem]


class EntityRef(_Answer):
    type: str
    name: str


class Deleted(_Answer):
    memories: int = Field(description="memories deleted by this call")
    entities: list[EntityRef] = Field(description="users, agents and runs left with no memories, the one named too")


class EntityDeleted(_Answer):
    message: str
    deleted: Deleted


class Project(_Answer):
    id: str
    name: str
    organization: str
    custom_instructions: str | None
    custom_categories: list[dict[str, Any]]


class ExportAccepted(_Answer):
    message: str
    id: str


class Export(_Answer):
    """A snapshot of a scope's memories with the schema it was asked for."""

    id: str
    status: str
    schema_: dict[str, Any] | str = Field(alias="schema")
    scope: dict[str, str]
    created_at: str
    count: int
    memories: list[PlatformItem]


class Summary(_Answer):
    count: int
    categories: dict[str, int]
    summary: str = Field(description="the most important memories, one per line")
    memories: list[PlatformItem]


class ProfileAnswer(_Answer):
    """mem0's get_profile: the profile (its keys the categories, or the project schema's properties) and its status."""

    profile: dict[str, Any]
    status: str = Field(description="succeeded, not_enabled, insufficient_data or failed")
    entity_type: str
    entity_id: str
    updated_at: str | None
    generation_count: int
    error: str | None = None


class ProfileJobAccepted(_Answer):
    job_id: str
    status: str
    status_url: str = Field(description="GET it for the job")
    operation: str
    entity_type: str
    entity_count_reserved: int
    event_id: str | None = None
    replayed: bool = Field(description="true: the Idempotency-Key's earlier job, given back")
    sampled: int | None = None
    entity_ids: list[str] | None = None


class ProfileJob(_Answer):
    id: str
    operation: str
    entity_type: str
    status: str
    total: int | None
    enumeration_complete: bool
    completed: int
    succeeded: int
    failed: int
    skipped: int


class ProfileJobAnswer(_Answer):
    job: ProfileJob


class ProfileSettingsAnswer(_Answer):
    enabled: bool
    entities: dict[str, dict[str, Any]]
    capabilities: dict[str, Any]


class FeedbackEntry(_Answer):
    id: str
    memory_id: str
    feedback: str | None
    feedback_reason: str | None
    created_at: str


def answers(model: type[BaseModel] | Any, *others: dict[int | str, dict[str, Any]],
            description: str = "OK") -> dict[int | str, dict[str, Any]]:
    """A route's `responses` (with `response_model=None`): its typed 200 answer and the other answers given."""
    merged: dict[int | str, dict[str, Any]] = {200: {"model": model, "description": description}}
    for more in others:
        merged.update(more)
    return merged
