"""Hybrid recall: vector, keyword, rules and graph paths in one scope, fused (fusion.py), then weighed (ranking.py).

- vector: exact cosine search over the scope, plus the scope's core and system memories, which are always eligible
  however many other memories crowd the candidate pool;
- keyword: BM25 over segmented text (jiyi/text.py), searching with the informative words of the query;
- rules: a request for a recommendation or advice brings the user's preferences and constraints, a question about
  one of the user's attributes (老家, where do I live) the memories holding it (core/intent.py);
- graph: a question naming an entity of the user's life (Arjun, 表姐, my brother's girlfriend) brings its memories
  and the memories behind its relations (recall_by_graph; the store's EntityStore port).

A candidate said right next to a good match gains from it (neighbour_support): an answer is often split over two
turns.

The paths run one after the other in one worker thread: on a 2-core machine running them in parallel was slower
(they share the store's lock, and a second thread competes with the embedder's own threads; bench/scale.py).
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache, lru_cache

import numpy as np

from jiyi.capability import CapabilityCheck
from jiyi.core.fusion import PathHit, fuse, fused_scores
from jiyi.core.graph_recall import asked_entities
from jiyi.core.intent import (
    CONSTRAINT_FILTER,
    CONSTRAINT_TERMS,
    asked_attributes,
    asks_about_now,
    asks_about_past_chats,
    asks_for_advice,
    names_what_advice_is_for,
)
from jiyi.core.lexicon import Lexicon, WordSet, lexicon
from jiyi.core.ranking import RankingWeights
from jiyi.core.speakers import other_speakers
from jiyi.embedders.base import Calibration, Embedder
from jiyi.filters import Logic, Node, matches, parse_filters
from jiyi.records import Category, MemoryRecord, Scope, SearchHit, utcnow
from jiyi.stores.base import MemoryStore, ScoredId
from jiyi.stores.entities import EntityStore
from jiyi.text import analyze_for_index, has_cjk, normalize, query_terms

# A vector hit that shares nothing measurable with the query still ranks, just below every real match.
MIN_VECTOR_RELEVANCE = 0.01
COMMON_WORD_SHARE = 0.1
COMMON_WORDS_MIN_STORE = 200
LONG_QUERY_TERMS = 10  # a query this long is a context query, not a question
CORE_FILTER: Node | None = parse_filters({"jiyi.category": {"in": ["core", "system"]}})
MESSAGES: Node | None = parse_filters({"jiyi.category": "message"})
NOT_MESSAGES: Node | None = parse_filters({"jiyi.category": {"ne": "message"}})
MEASURED_PATHS = ("vector", "keyword")  # the paths whose relevance is measured against the query
# The lexicon's concepts (core/lexicon.json) whose words state what advice must respect: an allergy, an illness, an
# injury, a diet, a medication, a pregnancy ("我吃虾会起疹子", "sprained my wrist", "I'm officially prediabetic").
CONSTRAINT_CONCEPTS = ("allergy", "illness", "injury", "diet", "medication", "pregnancy")


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    ranking: RankingWeights = field(default_factory=RankingWeights)
    # The rules path adds to a score without measuring relevance: it lifts a preference above unrelated memories,
    # not above a memory that really matches the query.
    path_weights: dict[str, float] = field(default_factory=lambda: {"vector": 1.0, "keyword": 1.0, "rules": 0.6,
                                                                    "graph": 0.6})
    rule_relevance: float = 0.5  # how relevant a preference or constraint is to a request for advice, by rule
    attribute_relevance: float = 0.8  # how relevant a memory holding the asked-for attribute is ("我老家是哪里的？")
    rule_limit: int = 8
    # The graph path (recall_by_graph): the memories of the entities a question names, and of the ones a chained
    # question reaches (those most relevant: "my brother's girlfriend" asks about her, not him).
    graph_limit: int = 10
    graph_relevance: float = 0.5
    graph_named_share: float = 0.8
    # An episode summary's share of its score, unless the query is about past conversations (intent.py).
    episode_weight: float = 0.7
    # A message kept as evidence (Category.MESSAGE) weighs a little less than a fact as relevant: a fact is the
    # cleaner answer, the message the fallback where no fact holds what was asked.
    message_weight: float = 0.9
    # A question about now ("最近…怎么样", "do I still…"): a candidate's score keeps (1 - now_weight) of itself plus
    # now_weight x its recency relative to the newest candidate (halved every now_half_life_days older).
    now_weight: float = 0.3
    now_half_life_days: float = 7.0
    core_limit: int = 20
    # A memory that only asks ("How did the game go?") keeps this share of its score: questions crowded the top 10 of
    # LoCoMo (27 % of the places, 4 % of them evidence). Their match still lends support to the answer next to them.
    question_weight: float = 0.8
    # A candidate said next to another candidate gains this share of its neighbour's match (neighbour_support);
    # messages further apart than the gap are different conversations.
    neighbour_weight: float = 0.3
    neighbour_gap_seconds: float = 1800.0
    # A question that names some of the candidates' speakers ("What has Melanie painted?"): the words of a speaker
    # it does not name keep this share of their score (core/speakers.py).
    other_speaker_weight: float = 0.8


def inverse_document_frequencies(frequencies: dict[str, int], total: int, terms: Sequence[str]) -> dict[str, float]:
    """BM25's IDF: always > 0, highest for words no memory has."""
    idf = {}
    for term in terms:
        df = frequencies.get(term, 0)
        idf[term] = math.log(1 + (max(total - df, 0) + 0.5) / (df + 0.5))
    return idf


