"""Request bodies of mem0's platform API (api.mem0.ai), the routes mem0's SDKs call (`MemoryClient(host=…)`).

The SDKs' own source is the spec (mem0ai 2.2.1 on PyPI: mem0/client/main.py; mem0ai 3.3.1 on npm: dist/index.js).
Unknown fields are ignored, as the platform does; a field jiyi cannot honour is refused by the route, not dropped.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from jiyi.server.schemas import MessageIn


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Entities(_Body):
    """Who a request is about: at the top level (older SDKs, the JS client's add) or inside `filters` (v3)."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    app_id: str | None = Field(default=None, description="kept as metadata.app_id; jiyi scopes by user, agent and run")
    filters: dict[str, Any] | None = None


class PlatformAdd(Entities):
    messages: list[MessageIn] | str = Field(..., min_length=1)
    metadata: dict[str, Any] | None = None
    infer: bool = True
    timestamp: int | float | str | None = Field(default=None,
                                                description="when the turn happened (Unix seconds or ISO)")
    expiration_date: str | None = Field(default=None, description="YYYY-MM-DD; the memory is hidden after it")
    async_mode: bool | None = Field(default=None, description=(
        "v3 default: true with infer (answer with an event_id to poll at /v1/event/{id}/); false waits for the "
        "extracted memories"))
    custom_instructions: str | None = Field(default=None,
                                            description="the extraction prompt for this add (LLM extraction)")
    idempotency_key: str | None = Field(default=None, max_length=256)
    output_format: str | None = None
    custom_categories: list[Any] | None = Field(default=None, description=(
        'the categories this add\'s memories are sorted into, [{"name": "description"}]: instead of the project\'s '
        "or mem0's default fifteen"))


class PlatformSearch(Entities):
    query: str = Field(..., min_length=1)
    top_k: int | None = Field(default=None, ge=1, le=1000)
    limit: int | None = Field(default=None, ge=1, le=1000, description="v1 name of top_k")
    threshold: float | None = Field(default=None, ge=0, le=1)
    rerank: bool | None = None
    categories: list[str] | None = Field(default=None, description="mem0's categories: memories in any of them")
    show_expired: bool = False
    output_format: str | None = None
    enable_graph: bool = Field(default=False, description="also answer `relations`: the user's relations among the "
                                                         "entities the query names (mem0's graph memory)")


class PlatformList(Entities):
    categories: list[str] | None = Field(default=None, description="mem0's categories: memories in any of them")
    start_date: str | None = Field(default=None, description="memories created on or after (ISO 8601)")
    end_date: str | None = Field(default=None, description="memories created on or before (ISO 8601)")
    show_expired: bool = False
    output_format: str | None = None


class PlatformUpdate(_Body):
    text: str | None = None
    metadata: dict[str, Any] | None = None
    expiration_date: str | None = None
    timestamp: int | float | str | None = None


class BatchItem(_Body):
    memory_id: str
    text: str | None = None
    metadata: dict[str, Any] | None = None


class Batch(_Body):
    memories: list[BatchItem] = Field(..., min_length=1, max_length=1000)


class ExportCreate(Entities):
    schema_: dict[str, Any] | str = Field(..., alias="schema", description="the JSON schema the export is for")
    export_instructions: str | None = None


class ExportGet(Entities):
    memory_export_id: str | None = None


class Summary(_Body):
    filters: dict[str, Any] | None = None


class Feedback(_Body):
    memory_id: str
    feedback: str | None = Field(default=None, description="POSITIVE, NEGATIVE or VERY_NEGATIVE")
    feedback_reason: str | None = Field(default=None, max_length=2000)


class ProjectUpdate(_Body):
    custom_instructions: str | None = None
    custom_categories: list[Any] | None = Field(default=None, description=(
        '[{"name": "description"}, ...]: the categories new memories are sorted into instead of mem0\'s fifteen'))
