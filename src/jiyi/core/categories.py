"""mem0's memory categories, assigned offline: which of a taxonomy's categories (mem0's fifteen, or a project's own
`custom_categories`) a fact is about.

Two signals, both cheap on the write path (the fact's vector is made for storage anyway):

- words: each category has words (English stems and phrases, Chinese words found as substrings), from its own lists
  in `categories.json` and from the concepts of the shipped lexicon (`lexicon.json`) it takes in, each with a weight.
  A custom category's words are its name's and description's, and the lexicon words those name (pets → dog, 猫…).
- the embedder: each category has prototypes (its description in English and Chinese, and a few example facts),
  embedded once as queries; a fact's similarity to a category is its mean cosine with them, less the mean for the
  other categories' prototypes (a category close to everything starts lower), then taken relative to the other
  categories (a z-score, so the model's narrow cosine range does not matter).

Words count first (a fact that says "allergic" is about health whatever the embedder thinks); the similarity, at
SIMILARITY_WEIGHT, breaks ties and decides when no word is said. A fact nothing speaks for goes to the fallback
(`misc` in mem0's taxonomy). A second category is kept when its words speak for it nearly as much as for the first,
and an `also` category (user_preferences: "likes", "prefers") whenever its words are said.

On bench/data/category_eval.json (bench/categories.py, e5): the main category right for 0.74 of the memories, one of
theirs for 0.83; words alone 0.63, the embedder alone 0.63. ~0.2 ms of CPU per fact.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from jiyi.errors import InvalidInput
from jiyi.text import has_cjk, normalize, query_terms

FALLBACK = "misc"
# How much the embedder's z-score weighs beside words (a word is worth 1) and how sure it must be to decide alone.
SIMILARITY_WEIGHT = 0.35
SIMILARITY_ALONE = 1.0
# A second category is kept when its words count at least this share of the first's, and at least one word.
SECOND_SHARE = 0.75
MAX_CATEGORIES = 3
MAX_CUSTOM = 100
# A fact about a relative ("User's sister got married") is the relative's category first, whatever happened.
SUBJECT_BONUS = 1.0
_OWNER = re.compile(r"^\s*(?:(?:the\s+)?user['’]s\s+|my\s+|用户的|我的|我(?=[\u4e00-\u9fff]))", re.IGNORECASE)
NAME = re.compile(r"^[\w][\w .&/+-]{0,63}$", re.UNICODE)
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


@dataclass(frozen=True, slots=True)
class CategoryDef:
    name: str
    description: str
    prototypes: tuple[str, ...]  # texts embedded as the category's prototypes (its descriptions, example facts)
    words: Mapping[str, float] = field(default_factory=dict)  # word (as analysed) -> weight
    also: bool = False  # given beside the main category whenever its words are said (user_preferences)
    subject: bool = False  # first when the fact is about one of its words ("User's sister …": family)


class Taxonomy:
    """The categories facts are sorted into, with their words indexed for matching. Built once per list (cached)."""

    def __init__(self, categories: Sequence[CategoryDef], fallback: str | None = FALLBACK) -> None:
        """`fallback`: the category chosen when nothing speaks for another (None when the list has none)."""
        if not categories:
            raise InvalidInput("a taxonomy needs at least one category")
        self.categories = tuple(categories)
        self.names = tuple(c.name for c in self.categories)
        self.fallback = fallback if fallback in self.names else None
        self._fallback_index = self.names.index(fallback) if fallback in self.names else -1
        self._stems: dict[str, list[tuple[int, float]]] = {}  # stem -> (category, weight)
        self._phrases: dict[str, list[tuple[tuple[str, ...], int, float]]] = {}  # first stem -> (stems, ...)
        self._cjk: dict[str, list[tuple[str, int, float]]] = {}  # first character -> (word, category, weight)
        for index, category in enumerate(self.categories):
            for word, weight in category.words.items():
                if has_cjk(word):
                    self._cjk.setdefault(word[0], []).append((word, index, weight))
                elif " " in word:
                    parts = tuple(word.split(" "))
                    self._phrases.setdefault(parts[0], []).append((parts, index, weight))
                else:
                    self._stems.setdefault(word, []).append((index, weight))
        for entries in self._cjk.values():
            entries.sort(key=lambda entry: -len(entry[0]))
        self._subjects = [i for i, c in enumerate(self.categories) if c.subject]
        # identifies the prototypes: their vectors are cached under it
        self.key = hashlib.sha256(json.dumps([[c.name, c.prototypes] for c in self.categories],
                                             ensure_ascii=False).encode()).hexdigest()[:16]

    @property
    def prototypes(self) -> list[tuple[int, str]]:
        """(category index, text) of every prototype, in order."""
        return [(i, text) for i, c in enumerate(self.categories) for text in c.prototypes]

    def word_scores(self, text: str) -> np.ndarray:
        """How much each category's words speak for it in `text`: the sum of the weights of the distinct words found
        (a Chinese word inside a longer one found at the same place is not counted again), and SUBJECT_BONUS for a
        `subject` category whose word the fact is about ("User's sister …", "我妈…": family)."""
        scores = np.zeros(len(self.categories), dtype=np.float32)
        counted: set[tuple[str, int]] = set()

        def count(word: str, index: int, weight: float) -> None:
            if (word, index) not in counted:
                counted.add((word, index))
                scores[index] += weight

        held = set(query_terms(text))
        for term in held:
            for index, weight in self._stems.get(term, ()):
                count(term, index, weight)
            for parts, index, weight in self._phrases.get(term, ()):
                if all(part in held for part in parts[1:]):
                    count(" ".join(parts), index, weight)
        normalized = normalize(text)
        if has_cjk(text):
            self._cjk_scores(normalized, held, count)
        if self._subjects:
            subject = self._subject_index(normalized)
            if subject is not None:
                scores[subject] += SUBJECT_BONUS
        return scores

    def _cjk_scores(self, text: str, held: set[str], count: Callable[[str, int, float], None]) -> None:
        for run in _CJK_RUN.finditer(text):
            chunk = run.group()
            covered_to = 0  # a word ending before this is inside a longer word found earlier
            for start in range(len(chunk)):
                longest = 0
                for word, index, weight in self._cjk.get(chunk[start], ()):
                    if len(word) < longest or start + len(word) <= covered_to:
                        continue
                    if len(word) == 1 and word not in held:
                        continue  # one character counts only as a word of its own (吃 in 吃火锅, not in 小吃店)
                    if chunk.startswith(word, start):
                        longest = len(word)
                        count(word, index, weight)
                covered_to = max(covered_to, start + longest)

    def _subject_index(self, text: str) -> int | None:
        """The `subject` category whose word the fact is about: the word right after its owner ("user's", "my",
        "用户的", "我"), as in "User's brother …", "我妈…"."""
        rest = _OWNER.sub("", text, count=1)
        if rest == text:
            return None
        head = rest[:6]
        for index in self._subjects:
            if has_cjk(head):
                if any(head.startswith(word) for word, i, _ in self._cjk.get(head[0], ()) if i == index):
                    return index
                continue
            first = query_terms(" ".join(head.split()[:1]) if head.split() else "")
            if first and any(i == index for i, _ in self._stems.get(first[0], ())):
                return index
        return None

    def choose(self, words: np.ndarray, similarity: np.ndarray | None) -> list[str]:
        """The categories a fact is in, from its word scores and its similarity to each category (Prototypes; None
        without vectors). The best first; at most MAX_CATEGORIES."""
        fallback = self._fallback_index
        combined = words.astype(np.float32).copy()
        z = _zscores(similarity, fallback) if similarity is not None else None
        if z is not None:
            combined += SIMILARITY_WEIGHT * z
        if fallback >= 0:
            combined[fallback] = words[fallback]  # chosen for its words only: its description says "the rest"
        order = np.argsort(-combined, kind="stable")
        best = int(order[0])
        if words[best] <= 0 and (z is None or z[best] < SIMILARITY_ALONE):
            if fallback >= 0:
                return [self.names[fallback]]
            if z is None:
                return []  # a list without a fallback, and nothing said: the closest would be a guess
            # no fallback to give: the closest category, as mem0 tags with the closest of a project's list
        chosen = [self.names[best]]
        top_words = float(words[best])
        second = int(order[1]) if len(order) > 1 else -1
        if second >= 0 and second != fallback and words[second] >= max(1.0, SECOND_SHARE * top_words):
            chosen.append(self.names[second])
        for index, category in enumerate(self.categories):
            if category.also and words[index] > 0 and category.name not in chosen and len(chosen) < MAX_CATEGORIES:
                chosen.append(category.name)
        return chosen


def _zscores(similarity: np.ndarray, skip: int) -> np.ndarray:
    """Each category's similarity relative to the others' (the fallback, which stands for the rest, left out)."""
    others = np.delete(similarity, skip) if skip >= 0 else similarity
    spread = float(others.std())
    if spread < 1e-6:
        return np.zeros_like(similarity, dtype=np.float32)
    z: np.ndarray = ((similarity - others.mean()) / spread).astype(np.float32)
    if skip >= 0:
        z[skip] = 0.0
    return z


@dataclass(frozen=True)
class Prototypes:
    """A taxonomy's prototypes as vectors: each category's centroid (the mean of its prototypes' vectors, so a dot
    product is the mean cosine with them) and its baseline (that mean for the other categories' prototypes: a
    category whose prototypes are close to everything starts lower)."""

    centroids: np.ndarray  # (categories, dims)
    baseline: np.ndarray  # (categories,)

    @classmethod
    def from_vectors(cls, taxonomy: Taxonomy, vectors: np.ndarray) -> Prototypes:
        owners = np.array([index for index, _ in taxonomy.prototypes], dtype=np.int64)
        count, dims = len(taxonomy.names), vectors.shape[1] if vectors.ndim == 2 else 0
        centroids = np.zeros((count, dims), dtype=np.float32)
        baseline = np.zeros(count, dtype=np.float32)
        for index in range(count):
            own = owners == index
            if own.any():
                centroids[index] = vectors[own].mean(axis=0)
                if (~own).any():
                    baseline[index] = float((vectors[~own] @ centroids[index]).mean())
        return cls(centroids, baseline)

    def similarity(self, vectors: np.ndarray) -> np.ndarray:
        """(facts, categories): each fact's mean cosine with each category's prototypes, less the baseline."""
        similarity: np.ndarray = np.atleast_2d(vectors).astype(np.float32) @ self.centroids.T - self.baseline
        return similarity


# --- the taxonomies -------------------------------------------------------------------------------------------------


def _analysed(word: str) -> str | None:
    """A word as it is matched: Chinese normalised and unspaced; English as its stems, space-joined (None: only
    stop-words)."""
    if has_cjk(word):
        return normalize(word).replace(" ", "") or None
    terms = query_terms(word)
    return " ".join(terms) if terms else None


def _weighted(words: Iterable[tuple[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for word, weight in words:
        analysed = _analysed(word)
        if analysed is not None and out.get(analysed, 0.0) < weight:
            out[analysed] = weight
    return out


def _concept_words(concepts: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Every word of each lexicon concept, heads and members."""
    out: dict[str, list[str]] = {}
    for concept in concepts:
        words = [w for lang in ("en", "zh") for w in concept.get("heads", {}).get(lang, [])]
        words += [w for group in concept.get("members", []) for lang in ("en", "zh") for w in group.get(lang, [])]
        out[concept["id"]] = words
    return out