@lru_cache(maxsize=50_000)
def _indexed_words(content: str) -> tuple[str, ...]:
    # The same memories come back as candidates search after search: segment each once. A tuple, not a set: a
    # memory has a dozen words, and the garbage collector stops tracking a tuple of strings, where 50,000 cached
    # sets made each full collection a ~28 ms pause in the middle of some search.
    return tuple(dict.fromkeys(analyze_for_index(content).terms.split()))


@lru_cache(maxsize=50_000)
def _normalized(content: str) -> str:
    # A string: untracked by the garbage collector, like _indexed_words' tuples.
    return normalize(content)


@cache
def _constraint_words() -> WordSet:
    return lexicon().words_of(CONSTRAINT_CONCEPTS)


@lru_cache(maxsize=50_000)
def states_a_constraint(content: str) -> bool:
    """Whether a memory speaks of something advice must respect: a word of the lexicon's CONSTRAINT_CONCEPTS."""
    return _constraint_words().held_by(_indexed_words(content), _normalized(content))


def keyword_relevance(terms: Sequence[str], idf: dict[str, float], record: MemoryRecord,
                      reach: dict[str, dict[str, float]] | None = None) -> float:
    """How much the query and the memory share, IDF-weighted: an absolute measure, unlike BM25's raw score.
    Weighting matters: sharing "like" or "去" with a memory says little, sharing "Jesica" or "失眠" a lot.

    The share of the query's words found in the memory (a question that the memory answers); for a long query, the
    larger of that and the share of the memory's words found in the query (a context query that talks about the
    memory among other things covers few of its own words). `idf` must then cover the memory's words too; an unknown
    word weighs 1."""
    return KeywordRelevance(terms, idf)(record.content)


class KeywordRelevance:
    """keyword_relevance() for one query, to the last bit: what depends on the query alone (each word's weight, whether
    it is Chinese, their sum and least) is worked out once, not for each of the ~30 keyword candidates of a search."""

    __slots__ = ("_floor", "_idf", "_long", "_query_words", "_terms", "_total", "_with_text")

    def __init__(self, terms: Sequence[str], idf: dict[str, float]) -> None:
        weights = [idf.get(t, 1.0) for t in terms]
        self._terms = [(t, w, has_cjk(t)) for t, w in zip(terms, weights, strict=True)]
        self._with_text = any(cjk for _, _, cjk in self._terms)  # only a Chinese word is looked for in the text
        self._total = sum(weights)
        self._floor = min(weights) if weights else 0.0
        self._long = len(terms) >= LONG_QUERY_TERMS
        self._query_words = set(terms)
        self._idf = idf

    def __call__(self, content: str) -> float:
        if not self._terms:
            return 0.0
        words = _indexed_words(content)
        text = _normalized(content) if self._with_text else ""
        found = [w for t, w, cjk in self._terms if t in words or (cjk and t in text)]
        # The keyword index matched at least one word, even where this check cannot see it.
        of_query = max(sum(found), self._floor) / self._total
        if not self._long:
            return of_query
        idf = self._idf
        memory_weights = {w: idf.get(w, 1.0) for w in words}
        shared = sum(weight for word, weight in memory_weights.items() if word in self._query_words)
        of_memory = shared / sum(memory_weights.values()) if memory_weights else 0.0
        return max(of_query, of_memory)


