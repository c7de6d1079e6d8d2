"""bench/lifecycle_data.py (the generator and its ground truth) and bench/lifecycle.py (a tiny end-to-end run with
the hashing embedder)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from jiyi.core import offline
from jiyi.core.messages import ChatMessage

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import lifecycle
import lifecycle_data as data

USERS, DAYS = 12, 120


@pytest.fixture(scope="module")
def histories() -> list[data.History]:
    return data.histories(USERS, DAYS, seed=3)


def test_same_seed_same_chats(histories: list[data.History]) -> None:
    assert data.histories(USERS, DAYS, seed=3) == histories
    assert data.histories(USERS, DAYS, seed=4) != histories
    # Each user has their own random stream: user k does not depend on how many users there are.
    assert data.histories(3, DAYS, seed=3) == histories[:3]


def test_a_shorter_run_is_a_prefix_with_the_truth_of_its_last_day(histories: list[data.History]) -> None:
    for full in histories:
        short = data.user_history(int(full.user_id[-4:]), DAYS, seed=3, until=40)
        assert short.sessions == tuple(s for s in full.sessions if s.day < 40)
        assert short.statements == tuple(s for s in full.statements if s.day < 40)
        for probe in short.probes:
            assert probe.value.key == [s for s in short.statements if s.fact == probe.fact][-1].value


def test_shape_of_the_chats(histories: list[data.History]) -> None:
    assert {h.lang for h in histories} == {"zh", "en"}
    for history in histories:
        days = [s.day for s in history.sessions]
        assert set(days) == set(range(DAYS))  # chats every day
        assert max(days.count(d) for d in set(days)) <= 3
        for session in history.sessions:
            assert session.user_id == history.user_id
            assert all(e.user.strip() and e.assistant.strip() for e in session.exchanges)
        times = [s.time_of(i) for s in history.sessions for i in range(len(s.exchanges))]
        assert times == sorted(times) and len(set(times)) == len(times)  # a user's sessions never overlap
        kinds = [e.kind for s in history.sessions for e in s.exchanges]
        assert kinds.count("chat") > len(kinds) / 2  # chit-chat is most of it
        assert kinds.count("habit") >= DAYS // 4


def test_every_planted_fact_is_said_and_the_truth_is_the_last_value_said(histories: list[data.History]) -> None:
    for history in histories:
        said = [(s.day, e.fact, e.value) for s in history.sessions for e in s.exchanges if e.fact is not None]
        assert [(s.day, s.fact, s.value) for s in history.statements] == said
        probed = {p.fact: p for p in history.probes}
        assert set(data.STABLE_FACTS) | {"residence", "job"} <= set(probed)  # diet: half of the users
        assert set(probed) == {fact for _, fact, _ in said}
        for fact, probe in probed.items():
            values = [value for _, f, value in said if f == fact]
            assert probe.times_said == len(values) and probe.value.key == values[-1]
            assert [v.key for v in probe.old] == list(dict.fromkeys(v for v in values if v != values[-1]))
            assert probe.query.strip()
            if fact in data.STABLE_FACTS:
                assert set(values) == {values[0]} and not probe.changed
    changed = [p for h in histories for p in h.probes if p.changed]
    assert {p.fact for p in changed} == {"residence", "job", "diet"}
    assert any(len(p.old) == 2 for p in changed)  # some facts change twice


def test_planted_statements_are_in_forms_the_offline_rules_parse(histories: list[data.History]) -> None:
    """The benchmark measures the lifecycle: every statement of a planted fact must be extracted with its value."""
    values = {(h.user_id, p.fact, v.key): v for h in histories for p in h.probes for v in (p.value, *p.old)}
    checked = 0
    for history in histories:
        for session in history.sessions:
            for e in session.exchanges:
                if e.fact is None:
                    continue
                facts = offline.extract_user_facts([ChatMessage(role="user", content=e.user)])
                value = values[(history.user_id, e.fact, e.value)]
                assert any(value.matches(f.text) for f in facts), (e.user, [f.text for f in facts], value)
                checked += 1
    assert checked > USERS * 8


def test_value_matching() -> None:
    vegetarian, not_vegetarian = data.ZH.diet_values["vegetarian"], data.ZH.diet_values["not_vegetarian"]
    assert vegetarian.matches("用户吃素") and not vegetarian.matches("用户不再吃素")
    assert not_vegetarian.matches("用户不再吃素") and not not_vegetarian.matches("用户吃素")
    english = data.EN.diet_values
    assert english["vegetarian"].matches("User is Vegetarian")
    assert not english["vegetarian"].matches("User is no longer vegetarian")
    assert english["not_vegetarian"].matches("User is no longer vegetarian")


def test_sim_clock_only_moves_forward() -> None:
    clock = lifecycle.SimClock(data.START)
    clock.set(data.START)
    assert clock() == data.START
    with pytest.raises(ValueError):
        clock.set(data.START.replace(year=2024))


def _run(tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / "lifecycle.json"
    result = lifecycle.main(["--users", "2", "--days", "40", "--limit", "10", "--embedder", "hashing",
                             "--out", str(out), "--quiet", *extra])
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(result, ensure_ascii=False))
    return result


def _check_run(result: dict[str, Any]) -> None:
    assert result["days_simulated"] == 10
    (month,) = result["months"]  # 10 days: one (partial) month
    assert month["day"] == 10 and month["live"] > 0 and month["sqlite_bytes"] > 0
    assert month["messages_sent"] == result["data"]["messages"] and month["rows"]["messages"] == month["messages_sent"]
    assert month["live"] == sum(month["categories"].values()) == sum(month["layers"].values())
    compression = result["compression"]
    written = compression["memories"]["written_by_write_path"] + compression["lifecycle_inserts"]
    assert written >= compression["memories"]["live"] > 0
    recall = result["recall"]
    assert recall["overall"]["n"] == result["data"]["planted_facts"] > 0
    assert sum(v["n"] for v in recall["by_fact"].values()) == recall["overall"]["n"]
    assert result["verdict"]["recall_at_5"]["value"] == recall["overall"]["rate"]
    assert result["verdict"]["growth_pct_per_month_after_month_2"]["met"] is None  # one month: not measured
    assert result["git"]["commit"] and "| month |" in lifecycle.month_table(result["months"])


def test_end_to_end_without_lifecycle(tmp_path: Path) -> None:
    result = _run(tmp_path, "--maintain-every", "0")
    _check_run(result)
    assert result["maintenance"]["passes"] == 0 and "no_lifecycle" not in result
    # With no lifecycle, nothing is ever removed: every memory the write path made is still there (UPDATEs rewrite
    # in place, the offline rules never delete).
    assert result["compression"]["memories"]["ratio"] == 1.0


def test_end_to_end_with_nightly_maintenance(tmp_path: Path) -> None:
    result = _run(tmp_path)
    _check_run(result)
    assert result["maintenance"]["passes"] == 10
    assert result["timings"]["maintain_s"]["n"] == 10
    assert result["maintenance"]["totals"]["processed"] > 0
    # The same chats with no maintenance, for the compression ratio: the write path made the same memories.
    baseline = result["no_lifecycle"]
    assert baseline["maintenance"]["passes"] == 0
    assert baseline["months"][-1]["messages_sent"] == result["months"][-1]["messages_sent"]
    versus = result["compression"]["vs_no_lifecycle"]
    assert versus["live"] == baseline["months"][-1]["live"]
    assert versus["memories_ratio"] == round(versus["live"] / result["months"][-1]["live"], 2)
    assert "compression vs no lifecycle" in lifecycle.report(result)


def test_growth_arithmetic() -> None:
    lives = [100, 200, 210, 189, 200]  # month 3 +5 %, month 4 -10 %, month 5 +5.8 %
    months = [{"month": i + 1, "day": 30 * (i + 1), "live": n, "content_bytes": 10 * n, "sqlite_bytes": 1000 * (i + 1)}
              for i, n in enumerate(lives)]
    months.append({"month": 6, "day": 170, "live": 400, "content_bytes": 4000, "sqlite_bytes": 6000})  # partial month
    growth = lifecycle.growth_summary(months)["live"]
    assert growth["pct_per_month"] == [None, 100.0, 5.0, -10.0, 5.82, 100.0]
    after = growth["after_month_2"]
    assert after["max"] == 5.82 and after["mean"] == 0.27 and after["to_month"] == 5  # the partial month is left out
    assert after["compound"] == round(((200 / 200) ** (1 / 3) - 1) * 100, 2) == 0.0