@lru_cache(maxsize=1)
def _lexicon_data() -> list[dict[str, Any]]:
    data = json.loads(resources.files("jiyi.core").joinpath("lexicon.json").read_text(encoding="utf-8"))
    return list(data.get("concepts", []))


@lru_cache(maxsize=1)
def _lexicon_concepts() -> dict[str, list[str]]:
    return _concept_words(_lexicon_data())


@lru_cache(maxsize=1)
def _default_data() -> list[dict[str, Any]]:
    data = json.loads(resources.files("jiyi.core").joinpath("categories.json").read_text(encoding="utf-8"))
    return list(data["categories"])


def _default_def(entry: dict[str, Any]) -> CategoryDef:
    concepts = _lexicon_concepts()
    weight = float(entry.get("word_weight", 1.0))
    words = [(w, weight) for lang in ("en", "zh") for w in entry.get("words", {}).get(lang, [])]
    marker = float(entry.get("marker_weight", 0.5))
    words += [(w, marker) for lang in ("en", "zh") for w in entry.get("markers", {}).get(lang, [])]
    for concept, share in entry.get("concepts", {}).items():
        words += [(w, float(share)) for w in concepts.get(concept, [])]
    descriptions = [entry["description"][lang] for lang in ("en", "zh") if entry["description"].get(lang)]
    examples = [e for lang in ("en", "zh") for e in entry.get("examples", {}).get(lang, [])]
    return CategoryDef(entry["name"], descriptions[0], tuple(descriptions + examples), _weighted(words),
                       bool(entry.get("also")), bool(entry.get("subject")))


