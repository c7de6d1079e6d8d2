"""Export and import keep everything: random memories (every field), their history rows (reason included), the
audit trail of memories purged since, and the messages they cite, put in a store, exported, imported into an empty
store — SQLite or PostgreSQL, either way — and exported again, give the same file byte for byte; the one exception
transfer.py documents (a number in a memory's metadata as PostgreSQL's jsonb spells it) is checked to be the same
value. And the first export reads back as the records that were stored."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jiyi import build_embedder, build_store
from jiyi.records import (
    Category,
    Event,
    HistoryEvent,
    Layer,
    MemoryRecord,
    MemoryType,
    Scope,
    Source,
    SourceRef,
    StoredMessage,
)
from jiyi.stores.base import MemoryStore
from jiyi.transfer import (
    export_jsonl,
    history_from_json,
    history_to_json,
    import_jsonl,
    message_from_json,
    message_to_json,
    record_from_json,
    record_to_json,
)
from jiyi.views import history_item
from tests import pg
from tests.conftest import STORE_KINDS

# Text as people send it, less what no store can keep: lone surrogates (not UTF-8) and NUL (PostgreSQL's text and
# jsonb refuse it).
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
WORDS = TEXT.filter(lambda text: text.strip() != "")
ZONES = st.sampled_from([UTC, timezone(timedelta(hours=8)), timezone(timedelta(hours=-5, minutes=-30))])
# Years from 1000: the SQLite store writes times as fixed-width text, and a three-digit year is not ISO 8601.
TIMES = st.datetimes(min_value=datetime(1000, 1, 2), max_value=datetime(9998, 12, 30), timezones=ZONES)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | FLOATS | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8)
METADATA = st.dictionaries(TEXT, JSON, max_size=4)
SCOPES = st.builds(Scope, st.none() | WORDS, st.none() | WORDS, st.none() | WORDS).filter(lambda s: not s.is_empty)
INT32 = st.integers(1, 2 ** 31 - 1)


@st.composite
def messages(draw: st.DrawFn) -> StoredMessage:
    return StoredMessage(content=draw(TEXT), role=draw(st.sampled_from(["user", "assistant", "system"])),
                         scope=draw(SCOPES), name=draw(st.none() | WORDS), created_at=draw(TIMES),
                         external_id=draw(st.none() | WORDS), metadata=draw(METADATA))


@st.composite
def records(draw: st.DrawFn, cited: list[str]) -> MemoryRecord:
    deleted = draw(st.booleans())
    refs = st.builds(SourceRef, st.sampled_from(cited) if cited else WORDS, st.sampled_from(["user", "assistant"]),
                     st.none() | TIMES, st.none() | WORDS)
    return MemoryRecord(
        content=draw(WORDS), scope=draw(SCOPES), hash=draw(st.sampled_from(["", "0" * 32]) | WORDS),
        actor_id=draw(st.none() | WORDS), role=draw(st.none() | st.sampled_from(["user", "assistant", "system"])),
        memory_type=draw(st.sampled_from(MemoryType)), layer=draw(st.sampled_from(Layer)),
        category=draw(st.sampled_from(Category)), importance=draw(FLOATS), strength=draw(FLOATS),
        access_count=draw(st.integers(0, 2 ** 31 - 1)), confidence=draw(FLOATS), source=draw(st.sampled_from(Source)),
        verified=draw(st.booleans()), tags=draw(st.lists(TEXT, max_size=3)), metadata=draw(METADATA),
        provenance=draw(st.lists(refs, max_size=3)), related_ids=draw(st.lists(WORDS, max_size=2)),
        compression_source_ids=draw(st.lists(WORDS, max_size=2)), created_at=draw(TIMES),
        updated_at=draw(st.none() | TIMES), last_accessed_at=draw(st.none() | TIMES),
        event_time=draw(st.none() | TIMES), expiration_date=draw(st.none() | TIMES),
        deleted_at=draw(TIMES) if deleted else None, delete_reason=draw(st.none() | WORDS) if deleted else None,
        version=draw(INT32))


@st.composite
def history_rows(draw: st.DrawFn, memory_id: str) -> HistoryEvent:
    return HistoryEvent(memory_id=memory_id, event=draw(st.sampled_from(Event)),
                        old_memory=draw(st.none() | TEXT), new_memory=draw(st.none() | TEXT),
                        created_at=draw(TIMES), updated_at=draw(st.none() | TIMES), is_deleted=draw(st.booleans()),
                        actor_id=draw(st.none() | WORDS), role=draw(st.none() | WORDS),
                        reason=draw(st.none() | WORDS))


@dataclass(slots=True)
class Contents:
    records: list[MemoryRecord]
    history: list[HistoryEvent]  # of the records, and of memories purged since (no record)
    messages: list[StoredMessage]


@st.composite
def contents(draw: st.DrawFn) -> Contents:
    said = draw(st.lists(messages(), max_size=4, unique_by=lambda m: m.id))
    kept = draw(st.lists(records([m.id for m in said]), max_size=5))
    history = [row for record in kept for row in draw(st.lists(history_rows(record.id), max_size=3))]
    purged = draw(st.lists(WORDS, max_size=2))
    history += [row for memory_id in purged for row in draw(st.lists(history_rows(memory_id), max_size=2))]
    return Contents(kept, history, said)


def _make(kind: str, tmp_path: Path, name: str) -> MemoryStore:
    if kind == "postgres":
        return build_store(pg.running().create_database())
    return build_store(f"sqlite:///{tmp_path / f'{name}.db'}")


@pytest.fixture
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    source, target = request.param
    if "postgres" in (source, target):
        request.getfixturevalue("postgres")
    made = [_make(source, tmp_path, "source"), _make(target, tmp_path, "target")]
    yield made[0], made[1]
    for store in made:
        store.close()
        if store.url.startswith("postgresql"):
            pg.running().drop_database(store.url)


def _export(store: MemoryStore) -> str:
    out = io.StringIO()
    export_jsonl(store, out, include_deleted=True)
    return out.getvalue()


def _lines(export: str) -> list[str]:
    # Not str.splitlines: a line may hold U+2028 or U+0085 in its JSON strings; only "\n" ends one.
    return export.split("\n")[:-1]


def _same_json(a: Any, b: Any, ordered: bool = True) -> bool:
    """The same JSON value: numbers by their decimal value (1e+20 and 100000000000000000000), the rest by type and
    value; `ordered`: object keys in the same order."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return Decimal(repr(a)) == Decimal(repr(b))  # as JSON has them: decimal numbers
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_json(x, y, ordered) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        keys_match = list(a) == list(b) if ordered else sorted(a) == sorted(b)
        return keys_match and all(_same_json(a[k], b[k], ordered) for k in a)
    return False


