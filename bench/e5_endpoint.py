"""An OpenAI-compatible `/v1/embeddings` endpoint over jiyi's bundled e5 model, so that another memory server (mem0 in
bench/mem0_side_by_side.py) embeds with the very model jiyi uses. Run it with the python of a venv where jiyi is
installed:

    .venv/bin/python bench/e5_endpoint.py --port 8001      # then base_url http://127.0.0.1:8001/v1, 384 dimensions

Every input is embedded as a passage: the OpenAI protocol does not say whether a text is a query or a document.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

from jiyi.embedders import build_embedder


class EmbeddingRequest(BaseModel):
    input: str | list[str]
    model: str = "e5"
    dimensions: int | None = None  # accepted and ignored: e5 has 384
    encoding_format: str | None = None


def create_app(embedder_spec: str = "e5") -> FastAPI:
    embedder = build_embedder(embedder_spec)
    app = FastAPI(title=f"{embedder_spec} embeddings")

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    # Sync: FastAPI runs it on its thread pool; the e5 embedder queues every call on its one model thread anyway.
    @app.post("/v1/embeddings", response_model=None)  # no validation pass over 384 floats a text
    def embeddings(request: EmbeddingRequest) -> dict[str, object]:
        texts = [request.input] if isinstance(request.input, str) else request.input
        vectors = embedder.embed_documents(texts)
        return {"object": "list", "model": request.model, "usage": {"prompt_tokens": 0, "total_tokens": 0},
                "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]}

    return app


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--embedder", default="e5", help="a jiyi embedder spec (default e5)")
    args = parser.parse_args(argv)
    uvicorn.run(create_app(args.embedder), host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