@lru_cache(maxsize=1)
def default_taxonomy() -> Taxonomy:
    """mem0's fifteen default categories (categories.json)."""
    return Taxonomy(tuple(_default_def(entry) for entry in _default_data()))


DEFAULT_NAMES = tuple(entry["name"] for entry in _default_data())


def parse_custom_categories(value: Any, field_name: str = "custom_categories") -> list[tuple[str, str]]:
    """mem0's custom_categories, [{"name": "description"}, ...] (also {"name": ..., "description": ...} and bare
    names), as (name, description) pairs; a 4xx sentence for anything else."""
    if not isinstance(value, list) or not value:
        raise InvalidInput(f"{field_name} must be a non-empty list such as [{{\"recipes\": \"cooking and recipes\"}}]")
    if len(value) > MAX_CUSTOM:
        raise InvalidInput(f"{field_name} holds at most {MAX_CUSTOM} categories")
    pairs: list[tuple[str, str]] = []
    for item in value:
        if isinstance(item, str):
            name, description = item, ""
        elif isinstance(item, dict) and set(item) <= {"name", "description"} and "name" in item:
            name, description = item["name"], item.get("description") or ""
        elif isinstance(item, dict) and len(item) == 1:
            name, description = next(iter(item.items()))
        else:
            raise InvalidInput(f"each of {field_name} is {{\"<name>\": \"<description>\"}}, got {item!r}"[:300])
        if not isinstance(name, str) or not NAME.match(name.strip()):
            raise InvalidInput(f"{field_name}: {name!r} is not a category name (letters, digits, _ - . & / +, "
                               "up to 64)"[:300])
        if not isinstance(description, str) or len(description) > 1000:
            raise InvalidInput(f"{field_name}: the description of {name!r} must be text of at most 1000 characters")
        pairs.append((name.strip(), description.strip()))
    if len({name for name, _ in pairs}) != len(pairs):
        raise InvalidInput(f"{field_name} names a category twice")
    return pairs