def _same_export(first: str, second: str) -> None:
    assert len(_lines(first)) == len(_lines(second))
    for one, other in zip(_lines(first), _lines(second), strict=True):
        if one == other:
            continue
        a, b = json.loads(one), json.loads(other)  # only a metadata number may be spelt otherwise
        assert _same_json(a.pop("metadata", None), b.pop("metadata", None)), (one, other)
        assert json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False), (one, other)


@pytest.mark.parametrize("two_stores", [(a, b) for a in STORE_KINDS for b in STORE_KINDS], indirect=True,
                         ids=lambda pair: "-to-".join(pair))
def test_an_export_imported_into_an_empty_store_exports_the_same(
        two_stores: tuple[MemoryStore, MemoryStore]) -> None:
    source, target = two_stores
    embedder = build_embedder("hashing")
    examples = 80 if all(store.url.startswith("sqlite") for store in two_stores) else 30

    @settings(max_examples=examples, deadline=None)
    @given(contents())
    def round_trip(data: Contents) -> None:
        source.reset()
        target.reset()
        source.bind_embedding(embedder.model_id, embedder.dims)
        source.add_messages(data.messages)
        source.insert(data.records, embedder.embed_documents([r.content for r in data.records]), data.history)
        first = _export(source)

        lines = [json.loads(line) for line in _lines(first)]
        kept = {r.id: r for r in data.records}
        read = [record_from_json(x) for x in lines if x["kind"] == "memory"]
        assert [replace(r, metadata={}) for r in read] == [replace(r, metadata={}) for r in data.records]
        assert all(_same_json(r.metadata, w.metadata, ordered=False) for r, w in zip(read, data.records, strict=True))
        assert sorted((history_from_json(x) for x in lines if x["kind"] == "history"), key=lambda h: h.id) == \
            sorted(data.history, key=lambda h: h.id)
        cited = {ref.message_id for r in kept.values() for ref in r.provenance}
        assert {m.id: m for m in map(message_from_json, (x for x in lines if x["kind"] == "message"))} == \
            {m.id: m for m in data.messages if m.id in cited}

        report = import_jsonl(target, embedder, io.StringIO(first))  # read as `jiyi import` reads its file
        assert report.errors == [] and report.imported == len(data.records)
        _same_export(first, _export(target))

    round_trip()