def _held(term: str, words: Sequence[str], text: str, reach: dict[str, dict[str, float]] | None) -> float:
    """1 when the memory holds the query word, else the best credit of a word the query word reaches that it holds."""
    if term in words or (has_cjk(term) and term in text):
        return 1.0
    met = reach.get(term) if reach else None
    if not met:
        return 0.0
    return max((credit for word, credit in met.items() if Lexicon.holds(word, words, text)), default=0.0)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    scope: Scope
    top_k: int = 20
    where: Node | None = None
    threshold: float | None = None
    include_expired: bool = False
    explain: bool = False
    rules: bool = True  # let a request for advice bring preferences and constraints
    now: datetime | None = None  # for retention and recency; the present by default


@dataclass(frozen=True, slots=True)
class PathResult:
    hits: list[ScoredId]
    elapsed_ms: float
    terms: tuple[str, ...] = ()
    idf: dict[str, float] = field(default_factory=dict)
    embed_ms: float = 0.0
    query_vector: np.ndarray | None = None
    reach: dict[str, dict[str, float]] = field(default_factory=dict)  # query word -> words it meets (lexicon)
    # The hits' records where the path read them (the graph path's, to see which fit): fusion does not read them again.
    records: dict[str, MemoryRecord] = field(default_factory=dict)


@dataclass(slots=True)
class Retrieval:
    hits: list[SearchHit]
    timings_ms: dict[str, float]
    paths: dict[str, int] = field(default_factory=dict)  # candidates per path


def _and(*nodes: Node | None) -> Node | None:
    present = tuple(n for n in nodes if n is not None)
    if len(present) > 1:
        return Logic("AND", present)
    return present[0] if present else None


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


def recall_by_vector(store: MemoryStore, embedder: Embedder, request: SearchRequest, pool: int,
                     core_limit: int = 0, query_vector: np.ndarray | None = None) -> PathResult:
    """`query_vector`: the query's, when the caller embedded it already (the read path does, batched)."""
    started = time.perf_counter()
    if query_vector is None:
        query_vector = embedder.embed_query(request.query)
    embedded = time.perf_counter()
    # Memories and the messages kept as evidence fill pools of their own: the messages are as many as the turns and
    # would otherwise push the facts extracted from them out of the candidates.
    hits = store.vector_search(request.scope, query_vector, pool, _and(NOT_MESSAGES, request.where),
                               request.include_expired)
    if core_limit and len(hits) == pool:  # a full pool may have crowded core memories out
        hits += store.vector_search(request.scope, query_vector, core_limit, _and(CORE_FILTER, request.where),
                                    request.include_expired)
    hits += store.vector_search(request.scope, query_vector, pool, _and(MESSAGES, request.where),
                                request.include_expired)
    hits = sorted({h.memory_id: h for h in hits}.values(), key=lambda h: -h.score)
    return PathResult(hits, _ms(embedded), embed_ms=(embedded - started) * 1000, query_vector=query_vector)


def recall_by_keyword(store: MemoryStore, request: SearchRequest, pool: int) -> PathResult:
    started = time.perf_counter()
    terms = query_terms(request.query)
    reach = lexicon().reach(request.query, terms)
    asked = set(terms)
    met = [w for w in dict.fromkeys(itertools.chain.from_iterable(reach.values())) if w not in asked]
    frequencies, total = store.document_frequencies([*terms, *met])
    # Words in a large share of all memories (去, 花, "like") cost the most to match and say the least; search with the
    # others when there are any. They still count, lightly, in keyword_relevance.
    # A word the lexicon reaches is searched for only where memories hold it as a word: a head word reaches its whole
    # concept (猫 医生: ~300 words, most in no memory), and each one costs the index a lookup, a Chinese one a phrase
    # over its characters - keyword search took 13.7 ms instead of 2.3 on bench/throughput.py's store. (The
    # question's own words are still matched as characters too: jieba may cut the memory differently.)
    informative, met_informative = terms, [w for w in met if frequencies.get(w, 0) > 0]
    if total >= COMMON_WORDS_MIN_STORE:  # in a small store a word in two memories is "common" and still the key one
        informative = [t for t in terms if frequencies.get(t, 0) <= COMMON_WORD_SHARE * total] or terms
        met_informative = [w for w in met_informative if frequencies[w] <= COMMON_WORD_SHARE * total]
    hits = store.keyword_search(request.scope, [*informative, *met_informative], pool, request.where,
                                request.include_expired)
    idf = inverse_document_frequencies(frequencies, total, terms)
    return PathResult(hits, _ms(started), tuple(terms), idf, reach=reach)


