"""Decoded memories kept between searches, by id (issue 28).

A search reads some 60 candidate memories, and the same ones come back search after search: reading and decoding
them (SqliteStore.get_many) took ~1.3 ms of a ~8 ms search at 10k memories, 0.6 of it SQL and 0.7 decoding.

What is kept is not the MemoryRecord a caller gets but a tuple of its field values, with its lists as tuples. Each
read builds a new record from it (2.3 us, against 9.4 to decode a row), so a caller may change what it gets - fields,
lists, metadata - without changing what the next caller reads. The tuples also spare the garbage collector: a
record with its lists is seven objects it tracks, an entry two (a tuple of strings alone is not tracked at all), and
every full collection walks them all (see _indexed_words in core/retrieval.py).

The store keeps it right: it drops every entry on a write it does not know to leave memories alone, on a rollback
and on another connection's write, and counts its own reads (`record_access`) into the entries it holds. A read that
finds a memory missing decodes it from the database outside the store's lock and brings it back here with the
`generation` it read at: if anything changed the cache since, the record it read may be older than the database, so
it is not kept (it is read again next time).
"""

from __future__ import annotations

import copy
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Any

from jiyi.records import MemoryRecord

# Every memory of a 10k-memory user twice over, or the memories searched most of a store with more. An entry took
# ~0.95 kB (tracemalloc, the 10k store of bench/throughput.py), so 20,000 are ~20 MB beside the vector cache's 1.5 kB a
# row; each is two objects the garbage collector tracks (the tuple, and its provenance tuple of SourceRefs): 20,000
# entries made a gen-2 collection 19 -> 48 ms (median of 9, busy 2-core machine), where 20,000 MemoryRecords held as
# they are (seven objects each) made it 84. A full collection comes once some 25 % more long-lived objects pile up:
# rarely once the cache is full, while entries the collector does not track (enums, scope and SourceRefs rebuilt at
# each read) took 6.7 us a read against 2.3 (decoding a row: 9.4), at each of a search's ~60 reads.
MAX_CACHED_RECORDS = 20_000

_FIELDS = MemoryRecord.__slots__
_values_of = attrgetter(*_FIELDS)
_LISTS = tuple(_FIELDS.index(name) for name in
               ("tags", "categories", "provenance", "related_ids", "compression_source_ids"))
_METADATA = _FIELDS.index("metadata")
_ACCESS_COUNT = _FIELDS.index("access_count")
_LAST_ACCESSED = _FIELDS.index("last_accessed_at")

_FLAT = (str, int, float, bool, type(None))


def _own_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    # Metadata is the caller's JSON: a nested list or object is copied whole, so no reader shares it either.
    if not metadata:
        return {}
    return dict(metadata) if all(isinstance(v, _FLAT) for v in metadata.values()) else copy.deepcopy(metadata)


def freeze(record: MemoryRecord) -> tuple[Any, ...]:
    """A record's field values, none of which a caller holds: its lists become tuples, its metadata a copy."""
    values = list(_values_of(record))
    for i in _LISTS:
        values[i] = tuple(values[i])
    values[_METADATA] = _own_metadata(values[_METADATA])
    return tuple(values)


def _thawing() -> Callable[[tuple[Any, ...]], MemoryRecord]:
    """thaw(), written out field by field: a new record whose slots are set one by one from the values, its lists and
    metadata copied - 0.9 us a record where a list of the values and MemoryRecord(*fields) took 1.3 (a search thaws
    some 60). MemoryRecord.__init__ is not run again: the values are a record's own, checked and hashed when it was
    made (its __post_init__ changes nothing of them)."""
    lines = [f"    record.{name} = " + (f"_list(values[{i}])" if i in _LISTS else
                                        f"_own_metadata(values[{i}])" if i == _METADATA else f"values[{i}]")
             for i, name in enumerate(_FIELDS)]
    source = "def thaw(values):\n    record = _new(MemoryRecord)\n" + "\n".join(lines) + "\n    return record\n"
    namespace: dict[str, Any] = {"_new": object.__new__, "MemoryRecord": MemoryRecord, "_list": list,
                                 "_own_metadata": _own_metadata}
    exec(source, namespace)  # the source is made of MemoryRecord's own field names
    thaw: Callable[[tuple[Any, ...]], MemoryRecord] = namespace["thaw"]
    thaw.__doc__ = "A new record from frozen values, with lists and metadata of its own."
    return thaw


thaw = _thawing()


class RecordCache:
    """Frozen memories by id, least recently read dropped first past `capacity`. Not thread-safe by itself: the
    store calls it under its lock."""

    def __init__(self, capacity: int = MAX_CACHED_RECORDS) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
        # Moves on with every change of an entry: a record read from the database at an older generation may be
        # older than what the database holds now, and is not kept (see put).
        self.generation = 0

    def __len__(self) -> int:
        return len(self._entries)

    def take(self, memory_ids: Iterable[str]) -> tuple[dict[str, tuple[Any, ...]], list[str]]:
        """The frozen entries held for these ids (thaw them, outside the lock), and the ids not held."""
        found: dict[str, tuple[Any, ...]] = {}
        missing: list[str] = []
        entries = self._entries
        for memory_id in memory_ids:
            values = entries.get(memory_id)
            if values is None:
                missing.append(memory_id)
            else:
                entries.move_to_end(memory_id)
                found[memory_id] = values
        return found, missing

    def put(self, frozen: Sequence[tuple[Any, ...]], generation: int) -> None:
        """Keep records read from the database at `generation`, if nothing changed the cache since."""
        if generation != self.generation:
            return
        entries = self._entries
        for values in frozen:
            entries[values[2]] = values  # the id
            entries.move_to_end(values[2])
        while len(entries) > self.capacity:
            entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()
        self.generation += 1

    def count_access(self, memory_ids: Sequence[str], when: datetime | None) -> None:
        """What record_access wrote: each id listed adds one to access_count; `when` is last_accessed_at as the
        database gives it back (parse_datetime(format_datetime(when)))."""
        self.generation += 1
        entries = self._entries
        if not entries:  # this runs inside every record_access transaction: nothing more to do than the above
            return
        for memory_id, times in Counter(memory_ids).items():
            values = entries.get(memory_id)
            if values is not None:
                changed = list(values)
                changed[_ACCESS_COUNT] += times
                changed[_LAST_ACCESSED] = when
                entries[memory_id] = tuple(changed)
