"""One scope's keyword index in memory: FTS5's bm25, computed over the rows the scope's vector cache holds.

Why: on bench/throughput.py's 10k-memory scope, FTS5 took ~3 ms of a search's ~8 ms of CPU outside the model. A
query of two common words matches thousands of rows and bm25() reads each one's size and positions from the index.
Here the same ranking is sums over postings in numpy (~0.2 ms), and the FTS5 table stays the store's index: it is
what this is loaded from, what filters other than the scope's are searched with, and what the store-wide statistics
(row count, average size, rows holding a phrase) are read from, so scores equal bm25(memory_fts, 1.0, 0.6, 0.0) of
the SQL path (tests/stores/test_scope_keywords.py compares them on random stores).

The rows are the vector cache's (same positions, oldest first), so the category and expiry masks apply as they are;
the store builds an index on a scope's first keyword search and appends to it as memories are added; every other
change to the scope's rows drops it with the vectors.

FTS5's unicode61 tokenizer is mirrored by `fts_tokens` (runs of letters and digits, case and diacritics folded). The
stored columns are already segmented words and single CJK characters, which it splits no further; a query word it
would split into a phrase of several tokens ("e_mail") is left to FTS5 (`phrase_postings` answers None).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np

from jiyi.text import has_cjk

# bm25(memory_fts, 1.0, 0.6, 0.0): the terms, chars and scope columns' weights, and FTS5's constants.
COLUMN_WEIGHTS = {"terms": 1.0, "chars": 0.6}
K1 = 1.2
B = 0.75
MIN_IDF = 1e-6
MAX_KEPT = 512  # answers an index keeps for its rows as they are (ScopeKeywords.kept)
KEPT_SCORES_ROWS = 256  # a phrase in this many rows or more has its rows' scores kept (ScopeKeywords.phrase_scores)

_T = TypeVar("_T")

# unicode61's token characters: letters and numbers (categories L*, N*), and any character past U+FFFF (emoji too).
_TOKEN = re.compile(r"(?:[^\W_]|[\U00010000-\U0010FFFF])+")


@lru_cache(maxsize=65536)
def _fold(token: str) -> str:
    """A lower-cased token as unicode61 (remove_diacritics=1) folds it: a Latin letter loses its diacritics ("é" to
    "e"); other scripts keep theirs (Greek "ά" stays)."""
    return "".join(_fold_char(c) for c in token)


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    if char.isascii():
        return char
    decomposed = unicodedata.normalize("NFD", char)
    base, marks = decomposed[0], decomposed[1:]
    latin = base < "\u0250" or "\u1e00" <= base <= "\u1eff"
    return base if latin and marks and all(unicodedata.combining(m) for m in marks) else char


def fts_tokens(text: str) -> list[str]:
    """The tokens FTS5's unicode61 tokenizer makes of `text`."""
    lowered = text.lower()
    if lowered.isascii() or unicodedata.is_normalized("NFD", lowered):  # nothing to fold (Chinese text)
        return _TOKEN.findall(lowered)
    return [_fold(token) for token in _TOKEN.findall(lowered)]


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase of the MATCH expression: its column and its tokens."""
    column: str
    tokens: tuple[str, ...]

    @property
    def weight(self) -> float:
        return COLUMN_WEIGHTS[self.column]


def query_phrases(terms: Sequence[str]) -> list[Phrase]:
    """The phrases _keyword_query's MATCH holds for `terms`, in its order: each term in the terms column, and a
    Chinese one's characters as a phrase in the chars column."""
    return [phrase for term in terms for phrase in _term_phrases(term)]


@lru_cache(maxsize=65536)
def _term_phrases(term: str) -> tuple[Phrase, ...]:
    # The same words are searched search after search (and the words the lexicon reaches from them): tokenised once.
    # Phrases are frozen: shared by every search that asks for the word.
    if has_cjk(term):
        return Phrase("terms", tuple(fts_tokens(term))), Phrase("chars", tuple(fts_tokens(" ".join(term))))
    return (Phrase("terms", tuple(fts_tokens(term))),)


