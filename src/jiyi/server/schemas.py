"""Request bodies of mem0's REST server, both generations. Unknown fields are ignored, as mem0's server does."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ErrorBody(BaseModel):
    """Every error answer. `detail` is a sentence saying what to fix; for a 422, which field and what it must be."""

    detail: str


class MessageIn(_Body):
    role: str = Field(..., description="user, assistant, system, tool")
    content: str | dict[str, Any] | list[dict[str, Any]] = Field(..., description=(
        'text, or content parts: {"type": "text", "text": …}; an image or document part ({"type": "image_url", '
        '"image_url": {"url": …}}, mdx_url, pdf_url) is kept by its "caption", or by the text parts beside it'))
    name: str | None = None
    id: str | None = Field(None, description="the caller's id for the message, kept as provenance")
    created_at: str | float | None = Field(None, description="when the message was said (ISO 8601 or Unix s)")


def as_messages(messages: list[MessageIn] | str) -> list[MessageIn]:
    """A string is one user message, as mem0's SDKs take it."""
    return [MessageIn.model_validate({"role": "user", "content": messages})] if isinstance(messages, str) else messages


class MemoryCreate(_Body):
    messages: list[MessageIn] | str = Field(..., min_length=1, description="the turn; a string is one user message")
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
    idempotency_key: str | None = Field(None, max_length=256, description="the same as an Idempotency-Key header: "
                                        "an add sent again with the same key stores nothing and answers as the first")
    injected_memory_ids: list[str] | None = Field(
        None, description="ids of the memories given to the assistant for this reply; those that shaped it gain "
                          "importance")
    custom_categories: list[Any] | None = Field(None, description=(
        'mem0\'s custom_categories, [{"name": "description"}]: the categories the memories are sorted into instead '
        "of mem0's default fifteen"))


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
    rerank: bool | None = Field(None, description="false: skip the configured reranker for this search")
    enable_graph: bool = Field(False, description="also answer `relations`: the user's relations among the entities "
                                                  "the query names (mem0's graph memory)")


class MemoryUpdate(_Body):
    text: str | None = None
    data: str | None = Field(None, description="mem0 v1 name of `text`")
    memory: str | None = Field(None, description="also accepted as the new text")
    metadata: dict[str, Any] | None = None
    expiration_date: str | None = None
    version: int | None = Field(None, ge=1, description="apply only if the memory is still at this version (as GET "
                                                         "returns it), else 409; same as an If-Match header")


class ContextBody(_Body):
    """What a chat client sends before each reply. `messages` are passed through (OpenAI format) with the memory
    block appended to the first system message."""

    messages: list[dict[str, Any]] = Field(..., min_length=1, description="the chat request's messages")
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    filters: dict[str, Any] | None = None
    top_k: int = Field(5, ge=1, le=50, description="at most this many memories are injected")
    budget_chars: int = Field(1200, ge=100, le=20000, description="characters of memory block, header included")
    rewrite: bool = Field(False, description="let the configured LLM rewrite a weak question when the question and "
                                             "the context query found nothing relevant")
    rewrite_prompt: str | None = Field(None, description="the rewrite's system prompt (jiyi's own by default)")
    rewritten_query: str | None = Field(None, description="a rewrite made by the caller's own model, used as the "
                                                          "third query instead of calling jiyi's LLM")
    user_name: str | None = None
    char_name: str | None = None
    context_messages: int | None = Field(None, ge=0, le=100, description="recent messages in the context query")
    min_relevance: float | None = Field(None, ge=0, le=1, description="what counts as relevant (0..1)")
    deadline_ms: int | None = Field(None, ge=50, le=60000, description="for the whole recall; on expiry the "
                                                                      "messages come back unchanged")
    only_stages: list[Literal["question", "context", "rewrite"]] | None = Field(
        None, min_length=1, description='run only these stages, e.g. ["rewrite"] with a rewritten_query when the '
                                        'question and the context were already searched')
