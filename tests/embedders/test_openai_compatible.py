"""The OpenAI-compatible embeddings client against a real local server that speaks the protocol."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from jiyi import BackendUnavailable, ConfigError, Memory, build_embedder, build_store
from jiyi.embedders.hashing import HashingEmbedder
from tests.conftest import RunningServer


def embeddings_app(dims: int = 32) -> FastAPI:
    """A stand-in for OpenAI /v1/embeddings; the model name picks a behaviour, and every request is logged."""
    app = FastAPI()
    app.state.requests = []
    vectors = HashingEmbedder(dims=dims)

    @app.post("/v1/embeddings")
    async def embeddings(request: Request) -> Any:
        body = await request.json()
        app.state.requests.append({"body": body, "auth": request.headers.get("authorization")})
        model = body["model"]
        if model == "broken":
            return PlainTextResponse("upstream exploded", status_code=500)
        if model == "garbage":
            return PlainTextResponse("<html>not json</html>")
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        matrix = vectors.embed_documents(inputs) * 3.0  # unnormalized on purpose: the client must normalize
        if model == "short":
            matrix = matrix[:, : dims // 2]
        data = [{"object": "embedding", "index": i, "embedding": row.tolist()} for i, row in enumerate(matrix)]
        return JSONResponse({"object": "list", "data": list(reversed(data)), "model": model})

    return app


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, FastAPI]]:
    app = embeddings_app()
    with RunningServer(app) as server:
        yield f"{server.url}/v1", app


def test_embeds_in_order_normalized_with_the_key(endpoint: tuple[str, FastAPI]) -> None:
    url, app = endpoint
    embedder = build_embedder("openai:text-embedding-3-small", base_url=url, api_key="sk-test")
    docs = embedder.embed_documents(["a cat", "a dog", "上海"])
    expected = HashingEmbedder(dims=32).embed_documents(["a cat", "a dog", "上海"])
    assert np.allclose(docs, expected, atol=1e-5)  # order restored from `index`, rows normalized
    assert embedder.dims == 32
    assert app.state.requests[-1]["auth"] == "Bearer sk-test"
    assert "sk-test" not in repr(embedder)


def test_batches_large_inputs(endpoint: tuple[str, FastAPI]) -> None:
    url, app = endpoint
    before = len(app.state.requests)
    embedder = build_embedder("openai:m", base_url=url)
    assert embedder.embed_documents([f"text {i}" for i in range(150)]).shape == (150, 32)
    assert len(app.state.requests) - before == 3  # 64 + 64 + 22


@pytest.mark.parametrize("model, error", [("broken", BackendUnavailable), ("garbage", BackendUnavailable)])
def test_server_errors_are_backend_unavailable(endpoint: tuple[str, FastAPI], model: str, error: type) -> None:
    with pytest.raises(error, match=r"HTTP 500|unexpected body"):
        build_embedder(f"openai:{model}", base_url=endpoint[0]).embed_query("x")


def test_unreachable_server_is_backend_unavailable() -> None:
    from tests.conftest import free_port

    with pytest.raises(BackendUnavailable, match="unreachable"):
        build_embedder("openai:m", base_url=f"http://127.0.0.1:{free_port()}/v1", timeout=2).embed_query("x")


def test_dimension_mismatch_is_clear(endpoint: tuple[str, FastAPI]) -> None:
    with pytest.raises(ConfigError, match="returned 16 dimensions, configured 32"):
        build_embedder("openai:short", base_url=endpoint[0], dims=32).embed_query("x")


def test_memory_with_a_remote_embedder_learns_and_binds_the_dimension(endpoint: tuple[str, FastAPI], tmp_path) -> None:
    store = build_store(f"sqlite:///{tmp_path / 'm.db'}")
    memory = Memory(store, build_embedder("openai:m", base_url=endpoint[0]))
    memory.add("remote embeddings work", user_id="u", infer=False)
    assert store.embedding_binding() == (memory.embedder.model_id, 32)
    assert memory.search("remote embeddings", user_id="u")["results"][0]["memory"] == "remote embeddings work"
    memory.close()


def test_a_failing_embedder_keeps_the_raw_turn(endpoint: tuple[str, FastAPI], tmp_path) -> None:
    from jiyi import Scope

    store = build_store(f"sqlite:///{tmp_path / 'm.db'}")
    memory = Memory(store, build_embedder("openai:broken", base_url=endpoint[0]))
    with pytest.raises(BackendUnavailable):
        memory.add("please remember this", user_id="u", infer=False)
    assert [m.content for m in store.list_messages(Scope("u"))] == ["please remember this"]
    memory.close()


@pytest.mark.parametrize("provider, url_key", [("openai", "openai_base_url"), ("lmstudio", "lmstudio_base_url")])
def test_mem0_embedder_config_reaches_the_endpoint(
    endpoint: tuple[str, FastAPI], tmp_path, provider: str, url_key: str
) -> None:
    url, app = endpoint
    memory = Memory.from_config({
        "history_db_path": str(tmp_path / "h.db"),
        "embedder": {"provider": provider, "config": {"model": "my-model", url_key: url, "api_key": "sk-cfg",
                                                      "embedding_dims": 32}},
    })
    memory.add("configured the mem0 way", user_id="u", infer=False)
    assert app.state.requests[-1]["body"]["model"] == "my-model"
    assert app.state.requests[-1]["auth"] == "Bearer sk-cfg"
    memory.close()
