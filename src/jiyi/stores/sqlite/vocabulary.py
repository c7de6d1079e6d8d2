"""FTS5's vocabulary as searches read it: how many memories hold each word, kept between searches until the index
changes.

Every search asks the vocabulary about its words and about the words the lexicon reaches from them (a head word
reaches its whole concept: 猫 or 医生 reach ~300 words). fts5vocab answers that by walking the index: 4.4 ms of the
9.3 ms of CPU a search took outside the model on bench/throughput.py's store of 2,000 memories, the largest share.
The same words come back search after search, so their counts are kept here, and dropped when a write changes what
the index holds. So is where the newest rows a common word matches begin (newest_match: keyword search ranks only
those; 0.5 ms of a search on a 10k-memory scope): it too depends on nothing but what the index holds.

A write that changes the index — a memory indexed or unindexed, memories purged — stamps the store's `meta` table
with a new random value in its own transaction (`stamp`). A reader compares the stamp first and reads the vocabulary
after, so what it keeps is at least as new as the stamp it keeps it under, whichever process wrote. Writes that leave
the index alone (access counts, importance, metadata) keep the counts. A random value, not a counter: a counter
starts again after `reset`, and a process that cached under "3" before it would take the new "3" for its own.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Sequence

from jiyi.stores.sqlite.scope_keywords import read_varints

STAMP_KEY = "vocabulary_stamp"
MAX_WORDS = 200_000  # kept counts (a word and a column each: ~150 bytes); all are dropped past it

Word = tuple[str, str]  # (FTS5 column, term)


def stamp(db: sqlite3.Connection) -> None:
    """Mark the index changed, inside the writing transaction."""
    db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (STAMP_KEY, secrets.token_hex(8)))


class Vocabulary:
    """Document counts per (column, term), and the store's memory total, as of the last stamp read. Not thread-safe:
    the store calls it under its lock."""

    def __init__(self, max_words: int = MAX_WORDS) -> None:
        self.max_words = max_words
        self._stamp: str | None = None
        self._docs: dict[Word, int] = {}
        self._total: int | None = None
        self._newest: dict[tuple[str, int], int | None] = {}
        self._phrases: dict[str, int] = {}
        self._averages: tuple[int, float] | None = None

    def docs(self, db: sqlite3.Connection, words: Sequence[Word]) -> dict[Word, int]:
        """How many memories hold each word in its column (0: none)."""
        self._check(db)
        known = self._docs
        missing = list(dict.fromkeys(word for word in words if word not in known))
        if missing:
            columns = sorted({column for column, _ in missing})
            terms = list(dict.fromkeys(term for _, term in missing))
            found = {(row[0], row[1]): int(row[2]) for row in db.execute(
                f"SELECT col, term, doc FROM memory_vocab WHERE col IN ({', '.join('?' for _ in columns)}) "
                f"AND term IN ({', '.join('?' for _ in terms)})", [*columns, *terms])}
            for word in missing:
                known[word] = found.get(word, 0)
        return {word: known[word] for word in words}

    def docs_and_total(self, db: sqlite3.Connection, words: Sequence[Word]) -> tuple[dict[Word, int], int]:
        """docs(), and the memories ever stored (max(rowid): deleted ones too, and O(1)) — the IDF's N."""
        docs = self.docs(db, words)
        if self._total is None:
            self._total = int(db.execute("SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0])
        return docs, self._total

    def newest_match(self, db: sqlite3.Connection, match: str, offset: int) -> int | None:
        """The rowid of the row `match` finds that has `offset` newer ones (None: it finds fewer)."""
        self._check(db)
        key = (match, offset)
        if key not in self._newest:
            row = db.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC LIMIT 1 "
                             "OFFSET ?", key).fetchone()
            self._newest[key] = row[0] if row else None
        return self._newest[key]

    def phrase_rows(self, db: sqlite3.Connection, matches: Sequence[str]) -> dict[str, int]:
        """How many rows of the whole index each phrase query (`chars:"上 海"`) finds: bm25's IDF of that phrase."""
        if not matches:
            return {}
        self._check(db)
        for match in matches:
            if match not in self._phrases:
                self._phrases[match] = int(db.execute("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?",
                                                      (match,)).fetchone()[0])
        return {match: self._phrases[match] for match in matches}

    def averages(self, db: sqlite3.Connection) -> tuple[int, float]:
        """The index's rows and their average size in tokens over all columns, as FTS5's bm25 reads them (its
        averages record: the row count, then each column's tokens)."""
        self._check(db)
        if self._averages is None:
            row = db.execute("SELECT block FROM memory_fts_data WHERE id = 1").fetchone()
            rows, *sizes = read_varints(bytes(row[0])) if row and row[0] else [0]
            self._averages = (rows, sum(sizes) / rows if rows else 0.0)
        return self._averages

    def _check(self, db: sqlite3.Connection) -> None:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (STAMP_KEY,)).fetchone()
        current = row[0] if row else None
        if current != self._stamp or len(self._docs) + len(self._newest) + len(self._phrases) > self.max_words:
            self._docs.clear()
            self._newest.clear()
            self._phrases.clear()
            self._averages = None
            self._total = None
            self._stamp = current