def recall_by_rules(store: MemoryStore, request: SearchRequest, query_vector: np.ndarray | None,
                    settings: RetrievalSettings) -> PathResult:
    """Memories a rule says the query needs, each hit's score being the relevance the rule gives it:
    - a question about one of the user's attributes (老家, where do I live): the memories that hold it — tagged ones
      nearest the query first, then memories that state it in so many words (stored verbatim, without tags);
    - a request for advice: the user's preferences and constraints, found the same two ways."""
    started = time.perf_counter()
    limit = settings.rule_limit
    if not request.rules or limit <= 0:
        return PathResult([], 0.0)
    wanted: list[tuple[Node | None, tuple[str, ...], float]] = [
        (attribute.tag_filter, attribute.stated_by, settings.attribute_relevance)
        for attribute in asked_attributes(request.query)]
    if asks_for_advice(request.query):
        wanted.append((CONSTRAINT_FILTER, CONSTRAINT_TERMS, settings.rule_relevance))
    found: dict[str, float] = {}
    for tagged, words, relevance in wanted:
        hits: list[ScoredId] = []
        if query_vector is not None:
            hits = store.vector_search(request.scope, query_vector, limit, _and(tagged, request.where),
                                       request.include_expired)
        hits += store.keyword_search(request.scope, words, limit, request.where, request.include_expired)
        for hit in hits:
            if len(found) >= limit * len(wanted):
                break
            found[hit.memory_id] = max(found.get(hit.memory_id, 0.0), relevance)
    ranked = sorted(found.items(), key=lambda item: -item[1])  # stable: nearest first within one relevance
    return PathResult([ScoredId(memory_id, relevance) for memory_id, relevance in ranked], _ms(started))


_keeps_entities = CapabilityCheck[EntityStore](EntityStore)  # asked on every search


def recall_by_graph(store: MemoryStore, request: SearchRequest, settings: RetrievalSettings) -> PathResult:
    """The memories of the entities a question names (by name, alias or kinship term) and the memories behind their
    relations, one hop; a chained question ("my brother's girlfriend") reaches the entities it chains to as well
    (core/graph_recall.py). Each hit's score is the relevance the graph gives it, newest memories first."""
    started = time.perf_counter()
    user_id = request.scope.user_id
    entities = store if _keeps_entities(store) else None
    if settings.graph_limit <= 0 or not user_id or entities is None:
        return PathResult([], 0.0)
    asked = asked_entities(request.query, entities.current_graph(user_id))
    found: dict[str, float] = {}
    for entity_ids, relevance in ((asked.reached, settings.graph_relevance),
                                  (asked.named, settings.graph_relevance * settings.graph_named_share)):
        if entity_ids:
            for memory_id in entities.entity_memories(user_id, entity_ids, settings.graph_limit):
                found.setdefault(memory_id, relevance)
    # The graph is the user's; the search may be narrower (an agent's or a run's memories, a filter, live ones only),
    # as the other paths' store queries are: what does not fit is not a candidate.
    records = store.get_many(list(found)) if found else {}
    now = request.now or utcnow()
    fits = {memory_id for memory_id, record in records.items()
            if in_scope(record.scope, request.scope) and matches(request.where, record)
            and (request.include_expired or record.expiration_date is None or record.expiration_date > now)}
    ranked = sorted(((memory_id, relevance) for memory_id, relevance in found.items() if memory_id in fits),
                    key=lambda item: -item[1])  # stable: newest first within one relevance
    return PathResult([ScoredId(memory_id, relevance) for memory_id, relevance in ranked], _ms(started),
                      records={memory_id: records[memory_id] for memory_id, _ in ranked})


