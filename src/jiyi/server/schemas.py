"""Request bodies of mem0's REST server, both generations. Unknown fields are ignored, as mem0's server does."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MessageIn(_Body):
    role: str = Field(..., description="user, assistant, system, tool")
    content: str | list[dict[str, Any]]
    name: str | None = None
    id: str | None = Field(None, description="the caller's id for the message, kept as provenance")
    created_at: str | float | None = Field(None, description="when the message was said (ISO 8601 or Unix s)")


class MemoryCreate(_Body):
    messages: list[MessageIn] = Field(..., min_length=1)
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] | None = None
    infer: bool = True
    memory_type: str | None = None
    prompt: str | None = None
    expiration_date: str | None = Field(None, description="YYYY-MM-DD; the memory is hidden after it")
    timestamp: str | float | None = Field(None, description="time of the turn (ISO 8601 or Unix seconds)")
    async_mode: bool = Field(False, description="answer once the turn is stored; poll GET /events/{event_id}")
    injected_memory_ids: list[str] | None = Field(
        None, description="ids of the memories given to the assistant for this reply; those that shaped it gain "
                          "importance")


class SearchBody(_Body):
    query: str = Field(..., min_length=1)
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    filters: dict[str, Any] | None = None
    limit: int | None = Field(None, ge=1, le=1000)
    top_k: int | None = Field(None, ge=1, le=1000)
    threshold: float | None = Field(None, ge=0, le=1)
    explain: bool = False
    show_expired: bool = False


class MemoryUpdate(_Body):
    text: str | None = None
    data: str | None = Field(None, description="mem0 v1 name of `text`")
    memory: str | None = Field(None, description="also accepted as the new text")
    metadata: dict[str, Any] | None = None
    expiration_date: str | None = None
