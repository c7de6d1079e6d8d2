"""A deterministic, dependency-free embedder for tests: hashed character n-grams and words.

Not a toy random vector: texts that share words or characters get similar vectors, so tests of ranking, fusion and
de-duplication mean something, and every run gives the same numbers.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence

import numpy as np

from jiyi.embedders.base import Calibration, l2_normalize
from jiyi.text import cjk_chars, segment


class HashingEmbedder:
    calibration = Calibration(unrelated=0.05, same=0.9)
    max_input_chars = 10_000  # 10,000 Chinese characters take ~40 ms

    def __init__(self, dims: int = 256) -> None:
        self.dims = dims
        self.model_id = f"hashing:v1-{dims}"

    def _features(self, text: str) -> list[str]:
        words = segment(text)
        chars = cjk_chars(text)
        bigrams = [a + b for a, b in itertools.pairwise(chars)]
        return [f"w:{w}" for w in words] + [f"c:{c}" for c in chars] + [f"b:{b}" for b in bigrams]

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dims, dtype=np.float32)
        for feature in self._features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dims
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[index] += sign
        if not vec.any():
            vec[0] = 1.0  # an empty or all-stop-word text still gets a valid unit vector
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return l2_normalize(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return l2_normalize(self._vector(text))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_documents(texts)  # queries and passages are embedded alike