def in_scope(scope: Scope, asked: Scope) -> bool:
    """Whether a memory of `scope` is in the scope a search asked for: each id it gives must be the memory's (as the
    stores' scope clauses read it)."""
    return all(getattr(scope, key) == value for key, value in asked.as_dict().items())


def only_asks(text: str) -> bool:
    """A message that ends in a question: it asks, and holds little that answers another question."""
    return text.rstrip().endswith(("?", "？"))


def candidate_pool(top_k: int) -> int:
    return max(top_k * 3, 30)


def fuse_paths(store: MemoryStore, embedder: Embedder, request: SearchRequest, paths: dict[str, PathResult],
               settings: RetrievalSettings) -> list[SearchHit]:
    """Every candidate of every path, best first (not cut to top_k)."""
    ids = list(dict.fromkeys(h.memory_id for result in paths.values() for h in result.hits))
    # Every candidate's record, in the order of `ids` (as get_many gives them): those a path read already, the others
    # read now.
    known = {memory_id: record for result in paths.values() for memory_id, record in result.records.items()}
    missing = [memory_id for memory_id in ids if memory_id not in known]
    read = store.get_many(missing) if missing else {}
    records = {memory_id: record for memory_id in ids
               if (record := known[memory_id] if memory_id in known else read.get(memory_id)) is not None}
    calibration = embedder.calibration
    keyword = paths["keyword"]
    idf = dict(keyword.idf)
    if len(keyword.terms) >= LONG_QUERY_TERMS:
        # keyword_relevance weighs the memories' own words too: look up the ones the query did not bring.
        unknown = {w for h in keyword.hits if h.memory_id in records
                   for w in _indexed_words(records[h.memory_id].content)} - set(keyword.idf)
        if unknown:
            frequencies, total = store.document_frequencies(sorted(unknown))
            idf.update(inverse_document_frequencies(frequencies, total, sorted(unknown)))

    measure = KeywordRelevance(keyword.terms, idf)
    cosine_relevance = calibration.relevance

    def path_hits(path: str, hits: list[ScoredId]) -> list[PathHit]:
        if path == "vector":
            return [PathHit(h.memory_id, h.score, max(cosine_relevance(h.score), MIN_VECTOR_RELEVANCE))
                    for h in hits if h.memory_id in records]
        if path == "keyword":
            return [PathHit(h.memory_id, h.score, measure(records[h.memory_id].content))
                    for h in hits if h.memory_id in records]
        return [PathHit(h.memory_id, h.score, h.score) for h in hits if h.memory_id in records]  # the rule's own

    ranked = {path: path_hits(path, result.hits) for path, result in paths.items()}
    if (request.rules and settings.rule_limit > 0 and asks_for_advice(request.query)
            and names_what_advice_is_for(request.query)):
        ranked["rules"] = _with_constraints(ranked.get("rules", []), records, settings)
    # Scores are normalised by the measured paths only: a rule adds to a memory's score, never dilutes the others.
    norm = sum(settings.path_weights.get(p, 1.0) for p in MEASURED_PATHS)
    now = request.now or utcnow()
    episodes_weigh_less = not asks_about_past_chats(request.query)
    # A memory's time as the present sees it: a plan's event still to come ("we fly to Dallas on May 10") is not
    # newer than what was said today, and taken as the newest it made every other candidate weeks old.
    newest = min(max(((r.event_time or r.created_at) for r in records.values()), default=now), now) \
        if asks_about_now(request.query) else None
    measured = fused_scores({p: ranked[p] for p in MEASURED_PATHS if p in ranked}, settings.path_weights, norm=norm)
    gated = _relevance_in_the_query_language(ranked, calibration, request.query, settings, norm)
    support = neighbour_support(store, records, measured, settings.neighbour_weight, settings.neighbour_gap_seconds)
    others = other_speakers(request.query, records) if settings.other_speaker_weight != 1.0 else set()
    # Each path's rank and scores per candidate are for `explain` alone: without it, the fused scores (the same sums
    # in the same order, so the same order) and the rules' own scores. fuse()'s rounded details took ~30 % of this
    # function's time, some 60 candidates a search.
    if request.explain:
        candidates = [(f.memory_id, f.score, f.paths) for f in fuse(ranked, settings.path_weights, norm=norm)]
        ruled = {memory_id: paths["rules"]["score"] for memory_id, _, paths in candidates if "rules" in paths}
    else:
        candidates = [(memory_id, score, _NO_DETAILS) for memory_id, score
                      in fused_scores(ranked, settings.path_weights, norm=norm).items()]
        ruled = {hit.memory_id: round(hit.raw_score, 6) for hit in ranked.get("rules", ())}
    hits = []
    explain = request.explain
    ranking = settings.ranking
    weighs_questions = settings.question_weight != 1.0
    factors: dict[str, float] = {}
    for memory_id, fused_score, fused_paths in candidates:
        record = records[memory_id]
        lift = support.get(memory_id, 0.0)
        # The factors of each weight are for `explain` alone: without it, the same score without their dict.
        if explain:
            score, factors = ranking.weigh(min(fused_score + lift, 1.0), record, now)
        else:
            score = ranking.weighed(min(fused_score + lift, 1.0), record, now)
        category = record.category
        if episodes_weigh_less and category is Category.EPISODE:
            score *= settings.episode_weight
            if explain:
                factors["episode"] = settings.episode_weight
        elif category is Category.MESSAGE:
            score *= settings.message_weight
            if explain:
                factors["message"] = settings.message_weight
        if weighs_questions and only_asks(record.content):
            score *= settings.question_weight
            if explain:
                factors["question"] = settings.question_weight
        if memory_id in others:
            score *= settings.other_speaker_weight
            if explain:
                factors["other_speaker"] = settings.other_speaker_weight
        if newest is not None:
            older_days = max((newest - (record.event_time or record.created_at)).total_seconds() / 86400, 0.0)
            newer = 0.5 ** (older_days / settings.now_half_life_days)
            score *= 1 - settings.now_weight * (1 - newer)
            if explain:
                factors["now"] = round(newer, 4)
        # Relevance is the fused score itself: on e5 a memory's cosine alone says little (an unrelated Chinese
        # sentence can score 0.87), agreement between the paths says more (bench/zh_retrieval.py). A memory a rule
        # brought (a preference for a request for advice) counts as relevant as the rule says, whatever its similarity.
        relevance = max(gated.get(memory_id, fused_score), ruled.get(memory_id, 0.0))
        details: dict[str, object] = {}
        if explain:
            details = {"fused": round(fused_score, 6), "paths": fused_paths,
                       "weights": {k: round(v, 4) for k, v in factors.items()}}
            if lift:
                details["neighbour"] = round(lift, 6)
        hits.append(SearchHit(record, round(score, 6), details, round(relevance, 6)))
    hits.sort(key=lambda h: (-h.score, h.record.id))
    return hits