def test_every_field_of_every_kind_is_written() -> None:
    """A field added to a record, a history row or a message must be added to the export (and so to the test
    above's round trip): no field is left out of a line."""
    scope_fields = {"scope"}, {"user_id", "agent_id", "run_id"}
    record = MemoryRecord("x", Scope("u", "a", "r"))
    message = StoredMessage("x", "user", Scope("u", "a", "r"))
    row = HistoryEvent("m", Event.DELETE, "x", None, reason="asked")
    for written, kind in ((record_to_json(record), MemoryRecord), (message_to_json(message), StoredMessage),
                          (history_to_json(row), HistoryEvent)):
        names = {f.name for f in fields(kind)} - scope_fields[0]
        assert names <= set(written), f"{kind.__name__} fields not exported: {sorted(names - set(written))}"
        if kind is not HistoryEvent:
            assert scope_fields[1] <= set(written)


def test_history_is_written_as_history_shows_it() -> None:
    row = HistoryEvent("m", Event.DELETE, "x", None, reason="the user asked", is_deleted=True)
    assert history_to_json(row) == {"kind": "history", **history_item(row)}
    assert history_from_json(history_to_json(row)) == row


def test_an_older_export_without_version_or_reason_still_reads() -> None:
    line = record_to_json(MemoryRecord("x", Scope("u"), version=3))
    del line["version"]
    assert record_from_json(line).version == 1
    row = history_to_json(HistoryEvent("m", Event.ADD, None, "x"))
    assert "reason" not in row and history_from_json(row).reason is None


def test_a_backup_keeps_the_audit_trail_of_purged_memories(tmp_path: Path) -> None:
    """A full export (every scope, deleted memories too) carries the history rows a purge left; a user's export,
    which cannot tell whose they were, does not."""
    from jiyi import Memory

    with Memory(build_store(f"sqlite:///{tmp_path / 'a.db'}"), build_embedder("hashing")) as memory:
        memory_id = memory.add("a passing remark", user_id="bob", infer=False)["results"][0]["id"]
        memory.delete(memory_id, reason="user asked to forget")
        memory.store.purge(datetime.now(UTC) + timedelta(seconds=1))
        trail = memory.history(memory_id)
        backup = _export(memory.store)
        out = io.StringIO()
        export_jsonl(memory.store, out, Scope("bob"), include_deleted=True)
    assert [(r["event"], r.get("reason")) for r in trail] == [("ADD", None), ("DELETE", "user asked to forget")]
    assert [json.loads(line) for line in _lines(backup)][1:] == [{"kind": "history", **row} for row in trail]
    assert [json.loads(line)["kind"] for line in _lines(out.getvalue())] == ["jiyi-export"]
    with Memory(build_store(f"sqlite:///{tmp_path / 'b.db'}"), build_embedder("hashing")) as memory:
        assert import_jsonl(memory.store, memory.embedder, io.StringIO(backup)).history_rows == 2
        assert memory.history(memory_id) == trail


def test_a_deleted_memory_keeps_its_reason_and_version_through_the_cli_path(tmp_path: Path) -> None:
    """The issue's case: deleted with reason="user asked to forget", version 2 — both come back."""
    from jiyi import Memory

    source_url, target_url = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    with Memory(build_store(source_url), build_embedder("hashing")) as memory:
        memory_id = memory.add("a passing remark", user_id="bob", infer=False)["results"][0]["id"]
        memory.delete(memory_id, reason="user asked to forget")
        first = _export(memory.store)
    with Memory(build_store(target_url), build_embedder("hashing")) as memory:
        import_jsonl(memory.store, memory.embedder, io.StringIO(first))
        record = memory.store.get(memory_id, include_deleted=True)
        assert record is not None and record.version == 2
        assert [(r["event"], r.get("reason")) for r in memory.history(memory_id)] == \
            [("ADD", None), ("DELETE", "user asked to forget")]
        assert _export(memory.store) == first
