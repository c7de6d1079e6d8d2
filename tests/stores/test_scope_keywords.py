"""The SQLite store's keyword search in memory (stores/sqlite/scope_keywords.py) answers what FTS5's SQL answers:
the same memories with the same bm25 scores, on random stores of several users, with common words bounded, and after
every kind of write — adds, edits of the text, of the owner and of the expiry, deletes, restores, another process's
writes. The SQL path is the reference: the test turns the in-memory one off on the same store to get it."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jiyi import build_embedder
from jiyi.records import Event, HistoryEvent, MemoryRecord, Scope
from jiyi.stores.sqlite import SqliteStore, scope_keywords
from jiyi.stores.sqlite import store as sqlite_store
from jiyi.stores.sqlite.scope_keywords import IndexedRow, ScopeKeywords, fts_tokens

WORDS = ("上海 北京 猫 狗 咖啡 茶 跑步 游泳 医生 老师 妈妈 姐姐 生日 旅行 电影 失眠 加班 火锅 上班 海边 "
         "tea coffee hiking sister mother movie guitar café naïve runner running e_mail don't").split()
EMBEDDER = build_embedder("hashing")


def _text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
    return rng.choice(("我{}和{}的事情 {}", "{} about {} and {}", "{}{}，{}")).format(
        " ".join(words[:2]), rng.choice(WORDS), " ".join(words[2:]))


def _add(store: SqliteStore, texts: list[str], scope: Scope, expires: datetime | None = None) -> list[MemoryRecord]:
    records = [MemoryRecord(content=t, scope=scope, expiration_date=expires) for t in texts]
    store.insert(records, EMBEDDER.embed_documents(texts), [])
    return records


def _queries(rng: random.Random, n: int) -> list[list[str]]:
    return [[rng.choice(WORDS) for _ in range(rng.randint(1, 4))] + rng.choice(([], ["海"], ["上海"], ["running"]))
            for _ in range(n)]


def _both(store: SqliteStore, scope: Scope, terms: list[str], limit: int = 30,
          include_expired: bool = False) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    in_memory = store.keyword_search(scope, terms, limit, include_expired=include_expired)
    store._ranked_in_memory = lambda *args, **kwargs: None  # type: ignore[method-assign]
    try:
        by_sql = store.keyword_search(scope, terms, limit, include_expired=include_expired)
    finally:
        del store._ranked_in_memory
    return ([(h.memory_id, round(h.score, 9)) for h in in_memory], [(h.memory_id, round(h.score, 9)) for h in by_sql])


def _same(store: SqliteStore, scope: Scope, queries: list[list[str]], **options: object) -> int:
    """How many of the queries found something; fails on the first that the two paths answer differently: the
    scores rank by rank, and the memories. Memories of equal score may come in another order, and where the limit
    cuts through a tie, others of that score may be chosen: the lowest score's memories are compared in number."""
    found = 0
    for terms in queries:
        in_memory, by_sql = _both(store, scope, terms, **options)  # type: ignore[arg-type]
        assert [s for _, s in in_memory] == [s for _, s in by_sql], terms
        lowest = min((s for _, s in by_sql), default=0.0)
        assert {h for h in in_memory if h[1] > lowest} == {h for h in by_sql if h[1] > lowest}, terms
        found += bool(in_memory)
    return found


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    store = SqliteStore(tmp_path / "m.db")
    store.bind_embedding(EMBEDDER.model_id, EMBEDDER.dims)
    return store


def test_random_stores_of_several_users_rank_as_fts5(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "KEYWORD_COMMON_ROWS", 25)  # the common-word bound, on a small store
    rng = random.Random(11)
    users = [Scope("ann"), Scope("bo"), Scope("ann", agent_id="coach")]
    for _ in range(4):
        for scope in users:
            _add(store, [_text(rng) for _ in range(rng.randint(20, 60))], scope)
    queries = _queries(rng, 60)
    for scope in [*users, Scope("ann", run_id="none-yet")]:
        found = _same(store, scope, queries, limit=rng.choice((5, 30)))
        assert found > 40 or scope.run_id  # a real test: most queries find something
    assert len(store._keywords) == 4


def test_every_kind_of_write_keeps_the_index_equal_to_fts5(store: SqliteStore,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "KEYWORD_COMMON_ROWS", 15)
    rng = random.Random(5)
    ann, bo = Scope("ann"), Scope("bo")
    records = _add(store, [_text(rng) for _ in range(120)], ann) + _add(store, [_text(rng) for _ in range(30)], bo)
    queries = _queries(rng, 40)
    assert _same(store, ann, queries) > 20  # the index is built
    now = datetime.now(UTC)
    for i, record in enumerate(records[:60]):
        action = i % 5
        if action == 0:  # a new text
            record.content = _text(rng)
            store.update(record, EMBEDDER.embed_documents([record.content])[0], None)
        elif action == 1:  # the same text, another owner
            record.scope = bo
            store.update(record, None, None)
        elif action == 2:  # expired, then searched with and without the expired
            record.expiration_date = now - timedelta(days=1)
            store.update(record, None, None)
        elif action == 3:
            store.soft_delete(record.id, "test", HistoryEvent(record.id, Event.DELETE, record.content, None), now)
            if i % 2:
                store.restore(record.id, HistoryEvent(record.id, Event.ADD, None, record.content), now)
        else:  # an edit that leaves the index alone
            record.metadata = {"touched": i}
            store.update(record, None, None)
        if i % 7 == 0:
            _add(store, [_text(rng)], ann)
            assert _same(store, ann, queries[:5]) >= 0
    for scope in (ann, bo):
        _same(store, scope, queries)
        _same(store, scope, queries, include_expired=True)
    index = store._keywords.get(ann)
    assert index is not None and index.dead > 0  # kept and updated in place, not rebuilt: the test saw that path