_NO_DETAILS: dict[str, dict[str, float]] = {}  # never changed: read only when `explain` is asked


def _with_constraints(rules: list[PathHit], records: dict[str, MemoryRecord],
                      settings: RetrievalSettings) -> list[PathHit]:
    """The rules path's hits for a request for advice, with the candidates that state a constraint (an allergy, an
    illness, an injury: states_a_constraint) as relevant as a constraint the rules found, up to `rule_limit` more.
    Extraction tags a constraint "health" only when it knows the word ("我吃虾会起疹子" was "other") and the
    message it came from carries no tag at all; the question ("今晚想点个外卖") shares no word with either."""
    brought = {hit.memory_id for hit in rules}
    # The assistant's replies kept as evidence state none of the user's constraints, whatever words they use
    # ("一天一包对身体负担确实不小哦", "别感冒啦").
    stated = [PathHit(memory_id, settings.rule_relevance, settings.rule_relevance)
              for memory_id, record in records.items()
              if memory_id not in brought and replied_to(record) is None and states_a_constraint(record.content)]
    stated = stated[:settings.rule_limit]
    if not stated:
        return rules
    return sorted([*rules, *stated], key=lambda hit: -hit.relevance)  # stable: the rules' own first within a level


def _relevance_in_the_query_language(ranked: dict[str, list[PathHit]], calibration: Calibration, query: str,
                                     settings: RetrievalSettings, norm: float) -> dict[str, float]:
    """Each candidate's fused score with its cosine read in the query's own language's range, where the model has
    one (Calibration.for_query): what `relevance`, and /context's bar, read. The ranking keeps the one range it
    was weighed with; read in the English range, English rankings on LoCoMo lost 3 points of any@10 (the vector
    path then outweighed the keyword path) while /context's bar became fair to English (bench/reminders.py)."""
    own = calibration.for_query(query)
    if own is calibration or "vector" not in ranked:
        return {}
    vector = [PathHit(h.memory_id, h.raw_score, max(own.relevance(h.raw_score), MIN_VECTOR_RELEVANCE))
              for h in ranked["vector"]]  # built, not dataclasses.replace()d: a third of the time, 30 hits a search
    return fused_scores({**ranked, "vector": vector}, settings.path_weights, norm=norm)