class _Postings:
    """Rows (positions) holding a key, and how many times each holds it: growable; read as numpy copies (a view
    would stop the arrays from growing for as long as it lives). The copies are kept, read only, until the postings
    grow (they only ever grow): the same common words are searched search after search, and copying a word's
    thousands of postings each time cost more than scoring them."""

    __slots__ = ("_arrays", "counts", "rows")

    def __init__(self) -> None:
        self.rows = array("i")
        self.counts = array("d")
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        kept = self._arrays
        if kept is None or kept[0].shape[0] != len(self.rows):
            rows, counts = np.array(self.rows, dtype=np.int32), np.array(self.counts, dtype=np.float64)
            rows.flags.writeable = counts.flags.writeable = False
            kept = self._arrays = (rows, counts)
        return kept


@dataclass(frozen=True, slots=True)
class IndexedRow:
    """A memory as the keyword index holds it: its place in the store, its expiry, and its three FTS5 columns."""
    rowid: int
    memory_id: str
    expires: float  # seconds since the epoch; inf: never
    terms: str
    chars: str
    scope: str


class ScopeKeywords:
    """The postings of one scope's rows: words of the terms column, characters and character pairs of the chars
    column (a pair's postings answer a two-character phrase exactly and narrow a longer one), and each row's size in
    tokens over all three columns (bm25's document length).

    Rows are positions, in the order they came; a memory deleted or re-indexed leaves a dead row behind (its postings
    stay, masked by `live`), so that an edit costs an append, not a rebuild of the scope (~0.3 s CPU at 10k rows). The
    store drops an index whose dead rows pass a quarter. Not thread-safe: the store uses it under its lock."""

    def __init__(self) -> None:
        self._terms: dict[str, _Postings] = {}
        self._chars: dict[str, _Postings] = {}
        self._pairs: dict[str, _Postings] = {}
        self._char_text: list[str] = []  # each row's chars column, its single-character tokens joined
        self._sizes = array("d")
        self.ids: list[str] = []
        self._rowids = array("q")
        self._expires = array("d")
        self._alive = bytearray()
        self._position: dict[int, int] = {}  # a live memory's rowid -> its row
        self.dead = 0
        # What every search works out from the rows alone - numpy copies of the columns above (alive, rowids, expiries,
        # sizes), bm25's length terms, where the newest rows of common words begin - kept until a row is added,
        # removed or its expiry changes (`_changes`): see kept().
        self._changes = 0
        self._kept: dict[Hashable, Any] = {}
        self._kept_at = 0
        self._lengths_of = 0.0  # the average size the kept length terms are for

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def from_rows(cls, rows: Sequence[IndexedRow]) -> ScopeKeywords:
        """An index of these rows, built in bulk: grouped in numpy, where append() one row at a time took 0.7 s for
        10k rows (~30 postings a row)."""
        index = cls()
        flat: tuple[list[str], list[str], list[str]] = ([], [], [])
        owners: tuple[list[int], list[int], list[int]] = ([], [], [])
        for row, indexed in enumerate(rows):
            term_tokens, char_tokens = fts_tokens(indexed.terms), fts_tokens(indexed.chars)
            text = index._add_row(indexed, term_tokens, char_tokens)
            for kind, tokens in enumerate((term_tokens, char_tokens, _pairs(text))):
                flat[kind].extend(tokens)
                owners[kind].extend([row] * len(tokens))
        for table, tokens, holders in zip((index._terms, index._chars, index._pairs), flat, owners, strict=True):
            _group(table, tokens, holders, len(rows))
        return index

    def _add_row(self, indexed: IndexedRow, term_tokens: list[str], char_tokens: list[str]) -> str:
        self.remove(indexed.rowid)
        self._changes += 1
        text = "".join(char_tokens)
        if len(text) != len(char_tokens):  # not single characters: no pairs (the chars column holds none such)
            text = ""
        self._position[indexed.rowid] = len(self.ids)
        self.ids.append(indexed.memory_id)
        self._rowids.append(indexed.rowid)
        self._expires.append(indexed.expires)
        self._alive.append(1)
        self._char_text.append(text)
        self._sizes.append(len(term_tokens) + len(char_tokens) + len(fts_tokens(indexed.scope)))
        return text

    def append(self, indexed: IndexedRow) -> None:
        """A memory indexed (again: its earlier row dies)."""
        row = len(self.ids)
        term_tokens, char_tokens = fts_tokens(indexed.terms), fts_tokens(indexed.chars)
        text = self._add_row(indexed, term_tokens, char_tokens)
        _post(self._terms, term_tokens, row)
        _post(self._chars, char_tokens, row)
        _post(self._pairs, _pairs(text), row)

    def remove(self, rowid: int) -> None:
        """A memory no longer indexed here (deleted, or moved to another scope)."""
        row = self._position.pop(rowid, None)
        if row is not None:
            self._alive[row] = 0
            self.dead += 1
            self._changes += 1

    def set_expiry(self, rowid: int, expires: float) -> None:
        row = self._position.get(rowid)
        if row is not None:
            self._expires[row] = expires
            self._changes += 1

    def kept(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """`make()`, kept until the rows change: an answer that depends on this index alone. At most MAX_KEPT
        answers: all are dropped past it."""
        self._fresh()
        if key not in self._kept:
            self._kept[key] = make()
        return self._kept[key]  # type: ignore[no-any-return]

    def _fresh(self) -> None:
        """Drop what was kept for rows that changed since, or everything kept once there are MAX_KEPT answers."""
        if self._kept_at != self._changes or len(self._kept) >= MAX_KEPT:
            self._kept, self._kept_at = {}, self._changes

    def _array(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        """kept(), for an array: read only."""
        def made() -> np.ndarray:
            array = make()
            array.flags.writeable = False
            return array
        return self.kept(key, made)

    def alive(self) -> np.ndarray:
        """The rows of memories still indexed here (expired ones too). Read only."""
        return self._array("alive", lambda: np.array(self._alive, dtype=bool))

    def unexpired(self, now: float) -> np.ndarray:
        return self._array("expires", lambda: np.array(self._expires, dtype=np.float64)) > now

    def rowids(self) -> np.ndarray:
        """Read only."""
        return self._array("rowids", lambda: np.array(self._rowids, dtype=np.int64))

    def sizes(self) -> np.ndarray:
        """Read only."""
        return self._array("sizes", lambda: np.array(self._sizes, dtype=np.float64))

    def length_terms(self, average_size: float) -> np.ndarray:
        """bm25's k1 * (1 - b + b * size / average size) of each row, for a non-zero `average_size`. Read only."""
        # Kept for one average only, and the phrases' scores with them (phrase_scores): the store's average moves
        # with writes to other scopes, which leave these rows be.
        if self._lengths_of != average_size:
            self._kept = {key: value for key, value in self._kept.items()
                          if key != "lengths" and not (isinstance(key, tuple) and key[0] == "scores")}
            self._lengths_of = average_size
        return self._array("lengths", lambda: K1 * (1 - B + B * self.sizes() / average_size))

    def phrase_scores(self, phrase: Phrase, rows: np.ndarray, counts: np.ndarray, idf: float,
                      lengths: np.ndarray) -> np.ndarray:
        """A phrase's share of bm25 in each of its rows (`rows`, `counts`: its postings; `lengths`: length_terms()).
        A common word's are the same search after search while the index and the store's figures (the phrase's IDF,
        the average size) stay: kept, one answer a phrase, for these very postings and length terms - the index's
        own, which it keeps too."""
        def scores() -> np.ndarray:
            frequency = counts * phrase.weight
            share: np.ndarray = idf * (frequency * (K1 + 1)) / (frequency + lengths[rows])
            share.flags.writeable = False
            return share

        self._fresh()
        if rows.size < KEPT_SCORES_ROWS or lengths is not self._kept.get("lengths"):
            return scores()
        key = ("scores", phrase)
        known = self._kept.get(key)
        if known is None or known[0] is not rows or known[1] is not counts or known[2] != idf:
            known = self._kept[key] = (rows, counts, idf, scores())
        return known[3]

    def phrase_postings(self, phrase: Phrase) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows, instances) of a phrase; None for a phrase of several words in the terms column (FTS5 answers it)."""
        tokens = phrase.tokens
        empty = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64))
        if not tokens:
            return empty
        if len(tokens) == 1:
            found = (self._terms if phrase.column == "terms" else self._chars).get(tokens[0])
            return found.arrays() if found is not None else empty
        if phrase.column == "terms" or any(len(t) != 1 for t in tokens):
            return None
        text = "".join(tokens)
        pairs = [self._pairs.get(text[i:i + 2]) for i in range(len(text) - 1)]
        if any(p is None for p in pairs):
            return empty
        if len(pairs) == 1:
            return pairs[0].arrays()  # type: ignore[union-attr]
        return self.kept(("phrase", text), lambda: self._rows_holding(text, pairs))  # type: ignore[arg-type]

    def _rows_holding(self, text: str, pairs: list[_Postings]) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding `text` (three characters or more), found through its pairs, and its instances in each."""
        candidates = pairs[0].arrays()[0]
        for postings in pairs[1:]:
            candidates = np.intersect1d(candidates, postings.arrays()[0], assume_unique=True)
        rows, counts = [], []
        for row in candidates.tolist():
            if n := _occurrences(self._char_text[row], text):
                rows.append(row)
                counts.append(n)
        found = np.asarray(rows, dtype=np.int32), np.asarray(counts, dtype=np.float64)
        found[0].flags.writeable = found[1].flags.writeable = False
        return found


def _pairs(text: str) -> list[str]:
    return [text[i:i + 2] for i in range(len(text) - 1)]


def _group(table: dict[str, _Postings], tokens: list[str], rows: list[int], n_rows: int) -> None:
    """Postings of (token, row) pairs listed one per instance, rows ascending: each token's rows and counts."""
    if not tokens:
        return
    names = list(dict.fromkeys(tokens))
    ids = {name: i for i, name in enumerate(names)}
    token_ids = np.fromiter(map(ids.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    keys, counts = np.unique(token_ids * n_rows + np.asarray(rows, dtype=np.int64), return_counts=True)
    owners, held = keys // n_rows, (keys % n_rows).astype(np.int32)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(owners)) + 1, [len(keys)]]).tolist()
    counts = counts.astype(np.float64)
    for start, end in itertools.pairwise(starts):
        postings = table[names[int(owners[start])]] = _Postings()
        postings.rows.frombytes(held[start:end].tobytes())
        postings.counts.frombytes(counts[start:end].tobytes())


def _post(table: dict[str, _Postings], tokens: list[str], row: int) -> None:
    counts = Counter(tokens).items() if len(set(tokens)) < len(tokens) else ((token, 1) for token in tokens)
    for token, count in counts:
        postings = table.get(token)
        if postings is None:
            postings = table[token] = _Postings()
        postings.rows.append(row)
        postings.counts.append(count)


def _occurrences(text: str, phrase: str) -> int:
    """Occurrences of `phrase` in `text`, overlapping ones too (as FTS5 counts a phrase's instances)."""
    n, start = 0, text.find(phrase)
    while start >= 0:
        n += 1
        start = text.find(phrase, start + 1)
    return n


@dataclass(frozen=True, slots=True)
class Statistics:
    """The whole table's figures bm25 reads: its rows, their average size in tokens, and the rows holding each phrase
    of the query."""
    rows: int
    average_size: float
    phrase_rows: Sequence[int]

    def idf(self) -> np.ndarray:
        return np.asarray([max(np.log((self.rows - n + 0.5) / (n + 0.5)), MIN_IDF) for n in self.phrase_rows])


def length_terms(index: ScopeKeywords, statistics: Statistics) -> np.ndarray | None:
    """bm25's k1 * (1 - b + b * size / average size) of each row (None: an empty index, nothing scores)."""
    return index.length_terms(statistics.average_size) if statistics.average_size else None


def bm25_scores(index: ScopeKeywords, phrases: Sequence[Phrase], postings: Sequence[tuple[np.ndarray, np.ndarray]],
                statistics: Statistics, lengths: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Each row's bm25 for these phrases (higher is better: FTS5's rank negated) and whether any phrase matched it;
    `lengths`: length_terms()."""
    n = len(index)
    scores = np.zeros(n, dtype=np.float64)
    matched = np.zeros(n, dtype=bool)
    for phrase, (rows, counts), idf in zip(phrases, postings, statistics.idf(), strict=True):
        if rows.size == 0 or lengths is None:
            continue
        scores[rows] += index.phrase_scores(phrase, rows, counts, idf, lengths)
        matched[rows] = True
    return scores, matched


def read_varints(blob: bytes) -> list[int]:
    """SQLite's varints, one after another (FTS5's averages record: rows, then each column's tokens)."""
    values, i = [], 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values
