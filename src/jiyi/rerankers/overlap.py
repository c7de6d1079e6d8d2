"""A deterministic lexical reranker: the offline stand-in for a cross-encoder, for tests, demos and the fake server.
It is not a quality reranker; it scores the share of the query's terms a document contains."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_WORD = re.compile(r"[^\W_]+")


def overlap_terms(text: str) -> set[str]:
    """Lower-cased words for alphabetic text, character bigrams for CJK runs (a lone character stands for itself)."""
    text = unicodedata.normalize("NFKC", text).lower()
    terms: set[str] = set()
    for run in _CJK_RUN.findall(text):
        terms.update(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    terms.update(_WORD.findall(_CJK_RUN.sub(" ", text)))
    return terms


def overlap_score(query: str, document: str) -> float:
    """The share of the query's terms found in the document, in [0, 1]."""
    wanted = overlap_terms(query)
    if not wanted:
        return 0.0
    return len(wanted & overlap_terms(document)) / len(wanted)


class OverlapReranker:
    model_id = "overlap"

    async def rerank(self, query: str, documents: Sequence[str], *, timeout: float | None = None) -> list[float]:
        return [overlap_score(query, document) for document in documents]

    async def aclose(self) -> None:
        return None