REPLY_TAG = "in-reply-to:"  # on an assistant's reply kept as evidence: the user message it answers (write_path)


def replied_to(record: MemoryRecord) -> str | None:
    """The id of the user message an assistant's reply kept as evidence answers (its REPLY_TAG), or None."""
    return next((tag[len(REPLY_TAG):] for tag in record.tags if tag.startswith(REPLY_TAG)), None)


def _stood_for(record: MemoryRecord, covered: set[str], asked: frozenset[str] | None) -> bool:
    """A message a returned fact came from, or an assistant's reply to one that shares no word with the question."""
    if not covered.isdisjoint(ref.message_id for ref in record.provenance):
        return True
    return asked is not None and replied_to(record) in covered and asked.isdisjoint(
        analyze_for_index(record.content).terms.split())


def without_covered_messages(ranked: Sequence[SearchHit], top_k: int, question: str | None = None) -> list[SearchHit]:
    """The best `top_k` hits without evidence messages that a fact already stands for:
    - a message a returned fact came from is left out (the fact says it), and so is the assistant's reply to it when
      it shares no word with the `question`: found through the message it answers ("我弟弟下周结婚" → "恭喜！"), it
      says nothing more alone ("oh no, is the plant alright?" stays for "is the plant alright?");
    - a message that a fact came from *and something said later changed or repeated* (the fact cites a newer message
      too) is replaced by that fact where the message ranks, even when the fact alone would rank lower: the old words
      of a superseded habit must not outrank what replaced them ("I cycle to work every day" → "the doctor says no
      cycling for six weeks").
    A message no fact covers stays: it is what extraction missed. (Replacing every covered message by its fact, not
    only the superseded ones, cost 2.5 points of LoCoMo any@10: a fact from a long turn is a poorer match than the
    turn itself.) A message saying word for word what a message above it said is left out."""
    superseded: dict[str, SearchHit] = {}
    for hit in ranked:  # best first: each message is replaced by the best fact that supersedes it
        # (A fact from one message supersedes none: its only source is its newest.)
        if len(hit.record.provenance) > 1 and hit.record.category not in (Category.MESSAGE, Category.EPISODE):
            # a summary stands for no one message
            newest = max((ref.created_at for ref in hit.record.provenance if ref.created_at), default=None)
            for ref in hit.record.provenance:
                if newest is not None and ref.created_at is not None and ref.created_at < newest:
                    superseded.setdefault(ref.message_id, hit)
    selected: list[SearchHit] = []
    covered: set[str] = set()
    taken: set[str] = set()
    asked = frozenset(query_terms(question)) if question is not None else None
    said: set[str] = set()  # the words of the messages kept: "Nice!" said on ten days is returned once
    for hit in ranked:
        if hit.record.category is Category.MESSAGE:
            if _stood_for(hit.record, covered, asked):
                continue
            words = normalize(hit.record.content)
            if words in said:
                continue
            said.add(words)
            fact = next((superseded[r.message_id] for r in hit.record.provenance if r.message_id in superseded), None)
            if fact is not None:
                if fact.record.id in taken:
                    continue
                hit = replace(fact, score=max(fact.score, hit.score),
                              details={**fact.details, "stands_for": hit.record.id} if fact.details else {})
        if hit.record.category is not Category.MESSAGE:
            if hit.record.id in taken:
                continue
            if hit.record.category is not Category.EPISODE:
                sources = {ref.message_id for ref in hit.record.provenance}
                if sources - covered:
                    covered |= sources
                    selected = [h for h in selected if h.record.category is not Category.MESSAGE
                                or not _stood_for(h.record, covered, asked)]
        taken.add(hit.record.id)
        selected.append(hit)
        if len(selected) >= top_k:
            break
    return selected