def test_another_process_s_writes_are_seen(store: SqliteStore, tmp_path: Path) -> None:
    rng = random.Random(3)
    ann = Scope("ann")
    _add(store, [_text(rng) for _ in range(50)], ann)
    queries = _queries(rng, 20)
    _same(store, ann, queries)
    other = SqliteStore(tmp_path / "m.db")
    _add(other, ["我和外婆去上海喝咖啡"] * 3, ann)
    hits = store.keyword_search(ann, ["外婆"], 10)
    assert len(hits) == 3
    _same(store, ann, [*queries, ["外婆", "上海"]])
    other.close()


def test_fts_tokens_are_the_tokenizer_s(tmp_path: Path) -> None:
    """fts_tokens against FTS5's unicode61 itself (fts5vocab's instance table), on texts with case, diacritics,
    underscores, apostrophes, digits, full-width forms, Chinese and Korean."""
    db = sqlite3.connect(tmp_path / "t.db")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    texts = ["Café NAÏVE don't e_mail x2 3.5 ÀÉÎ", "第 12 条 我 喜欢 咖啡", "上 海 很 好", "한국어 텍스트 ß Straße",
             "ｆｕｌｌ　ｗｉｄｔｈ １２", "emoji 🙂 and #tags @you", "Ελληνικά Ünïcödé"]
    for rowid, text in enumerate(texts, start=1):
        db.execute("INSERT INTO t(rowid, x) VALUES (?, ?)", (rowid, text))
    for rowid, text in enumerate(texts, start=1):
        expected = [term for (term,) in db.execute("SELECT term FROM v WHERE doc = ? ORDER BY offset", (rowid,))]
        assert fts_tokens(text) == expected, text


def test_an_index_built_while_a_write_lands_is_not_kept(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index is built outside the store's lock (other users' searches do not wait for it): a memory indexed
    meanwhile would be missing from it, so it is dropped, the search asks FTS5, and the next search builds again."""
    ann = Scope("ann")
    _add(store, ["我和妈妈去上海", "coffee with my sister"], ann)
    build = sqlite_store.ScopeKeywords.from_rows

    def build_while_writing(rows: list[IndexedRow]) -> ScopeKeywords:
        index = build(rows)
        _add(store, ["妈妈明天来上海看我"], ann)  # lands between the rows read and the index kept
        return index

    monkeypatch.setattr(sqlite_store.ScopeKeywords, "from_rows", build_while_writing)
    assert len(store.keyword_search(ann, ["上海"], 10)) == 2  # FTS5 answered, the new memory with it
    assert ann not in store._keywords
    monkeypatch.setattr(sqlite_store.ScopeKeywords, "from_rows", build)
    assert len(store.keyword_search(ann, ["上海"], 10)) == 2
    assert ann in store._keywords
    _same(store, ann, [["上海"], ["妈妈", "coffee"]])


def test_what_an_index_keeps_between_searches_changes_no_score(store: SqliteStore,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An index keeps what its searches work out from its rows alone (ScopeKeywords.kept: arrays of its columns, bm25's
    length terms, where the newest rows of common words begin, longer phrases' rows; phrase_scores: common phrases'
    scores): the very ranking and scores as working each out anew, search after search, between writes of every
    kind (which also move the store's averages and IDFs)."""
    monkeypatch.setattr(sqlite_store, "KEYWORD_COMMON_ROWS", 15)
    monkeypatch.setattr(scope_keywords, "KEPT_SCORES_ROWS", 1)  # every phrase's scores kept
    rng = random.Random(8)
    ann = Scope("ann")
    records = _add(store, [_text(rng) for _ in range(150)], ann)
    queries = [*_queries(rng, 12), ["上海咖啡"], ["咖啡", "上海"]]

    def searched() -> None:
        for terms in queries:
            for include_expired in (False, True):
                kept = store.keyword_search(ann, terms, 20, include_expired=include_expired)
                with monkeypatch.context() as anew:
                    anew.setattr(ScopeKeywords, "kept", lambda self, key, make: make())
                    anew.setattr(scope_keywords, "KEPT_SCORES_ROWS", 10**9)
                    again = store.keyword_search(ann, terms, 20, include_expired=include_expired)
                assert [(h.memory_id, h.score) for h in kept] == [(h.memory_id, h.score) for h in again], terms

    [other] = _add(store, ["zz"], Scope("bo"))
    now = datetime.now(UTC)
    for i, record in enumerate(records[:30]):
        searched()
        # Another user's memories: the store's average size moves (with the IDFs the same: words no query has), then
        # the IDFs too; this scope's rows stay.
        other.content = " ".join(["zz"] * (i % 7 + 1))
        store.update(other, EMBEDDER.embed_documents([other.content])[0], None)
        searched()
        _add(store, [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))], Scope("bo"))
        searched()
        action = i % 4
        if action == 0:
            record.content = _text(rng)
            store.update(record, EMBEDDER.embed_documents([record.content])[0], None)
        elif action == 1:
            record.expiration_date = now - timedelta(days=1)
            store.update(record, None, None)
        elif action == 2:
            store.soft_delete(record.id, "test", HistoryEvent(record.id, Event.DELETE, record.content, None), now)
        else:
            _add(store, [_text(rng) for _ in range(3)], ann)
    searched()
    assert store._keywords.get(ann) is not None  # the in-memory index answered, kept and changed in place
