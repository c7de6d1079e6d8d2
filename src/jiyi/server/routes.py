"""mem0's REST routes (both generations). Each handler parses, calls the Memory, shapes the answer."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import PlainTextResponse, RedirectResponse
from prometheus_client import generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from jiyi.errors import InvalidInput, Unauthorized
from jiyi.memory import AsyncMemory
from jiyi.server.metrics import Metrics
from jiyi.server.schemas import MemoryCreate, MemoryUpdate, SearchBody
from jiyi.server.state import ServerState
from jiyi.wiring import redact

router = APIRouter()


def state(request: Request) -> ServerState:
    return request.app.state.jiyi


def memory(request: Request) -> AsyncMemory:
    return state(request).memory


def metrics(request: Request) -> Metrics:
    return state(request).metrics


def require_admin(
    request: Request,
    x_api_key: Annotated[str | None, Header()] = None,
    authorization: Annotated[str | None, Header()] = None,
) -> None:
    expected = state(request).admin_api_key
    if expected is None:
        return
    given = x_api_key or (authorization[7:] if authorization and authorization.lower().startswith("bearer ") else None)
    if given != expected:
        raise Unauthorized("this route needs the admin API key (X-API-Key or Authorization: Bearer)")


MemoryDep = Annotated[AsyncMemory, Depends(memory)]
MetricsDep = Annotated[Metrics, Depends(metrics)]
Admin = Depends(require_admin)


@router.get("/", include_in_schema=False)
async def root() -> RedirectResponse:
    return RedirectResponse("/docs")


@router.get("/health", tags=["ops"])
async def health(request: Request) -> dict[str, Any]:
    current = memory(request)
    counts = await asyncio.to_thread(current.store.count)
    return {"status": "ok", "store": redact(current.store.url), "embedder": current.embedder.model_id,
            "memories": sum(counts.values())}


@router.get("/metrics", tags=["ops"], response_class=PlainTextResponse)
async def prometheus(m: MetricsDep) -> PlainTextResponse:
    body = await asyncio.to_thread(generate_latest, m.registry)
    return PlainTextResponse(body, media_type=CONTENT_TYPE_LATEST)


@router.post("/configure", tags=["admin"], dependencies=[Admin])
async def configure(config: dict[str, Any], request: Request) -> dict[str, str]:
    await state(request).reconfigure(config)
    return {"message": "Configuration set successfully"}


@router.get("/configure", tags=["admin"], dependencies=[Admin])
async def get_configuration(m: MemoryDep) -> dict[str, Any]:
    return redact(m.config)


@router.post("/memories", tags=["memories"])
async def add_memory(body: MemoryCreate, m: MemoryDep, mx: MetricsDep) -> dict[str, Any]:
    if not (body.user_id or body.agent_id or body.run_id):
        raise InvalidInput("at least one of user_id, agent_id or run_id is required")
    started = time.perf_counter()
    result = await m.add(
        [msg.model_dump(exclude_none=True) for msg in body.messages],
        user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id, metadata=body.metadata,
        infer=body.infer, memory_type=body.memory_type, prompt=body.prompt,
        expiration_date=body.expiration_date, timestamp=body.timestamp,
    )
    mx.add_latency.observe(time.perf_counter() - started)
    for item in result["results"]:
        if item["event"] == "ADD":
            mx.add_total.labels(memory_type=body.memory_type or "episodic").inc()
    return result


@router.get("/memories", tags=["memories"])
async def list_memories(
    m: MemoryDep,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    top_k: Annotated[int | None, Query(ge=1, le=1000)] = None,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
    show_expired: bool = False,
) -> dict[str, Any]:
    if not (user_id or agent_id or run_id):
        raise InvalidInput("at least one of user_id, agent_id or run_id is required")
    return await m.get_all(user_id=user_id, agent_id=agent_id, run_id=run_id, top_k=top_k, limit=limit,
                           show_expired=show_expired)


@router.get("/memories/{memory_id}", tags=["memories"])
async def get_memory(memory_id: str, m: MemoryDep) -> dict[str, Any]:
    return await m.get(memory_id)


@router.post("/search", tags=["memories"])
async def search(body: SearchBody, m: MemoryDep, mx: MetricsDep) -> dict[str, Any]:
    started = time.perf_counter()
    result = await m.search(
        body.query, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id, filters=body.filters,
        limit=body.limit, top_k=body.top_k, threshold=body.threshold, explain=body.explain,
        show_expired=body.show_expired,
    )
    mx.search_latency.observe(time.perf_counter() - started)
    return result


@router.put("/memories/{memory_id}", tags=["memories"])
async def update_memory(memory_id: str, body: MemoryUpdate, m: MemoryDep, mx: MetricsDep) -> dict[str, str]:
    texts = {t for t in (body.text, body.data, body.memory) if t is not None}
    if len(texts) > 1:
        raise InvalidInput("give the new text once (text, data or memory)")
    options: dict[str, Any] = {"text": texts.pop() if texts else None, "metadata": body.metadata}
    if "expiration_date" in body.model_fields_set:
        options["expiration_date"] = body.expiration_date
    result = await m.update(memory_id, **options)
    mx.update_total.inc()
    return result


@router.get("/memories/{memory_id}/history", tags=["memories"])
async def memory_history(memory_id: str, m: MemoryDep) -> list[dict[str, Any]]:
    return await m.history(memory_id)


@router.delete("/memories/{memory_id}", tags=["memories"])
async def delete_memory(memory_id: str, m: MemoryDep, mx: MetricsDep) -> dict[str, str]:
    result = await m.delete(memory_id)
    mx.delete_total.inc()
    return result


@router.delete("/memories", tags=["memories"], dependencies=[Admin])
async def delete_all_memories(
    m: MemoryDep, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
) -> dict[str, str]:
    if not (user_id or agent_id or run_id):
        raise InvalidInput("at least one of user_id, agent_id or run_id is required")
    return await m.delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)


@router.post("/reset", tags=["admin"], dependencies=[Admin])
async def reset(m: MemoryDep) -> dict[str, str]:
    return await m.reset()