def neighbour_support(store: MemoryStore, records: dict[str, MemoryRecord], matches: dict[str, float],
                      weight: float, gap_seconds: float) -> dict[str, float]:
    """What each candidate gains from its neighbours in the conversation (memory id -> lift; absent: none).

    A candidate whose source message was said just before or just after another candidate's, in the same scope and
    within `gap_seconds`, gains `weight` x how far the best such neighbour's match (`matches`: the measured paths'
    fused score) stands above the median candidate's, at most its own match. The lift is added to the candidate's
    own match, before its retention and recency weigh it.

    Why: what answers a question is often split over two turns — "did you go to the support group?" / "yes,
    yesterday, it was so powerful" — and the turn that holds the answer is not always the one that matches the
    question best. A turn next to a good match is more likely to be on the subject than an equally scored turn on
    its own. Only the measured paths speak for a neighbour, only above the typical candidate, and support only
    amplifies what the candidate matches itself: messages stored one after the other are not always a conversation
    (a client importing memories one add at a time), and in a small store every memory is a candidate — an allergy
    the advice rule brought, stored right after "我昨晚又失眠了", must not climb above it for "失眠怎么办".
    LoCoMo dev any@10 (bench/locomo.py, e5): see the README."""
    if weight <= 0 or len(matches) < 2:
        return {}
    holders: dict[str, list[str]] = {}  # source message id -> the candidates that came from it
    said_at: dict[str, datetime | None] = {}
    for memory_id in matches:
        record = records[memory_id]
        if record.category is Category.EPISODE:  # a summary of a stretch has no one place in the conversation
            continue
        for ref in record.provenance:
            holders.setdefault(ref.message_id, []).append(memory_id)
            said_at.setdefault(ref.message_id, ref.created_at)
    if len(holders) < 2:
        return {}
    baseline = statistics.median(matches.values())
    support: dict[str, float] = {}
    for message, before in store.previous_messages(list(holders)).items():
        if before not in holders:
            continue
        first, second = said_at.get(before), said_at[message]
        if first is not None and second is not None and abs((second - first).total_seconds()) > gap_seconds:
            continue  # consecutive in the log, but another conversation
        for one, other in ((holders[message], holders[before]), (holders[before], holders[message])):
            above = max(matches[i] for i in other) - baseline
            if above <= 0:
                continue
            for memory_id in one:  # support amplifies a match, never makes one: at most doubles it
                lift = min(weight * above, matches[memory_id])
                support[memory_id] = max(support.get(memory_id, 0.0), lift)
    return support


def hybrid_search(store: MemoryStore, embedder: Embedder, request: SearchRequest,
                  settings: RetrievalSettings | None = None, *, pool: int | None = None,
                  query_vector: np.ndarray | None = None) -> Retrieval:
    """The best `request.top_k` memories above `request.threshold`. `pool`: how many candidates each path brings
    (a reranker asks for more than it returns). `query_vector`: the query's, if embedded already."""
    settings = settings or RetrievalSettings()
    pool = pool or candidate_pool(request.top_k)
    vector = recall_by_vector(store, embedder, request, pool, settings.core_limit, query_vector)
    keyword = recall_by_keyword(store, request, pool)
    rules = recall_by_rules(store, request, vector.query_vector, settings)
    graph = recall_by_graph(store, request, settings)
    started = time.perf_counter()
    paths = {"vector": vector, "keyword": keyword, "rules": rules, "graph": graph}
    ranked = fuse_paths(store, embedder, request, paths, settings)
    if request.threshold is not None:
        ranked = [h for h in ranked if h.score >= request.threshold]
    ranked = without_covered_messages(ranked, request.top_k, request.query)
    timings = {"embed_ms": vector.embed_ms, "vector_ms": vector.elapsed_ms, "keyword_ms": keyword.elapsed_ms,
               "rules_ms": rules.elapsed_ms, "graph_ms": graph.elapsed_ms, "fuse_ms": _ms(started)}
    return Retrieval(ranked[: request.top_k], {k: round(v, 3) for k, v in timings.items()},
                     {name: len(result.hits) for name, result in paths.items()})
