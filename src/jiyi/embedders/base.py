"""The embedder contract. Vectors are float32, L2-normalized, so a dot product is the cosine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True, slots=True)
class Calibration:
    """Cosine values that mean "unrelated" and "the same thing" for this model; maps cosine to a [0, 1] relevance.

    Models differ a lot: e5 puts unrelated sentences at 0.8, USE at 0.1. A fixed threshold on raw cosine would be
    wrong for one of them, so each embedder declares its own range (measured in bench/embedders.py).
    """

    unrelated: float = 0.0
    same: float = 1.0

    def relevance(self, cosine: float) -> float:
        span = self.same - self.unrelated
        return float(min(max((cosine - self.unrelated) / span, 0.0), 1.0)) if span > 0 else 0.0


@runtime_checkable
class Embedder(Protocol):
    model_id: str  # stored with the vectors; a store refuses vectors from another model
    dims: int
    calibration: Calibration

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dims) float32, rows L2-normalized."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dims,) float32, L2-normalized."""
        ...


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
