"""What the console draws and parses, without a server: the retention spread (a property: it is the forgetting curve
evaluated at each horizon, and it only ever moves down), the SVG (text escaped), ids linked in reasons, pasted
conversations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jiyi.core.forgetting import ForgettingCurve, last_reinforced
from jiyi.errors import InvalidInput
from jiyi.records import Category, MemoryRecord, MemoryType, Scope
from jiyi.server.ui.data import parse_conversation
from jiyi.server.ui.pictures import (
    HORIZONS,
    MAX_NEIGHBOURS,
    GraphNode,
    bucket_of,
    grouped_bars,
    horizontal_bars,
    lines,
    neighbourhood,
    retention_spread,
)
from jiyi.server.ui.rendering import link_ids
from jiyi.stores.base import Vitals

NOW = datetime(2026, 6, 1, tzinfo=UTC)

memories = st.builds(
    lambda category, kind, importance, recalls, age, reviewed, updated: MemoryRecord(
        "x", Scope("u"), category=category, memory_type=kind, importance=importance, access_count=recalls,
        created_at=NOW - timedelta(days=age),
        last_accessed_at=NOW - timedelta(days=age * reviewed) if reviewed else None,
        updated_at=NOW - timedelta(days=age * updated) if updated else None),
    st.sampled_from(list(Category)), st.sampled_from(list(MemoryType)), st.floats(-1, 3), st.integers(0, 50),
    st.floats(-2, 400), st.floats(0, 1), st.floats(0, 1))


def vitals(records: list[MemoryRecord]) -> Vitals:
    """The columns a store gives for these memories."""
    return Vitals(np.array([r.category.value for r in records], dtype=str),
                  np.array([r.memory_type.value for r in records], dtype=str),
                  np.array([r.importance for r in records], dtype=np.float64),
                  np.array([r.access_count for r in records], dtype=np.float64),
                  np.array([last_reinforced(r).timestamp() for r in records], dtype=np.float64))


@settings(max_examples=200, deadline=None)
@given(st.lists(memories, max_size=30))
def test_the_spread_is_the_curve_at_each_horizon_and_only_moves_down(records: list[MemoryRecord]) -> None:
    curve = ForgettingCurve()
    spread = retention_spread(vitals(records), curve, NOW)
    assert spread.total == len(records)
    for key, days in HORIZONS:
        direct = [0] * 6
        for record in records:
            direct[bucket_of(curve.retention(record, NOW + timedelta(days=days)))] += 1
        assert spread.counts[key] == direct, key
    for earlier, later in pairwise(HORIZONS):
        above = [sum(spread.counts[earlier[0]][:i]) for i in range(1, 7)]
        below = [sum(spread.counts[later[0]][:i]) for i in range(1, 7)]
        assert all(b <= a for a, b in zip(above, below, strict=True))  # never more memories above a line later


def test_core_memories_never_fade_in_the_picture() -> None:
    core = MemoryRecord("x", Scope("u"), category=Category.CORE, created_at=NOW - timedelta(days=300))
    spread = retention_spread(vitals([core]), ForgettingCurve(), NOW)
    assert all(counts[0] == 1 for counts in spread.counts.values())


def test_pictures_escape_their_text() -> None:
    evil = '<script>alert("x")</script>'
    for svg in (grouped_bars(evil, [evil], [(evil, "#000", [3])]), horizontal_bars(evil, [(evil, 2, "#000")]),
                lines(evil, [evil, evil], [(evil, "#000", [1, 2])])):
        assert "<script>" not in svg and "&lt;script&gt;" in svg and svg.startswith("<svg")


def test_an_entitys_neighbourhood_points_each_relation_its_way_and_escapes_names() -> None:
    centre = GraphNode("<b>Arjun</b>", "person")
    neighbours = [GraphNode("alice", "user", None, (("brother_of", True, True),)),
                  GraphNode("Chicago & co", "place", "/ui/users/alice/entities/c?x=1&y=2",
                            (("lives_in", True, False),)),
                  GraphNode("Priya", "person", "/ui/users/alice/entities/p", (("girlfriend_of", False, True),
                                                                                ("friend_of", True, True)))]
    svg = str(neighbourhood("Arjun's neighbours", centre, neighbours, "ended"))
    assert "<b>" not in svg and "&lt;b&gt;Arjun&lt;/b&gt;" in svg and "Chicago &amp; co" in svg
    assert 'href="/ui/users/alice/entities/c?x=1&amp;y=2"' in svg and svg.count("<a href=") == 2  # the user: no page
    edges = [line.split("/>")[0] for line in svg.split("<line ")[1:]]
    assert ['class="edge closed"' in edge for edge in edges] == [False, True, False]  # only the Chicago one ended
    assert "lives_in (ended)" in svg and "girlfriend_of, friend_of" in svg
    assert 'marker-end="url(#arrow)"' in edges[0] and "marker" not in edges[2]  # Priya: both ways, no arrow
    many = [GraphNode(f"n{i}", "thing", None, (("knows", True, True),)) for i in range(MAX_NEIGHBOURS + 5)]
    assert str(neighbourhood("many", centre, many, "ended")).count("<circle") == MAX_NEIGHBOURS + 1


def test_memory_ids_in_reasons_become_links_and_the_rest_stays_text() -> None:
    linked = link_ids("merged into 3f2c1b9e-1111-4222-8333-123456789abc <b>")
    assert '<a href="/ui/memories/3f2c1b9e-1111-4222-8333-123456789abc">3f2c1b9e…</a>' in linked
    assert "&lt;b&gt;" in linked and "<b>" not in linked
    assert link_ids(None) == ""


def test_a_pasted_conversation_is_read_line_by_line_or_as_json() -> None:
    assert parse_conversation("user: 我最近睡不好\n助手：怎么了？\n  还好吗\n用户: 那个事情呢") == [
        {"role": "user", "content": "我最近睡不好"}, {"role": "assistant", "content": "怎么了？\n  还好吗"},
        {"role": "user", "content": "那个事情呢"}]
    assert parse_conversation("hello there") == [{"role": "user", "content": "hello there"}]
    assert parse_conversation('[{"role": "user", "content": "hi"}]') == [{"role": "user", "content": "hi"}]
    for bad in ("", "   ", "[not json", "[1, 2"):
        with pytest.raises(InvalidInput):
            parse_conversation(bad)
