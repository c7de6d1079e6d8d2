"""mem0's categories for facts as they are written: the taxonomy's prototypes embedded once, then each fact's words and
the vector it is stored with (core/categories.py). No model call per fact: ~0.2 ms of CPU each.

A taxonomy's prototype vectors are made at its first use (mem0's: 182 short texts, seconds with e5) and kept in the
store's state under the embedder's model id, so a restart or another process on the same store does not make them
again; in memory, a bounded number of taxonomies (a project's custom_categories, each add's own) are kept.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from jiyi.core.categories import Prototypes, Taxonomy, taxonomy_for
from jiyi.embedders.base import Embedder, QueryBatching
from jiyi.stores.base import Coordination

log = logging.getLogger(__name__)

KEPT_TAXONOMIES = 32
PROTOTYPE_BATCH = 16
STATE_KEY = "categories.prototypes"


def _encode(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=np.float32).tobytes()).decode("ascii")


def _decode(text: str, shape: Sequence[int]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.float32).reshape(shape).copy()


# Prototypes depend only on the model and the taxonomy: every Categorizer of a process (a server's, a script's many
# Memory objects, a test suite's) shares those already made, so a new store does not embed mem0's 182 texts again
# (seconds with e5).
_SHARED: OrderedDict[tuple[str, str], Prototypes] = OrderedDict()
_SHARED_LOCK = threading.Lock()


def _shared(key: tuple[str, str]) -> Prototypes | None:
    with _SHARED_LOCK:
        return _SHARED.get(key)


def _share(key: tuple[str, str], prototypes: Prototypes) -> None:
    with _SHARED_LOCK:
        _SHARED[key] = prototypes
        _SHARED.move_to_end(key)
        while len(_SHARED) > KEPT_TAXONOMIES:
            _SHARED.popitem(last=False)


class Categorizer:
    def __init__(self, embedder: Embedder, store: Coordination | None = None) -> None:
        """`embedder`: the one the facts' vectors come from (its prototypes must be in the same space). `store`: where
        prototype vectors are kept across restarts (None: in this process only)."""
        self.embedder = embedder
        self.store = store
        self._kept: OrderedDict[tuple[str, str], Prototypes] = OrderedDict()
        self._lock = threading.Lock()

    def taxonomy(self, custom: Any = None) -> Taxonomy:
        return taxonomy_for(custom)

    def prepare(self, custom: Any = None) -> Taxonomy:
        """The taxonomy of `custom` (mem0's default for None) with its prototypes made: what categorize() needs."""
        taxonomy = taxonomy_for(custom)
        self.prototypes(taxonomy)
        return taxonomy

    def prototypes(self, taxonomy: Taxonomy) -> Prototypes:
        """The taxonomy's prototype vectors: from memory, from the store, or embedded now (once: a second caller
        waits for the first)."""
        key = (self.embedder.model_id, taxonomy.key)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
            found = _shared(key) or self._load(key) or self._embed(taxonomy, key)
            _share(key, found)
            self._kept[key] = found
            while len(self._kept) > KEPT_TAXONOMIES:
                self._kept.popitem(last=False)
            return found

    def categorize(self, taxonomy: Taxonomy, texts: Sequence[str], vectors: np.ndarray | None) -> list[list[str]]:
        """Each text's categories; `vectors`: the texts' stored vectors, one row each (None: by words only)."""
        if not texts:
            return []
        similarity = None
        if vectors is not None and len(vectors) == len(texts) and np.asarray(vectors).size:
            similarity = self.prototypes(taxonomy).similarity(np.asarray(vectors))
        return [taxonomy.choose(taxonomy.word_scores(text), similarity[i] if similarity is not None else None)
                for i, text in enumerate(texts)]

    def _embed(self, taxonomy: Taxonomy, key: tuple[str, str]) -> Prototypes:
        # Descriptions and examples are embedded as queries: as a question finds its answers, a category's words
        # find the facts about it (on jiyi's own examples, 0.72 of facts were placed right by the embedder alone,
        # 0.67 with the prototypes embedded as passages).
        # In small batches: a search's query, sent to the same model meanwhile, waits for one batch at most.
        texts = [text for _, text in taxonomy.prototypes]
        batches = [texts[i:i + PROTOTYPE_BATCH] for i in range(0, len(texts), PROTOTYPE_BATCH)]
        if isinstance(self.embedder, QueryBatching):
            parts = [np.asarray(self.embedder.embed_queries(batch), dtype=np.float32) for batch in batches]
        else:  # a model without query batches (a remote one): as documents, in as many requests as batches
            parts = [np.asarray(self.embedder.embed_documents(batch), dtype=np.float32) for batch in batches]
        vectors = np.concatenate(parts)
        prototypes = Prototypes.from_vectors(taxonomy, vectors)
        self._save(key, prototypes)
        return prototypes

    def _state_key(self, key: tuple[str, str]) -> str:
        return f"{STATE_KEY}:{key[0]}:{key[1]}"

    def _load(self, key: tuple[str, str]) -> Prototypes | None:
        if self.store is None:
            return None
        try:
            raw = self.store.get_state(self._state_key(key))
            if not raw:
                return None
            data = json.loads(raw)
            shape = data["shape"]
            return Prototypes(_decode(data["centroids"], shape), _decode(data["baseline"], shape[:1]))
        except Exception:  # a damaged entry is made again
            log.warning("stored category prototypes unreadable; embedding them again", exc_info=True)
            return None

    def _save(self, key: tuple[str, str], prototypes: Prototypes) -> None:
        if self.store is None:
            return
        data = {"shape": list(prototypes.centroids.shape), "centroids": _encode(prototypes.centroids),
                "baseline": _encode(prototypes.baseline)}
        try:
            self.store.set_state(self._state_key(key), json.dumps(data))
        except Exception:  # kept in memory all the same
            log.warning("could not keep category prototypes in the store", exc_info=True)
