"""Memories carry when the thing happened: the turn's timestamp, moved by a time the text names (core/temporal.py)."""

from __future__ import annotations

from pathlib import Path

from jiyi import Memory, build_embedder, build_store
from jiyi.memory import AsyncMemory


def test_a_fact_and_its_message_carry_the_day_the_text_names(tmp_path: Path) -> None:
    with Memory(_async=AsyncMemory(build_store(f"sqlite:///{tmp_path / 't.db'}"), build_embedder("hashing"))) as m:
        m.add("我昨天去宜家买了一个书架", user_id="u", timestamp="2026-03-05T10:00:00Z")
        m.add("I went hiking with Dana last Saturday", user_id="u", timestamp="2026-03-05T10:00:00Z")
        m.add("我对花生过敏", user_id="u", timestamp="2026-03-05T10:00:00Z")  # no time named: when it was said
        listed = m.get_all(user_id="u", include_messages=True, limit=100)["results"]
        days = {(r["category"], r["memory"]): r["event_time"][:10] for r in listed}
        assert days[("message", "我昨天去宜家买了一个书架")] == "2026-03-04"
        assert days[("message", "I went hiking with Dana last Saturday")] == "2026-02-28"
        assert days[("message", "我对花生过敏")] == "2026-03-05"
        facts = {text: day for (category, text), day in days.items() if category != "message"}
        assert any("宜家" in text and day == "2026-03-04" for text, day in facts.items()), facts
        when = m.search("我什么时候去的宜家", user_id="u", top_k=1)["results"][0]
        assert when["event_time"].startswith("2026-03-04")
