"""mem0's self-hosted REST server, reduced to the routes the benchmarks call, for bench/mem0_side_by_side.py.

Its add and search handlers do what mem0's server/main.py (tag v2.0.18) does: sync handlers on FastAPI's thread pool
around one mem0 `Memory`, minus its auth and request-log database. Embeddings come from an OpenAI-compatible endpoint
(bench/e5_endpoint.py: jiyi's e5 model); vectors live in an embedded Qdrant on a local path. No LLM is ever called:
the benchmarks send infer=false, and the configured one points at a closed port. Run it with the python of a venv
that has mem0ai 2.2.1 (not jiyi's):

    MEM0_TELEMETRY=False MEM0_DIR=/tmp/m/home .cache/mem0-venv/bin/python bench/mem0_server.py \\
        --port 8002 --embed-url http://127.0.0.1:8001/v1 --data /tmp/m
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel

DIMS = 384  # multilingual-e5-small


class Message(BaseModel):
    role: str
    content: str


class MemoryCreate(BaseModel):
    messages: list[Message]
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] | None = None
    infer: bool | None = None


class SearchRequest(BaseModel):
    query: str
    user_id: str | None = None
    filters: dict[str, Any] | None = None
    top_k: int | None = None


def create_app(embed_url: str, data: str) -> FastAPI:
    os.environ.setdefault("MEM0_TELEMETRY", "False")  # read when mem0 is imported: no event leaves the machine
    from mem0 import Memory

    memory = Memory.from_config({
        "vector_store": {"provider": "qdrant", "config": {"path": f"{data}/qdrant", "collection_name": "memories",
                                                          "embedding_model_dims": DIMS, "on_disk": True}},
        "embedder": {"provider": "openai", "config": {"model": "e5", "api_key": "none", "embedding_dims": DIMS,
                                                      "openai_base_url": embed_url}},
        "llm": {"provider": "openai", "config": {"model": "none", "api_key": "none",
                                                 "openai_base_url": "http://127.0.0.1:9/v1"}},
        "history_db_path": f"{data}/history.db",
    })
    app = FastAPI(title="mem0 2.2.1 (benchmark routes)")
    # The routes' annotations are for the reader: response_model=None keeps FastAPI from validating mem0's answers, as
    # mem0's own server does not.

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/memories", response_model=None)
    def add_memory(request: MemoryCreate) -> JSONResponse:
        params = {k: v for k, v in request.model_dump().items() if v is not None and k != "messages"}
        return JSONResponse(memory.add(messages=[m.model_dump() for m in request.messages], **params))

    @app.post("/search", response_model=None)
    def search_memories(request: SearchRequest) -> Any:
        filters = dict(request.filters or {})
        if request.user_id:
            filters["user_id"] = request.user_id
        if not filters:
            raise HTTPException(400, "user_id required")
        params = {"top_k": request.top_k} if request.top_k else {}
        return memory.search(query=request.query, filters=filters, **params)

    return app


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--embed-url", required=True, help="base URL of an OpenAI-compatible embeddings endpoint")
    parser.add_argument("--data", required=True, help="directory for Qdrant's files and mem0's history database")
    args = parser.parse_args(argv)
    uvicorn.run(create_app(args.embed_url, args.data), host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