def _custom_def(name: str, description: str) -> CategoryDef:
    """A project's own category, honoured as mem0's are: its words are its name's and description's and the lexicon
    words those reach; its prototypes its name and description. A name of mem0's own taxonomy keeps that
    category's words and examples too."""
    label = name.replace("_", " ").replace("-", " ")
    text = f"{label}: {description}" if description else label
    own = [(word, 1.0) for word in [label, *query_terms(label)]]
    own += [(word, 0.6) for word in query_terms(description)]
    own += [(match, 0.6) for match in _CJK_RUN.findall(description) if len(match) <= 4]
    own = [(word, weight) for word, weight in own if _analysed(word) not in _GENERIC]
    reached = _lexicon_reach([word for word, _ in own])
    words = _weighted([*own, *((word, 0.8) for word in reached)])
    prototypes = [text]
    defaults = {c.name: c for c in default_taxonomy().categories}
    if name in defaults and name != FALLBACK:
        known = defaults[name]
        words = {**known.words, **words}
        prototypes += list(known.prototypes)
    return CategoryDef(name, description or label, tuple(prototypes), words)


# Words a category's description uses for anything ("the user's preferences about ..."): they say nothing about
# which category a fact is in, and "user" is in every fact jiyi writes.
_GENERIC = frozenset(filter(None, map(_analysed, [
    "user", "users", "person", "people", "information", "info", "details", "detail", "thing", "things", "stuff",
    "related", "about", "including", "include", "etc", "other", "others", "general", "kind", "type", "types",
    "category", "memory", "memories", "fact", "facts",
    "用户", "信息", "相关", "有关", "内容", "事情", "其他", "类别"])))


def _lexicon_reach(words: Sequence[str]) -> list[str]:
    """The words of the lexicon's concepts that a word names as a head (pets -> dog, cat, ...)."""
    from jiyi.core.lexicon import analysed

    wanted = {a for word in words if (a := _analysed(word)) is not None}
    reached: list[str] = []
    for concept in _lexicon_data():
        heads = [w for lang in ("en", "zh") for w in concept.get("heads", {}).get(lang, [])]
        if any(analysed(head) in wanted for head in heads) or concept["id"] in wanted:
            reached += _concept_words([concept])[concept["id"]]
    return reached


@lru_cache(maxsize=64)
def _custom_taxonomy(pairs: tuple[tuple[str, str], ...]) -> Taxonomy:
    names = [name for name, _ in pairs]
    return Taxonomy(tuple(_custom_def(name, description) for name, description in pairs),
                    fallback=FALLBACK if FALLBACK in names else None)


def described(pairs: Sequence[tuple[str, str]]) -> Taxonomy:
    """A taxonomy of (name, description) pairs taken as they are (a profile schema's properties): words from each
    name and description, as a custom category's."""
    return _custom_taxonomy(tuple((str(name), str(description)) for name, description in pairs))


def taxonomy_for(custom: Any = None) -> Taxonomy:
    """The taxonomy a project's or an add's custom_categories make (mem0's default without them). Built once per
    distinct list (a bounded cache)."""
    if not custom:
        return default_taxonomy()
    return _custom_taxonomy(tuple(parse_custom_categories(custom)))
