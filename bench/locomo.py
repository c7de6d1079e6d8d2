"""LoCoMo evaluation harness: ingest LoCoMo-format conversations into jiyi as mem0 did (or as a plain client would),
then measure whether search finds the evidence turns of each question (any@k, frac@k, all@k), and optionally an
LLM-judged answer accuracy.

    /tmp/venv/bin/python bench/locomo.py --infer false --store /tmp/locomo_false.db   # every turn stored as is
    /tmp/venv/bin/python bench/locomo.py --infer true --store /tmp/locomo_true.db     # jiyi's offline extractor
    /tmp/venv/bin/python bench/locomo.py --infer both                                  # both, temporary stores
    /tmp/venv/bin/python bench/locomo.py --infer false --store /tmp/locomo_false.db --reuse --k 5 10 30
    /tmp/venv/bin/python bench/locomo.py --infer true --llm openai:gpt-4o-mini --llm-api-key KEY --judge
    /tmp/venv/bin/python bench/locomo.py --infer false --ingest plain --out /tmp/locomo-plain-false.json
    /tmp/venv/bin/python bench/locomo.py --embedder hashing --limit-conversations 1 --limit-questions 20  # smoke run

On a machine shared with other heavy processes, run with OMP_WAIT_POLICY=PASSIVE: the embedder's spinning OpenMP
threads otherwise make each call up to 20x slower (measured on 2 cores: 3.2 s instead of 0.15 s per add).

Data: ../shared/data/locomo/locomo-dev.json beside the repository (`--data PATH` for another LoCoMo-format file);
its README defines the metrics and the evidence quirks handled here.

* Ingestion, `--ingest mem0` (the default, so numbers stay comparable with mem0's and earlier runs): each
  conversation becomes two users, f"{sample_id}:{speaker}". Each session is fed to both in batches of `--batch`
  messages, in which that user's own turns are role "user" and the other speaker's "assistant".
  `--ingest plain` (what a client posting each turn to POST /memories does): one user per conversation, the
  sample_id; every turn is its own add of one message, role "user" whoever speaks (only the name in the content
  tells the speakers apart); --batch does not apply.
  Both: content is "Name: text", plus " [shares a photo: <caption>]" for image turns; each message's `id` is its
  dia_id, so every memory's provenance leads back to the turns it came from; the session date is the add's
  `timestamp` and each message's `created_at`. infer=false stores every message as a memory (mem0's infer=False);
  infer=true runs jiyi's write path (the offline rules, or the LLM given with --llm).
* Retrieval: each question (the raw question text) is searched with top_k = max(--k). mem0 ingestion: in both users
  of its conversation; the two lists are merged by score, de-duplicated by content + source turns (with infer=false
  each turn is stored for both users) and cut to k. Plain ingestion: in the conversation's one user, its list taken
  as it comes. A memory's turns are the external ids of its provenance.
* Metrics per question with evidence (normalised; ids absent from the conversation dropped; questions left without
  evidence skipped and counted): any@k (some evidence turn among the sources of the top k), frac@k (share of the
  evidence turns covered), all@k (every one covered); micro-averaged per category and over categories 1-4 (the
  headline). Category 5 (adversarial: its evidence is the turn the false premise was built from) is reported apart.
  Episode summaries (infer=true) cite every message of their stretch, ~30 turns; the numbers are also given with no
  credit for them ("no episode credit").
* Latency: each search call is timed (the sync facade, as a caller sees it), also all calls per question (two with
  mem0 ingestion, one with plain).
* --judge (needs --llm): the LLM answers each category 1-4 question from the merged top max(--k) memories, then
  grades its answer against the gold one, CORRECT or WRONG (like mem0's J); accuracy per category.
* --store PATH keeps the SQLite file; --reuse skips ingestion when the file already holds this data ingested with
  the same settings, --ingest among them (recorded in the store's state), so retrieval can be re-run quickly while
  tuning.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

import jiyi
from jiyi import Memory, build_embedder, build_store
from jiyi.embedders.base import Embedder
from jiyi.llms import LLM, LLMError, build_llm
from jiyi.llms.jsonparse import parse_json_object
from jiyi.stores.base import MemoryStore

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
DEFAULT_OUT = BENCH_DIR / "results" / "locomo.json"

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED_CATEGORIES = (1, 2, 3, 4)
HEADLINE = "1-4"
METRICS = ("any", "frac", "all")
SESSION_DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
STATE_KEY = "bench.locomo"
INGEST_MODES = ("mem0", "plain")

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?0*(\d+):0*(\d+)")
_EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")


# --- data ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None = None

    @property
    def content(self) -> str:
        photo = f" [shares a photo: {self.caption}]" if self.caption else ""
        return f"{self.speaker}: {self.text}{photo}"


@dataclass(frozen=True)
class Session:
    number: int
    started_at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    index: int  # position in the conversation's qa list
    question: str
    answer: str | None  # None for category 5 items that only carry an adversarial_answer
    category: int
    evidence: tuple[str, ...]  # normalised ids that exist in the conversation
    dropped: tuple[str, ...]  # normalised ids that do not


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def user_id(self, speaker: str) -> str:
        return user_id(self.sample_id, speaker)

    def user_ids(self, ingest_mode: str) -> tuple[str, ...]:
        """The users its turns went to: one per speaker (mem0), or the conversation's one (plain)."""
        if ingest_mode == "plain":
            return (self.sample_id,)
        return tuple(self.user_id(speaker) for speaker in self.speakers)

    @property
    def dia_ids(self) -> set[str]:
        return {turn.dia_id for session in self.sessions for turn in session.turns}


def user_id(sample_id: str, speaker: str) -> str:
    return f"{sample_id}:{speaker}"


def normalise_dia_id(text: str) -> str | None:
    """'D3:7', 'D:3:7' and 'D03:007' all mean 'D3:7'; anything else (a bare 'D') is None."""
    match = _DIA_ID.fullmatch(text.strip())
    return f"D{int(match.group(1))}:{int(match.group(2))}" if match else None


def normalise_evidence(evidence: str | Iterable[str], known: Collection[str] | None = None) -> list[str]:
    """Evidence strings as clean dia_ids, in order, once each: 'D8:6; D9:17' and 'D9:1 D4:4' hold several ids,
    'D:11:26' is D11:26, 'D30:05' is D30:5. With `known`, ids outside it are dropped."""
    parts = [evidence] if isinstance(evidence, str) else list(evidence)
    found: list[str] = []
    for part in parts:
        for piece in _EVIDENCE_SEPARATORS.split(str(part)):
            dia_id = normalise_dia_id(piece) if piece else None
            if dia_id and dia_id not in found and (known is None or dia_id in known):
                found.append(dia_id)
    return found


def parse_session_date(text: str) -> datetime:
    """LoCoMo's free-text session date ("1:56 pm on 8 May, 2023") as an aware UTC datetime; fails loudly."""
    try:
        return datetime.strptime(text.strip(), SESSION_DATE_FORMAT).replace(tzinfo=UTC)
    except (ValueError, AttributeError) as exc:
        raise ValueError(f"unparseable session date {text!r}; expected e.g. '1:56 pm on 8 May, 2023'") from exc


def _session(sample_id: str, number: int, raw: dict[str, Any], speakers: tuple[str, str]) -> Session:
    date_key = f"session_{number}_date_time"
    if date_key not in raw:
        raise ValueError(f"{sample_id}: session_{number} has no {date_key}")
    try:
        started_at = parse_session_date(raw[date_key])
    except ValueError as exc:
        raise ValueError(f"{sample_id}, {date_key}: {exc}") from None
    turns = []
    for item in raw[f"session_{number}"]:
        if item["speaker"] not in speakers:
            raise ValueError(f"{sample_id}, {item.get('dia_id')}: speaker {item['speaker']!r} is neither of {speakers}")
        dia_id = normalise_dia_id(str(item["dia_id"]))
        if dia_id is None:
            raise ValueError(f"{sample_id}: turn id {item['dia_id']!r} is not a dia_id")
        turns.append(Turn(dia_id, item["speaker"], item.get("text") or "", item.get("blip_caption") or None))
    return Session(number, started_at, tuple(turns))


def parse_conversation(item: dict[str, Any]) -> Conversation:
    sample_id = str(item["sample_id"])
    raw = item["conversation"]
    speakers = (raw["speaker_a"], raw["speaker_b"])
    if speakers[0] == speakers[1]:
        raise ValueError(f"{sample_id}: both speakers are called {speakers[0]!r}; their users would be one")
    numbers = sorted(int(m.group(1)) for key, value in raw.items()
                     if (m := _SESSION_KEY.fullmatch(key)) and isinstance(value, list))
    sessions = tuple(_session(sample_id, n, raw, speakers) for n in numbers)
    known = {turn.dia_id for session in sessions for turn in session.turns}
    questions = []
    for index, qa in enumerate(item.get("qa", [])):
        every = normalise_evidence(qa.get("evidence") or [])
        answer = qa.get("answer")
        questions.append(Question(
            index=index,
            question=str(qa["question"]),
            answer=None if answer is None else str(answer),
            category=int(qa["category"]),
            evidence=tuple(e for e in every if e in known),
            dropped=tuple(e for e in every if e not in known),
        ))
    return Conversation(sample_id, speakers, sessions, tuple(questions))


def load_conversations(path: Path = DEFAULT_DATA, limit: int | None = None) -> list[Conversation]:
    items = json.loads(Path(path).read_text(encoding="utf-8"))
    return [parse_conversation(item) for item in items[:limit]]


# --- ingestion -----------------------------------------------------------------------------------------------------


def session_messages(session: Session, speaker: str) -> list[dict[str, Any]]:
    """The session as `speaker`'s user sees it: their turns are "user", the other's "assistant"."""
    when = session.started_at.isoformat()
    return [{"role": "user" if turn.speaker == speaker else "assistant", "content": turn.content,
             "id": turn.dia_id, "created_at": when} for turn in session.turns]


def plain_message(session: Session, turn: Turn) -> dict[str, Any]:
    """A turn as a plain client posts it: role "user" whoever speaks; the name in the content tells them apart."""
    return {"role": "user", "content": turn.content, "id": turn.dia_id, "created_at": session.started_at.isoformat()}


def add_session_mem0(memory: Memory, conversation: Conversation, session: Session, *, infer: bool,
                     batch: int) -> tuple[int, int]:
    """The session to both speakers' users in batches, each speaker's turns "user" in their own view; (adds,
    messages)."""
    views = {speaker: session_messages(session, speaker) for speaker in conversation.speakers}
    adds = messages = 0
    for start in range(0, len(session.turns), batch):
        for speaker, view in views.items():
            chunk = view[start:start + batch]
            memory.add(chunk, user_id=conversation.user_id(speaker), infer=infer, timestamp=session.started_at)
            adds += 1
            messages += len(chunk)
    return adds, messages


def add_session_plain(memory: Memory, conversation: Conversation, session: Session, *, infer: bool,
                      batch: int) -> tuple[int, int]:
    """The session to the conversation's one user, one add per turn (as each turn would be posted); (adds,
    messages). `batch` is not used: it is there so both ways are called alike."""
    [user] = conversation.user_ids("plain")
    for turn in session.turns:
        memory.add([plain_message(session, turn)], user_id=user, infer=infer, timestamp=session.started_at)
    return len(session.turns), len(session.turns)


ADD_SESSION = {"mem0": add_session_mem0, "plain": add_session_plain}


def ingest(memory: Memory, conversations: Sequence[Conversation], *, infer: bool, batch: int = 2,
           ingest_mode: str = "mem0", progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Feed every session the `ingest_mode` way (see ADD_SESSION); returns counts and wall time."""
    if batch < 1:
        raise ValueError("batch must be at least 1")
    add_session = ADD_SESSION[ingest_mode]
    started = time.perf_counter()
    adds = messages = 0
    for conversation in conversations:
        for session in conversation.sessions:
            added, sent = add_session(memory, conversation, session, infer=infer, batch=batch)
            adds += added
            messages += sent
        if progress:
            progress(f"ingested {conversation.sample_id} ({time.perf_counter() - started:.0f} s)")
    return {"seconds": round(time.perf_counter() - started, 2), "adds": adds, "messages": messages}


def memory_counts(store: MemoryStore) -> dict[str, Any]:
    by_category: Counter[str] = Counter()
    by_layer: Counter[str] = Counter()
    for record in store.iter_records():
        by_category[record.category.value] += 1
        by_layer[record.layer.value] += 1
    # Turns an LLM failed on stay queued for a retry this harness never runs: they count as lost here.
    return {"total": sum(by_category.values()), "by_category": dict(by_category), "by_layer": dict(by_layer),
            "turns_by_status": store.turn_counts()}


# --- retrieval and metrics -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Retrieved:
    content: str
    score: float
    dia_ids: tuple[str, ...]
    user_id: str
    category: str = "fact"
    event_time: str | None = None

    @property
    def is_episode(self) -> bool:
        return self.category == "episode"

    def to_json(self) -> dict[str, Any]:
        return {"memory": self.content, "score": self.score, "dia_ids": list(self.dia_ids), "user_id": self.user_id,
                "category": self.category, "event_time": self.event_time}


def dia_ids_of(item: dict[str, Any]) -> tuple[str, ...]:
    """The turns a search result came from: the external ids of its provenance."""
    refs = [ref.get("external_id") for ref in item.get("provenance", [])]
    return tuple(normalise_evidence([r for r in refs if r]))


def retrieved_from(item: dict[str, Any]) -> Retrieved:
    return Retrieved(item["memory"], float(item["score"]), dia_ids_of(item), str(item.get("user_id")),
                     str(item.get("category", "fact")), item.get("event_time"))


def merge_results(result_lists: Iterable[Iterable[Retrieved]], k: int) -> list[Retrieved]:
    """One ranking from several users' results: by score, best first; a memory with the same content and source
    turns as a better one is dropped (with infer=false each turn is stored once per speaker)."""
    pooled = sorted((r for results in result_lists for r in results),
                    key=lambda r: (-r.score, r.content, r.dia_ids, r.user_id))
    seen: set[tuple[str, frozenset[str]]] = set()
    merged = []
    for item in pooled:
        key = (item.content, frozenset(item.dia_ids))
        if key not in seen:
            seen.add(key)
            merged.append(item)
            if len(merged) == k:
                break
    return merged


def score_question(evidence: Collection[str], ranked_sources: Sequence[Collection[str]],
                   ks: Sequence[int]) -> dict[str, float]:
    """any@k, frac@k, all@k of one question, given the source turns of each ranked memory, best first."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question without evidence cannot be scored")
    scores: dict[str, float] = {}
    for k in ks:
        covered = wanted & set().union(*ranked_sources[:k])
        scores[f"any@{k}"] = float(bool(covered))
        scores[f"frac@{k}"] = len(covered) / len(wanted)
        scores[f"all@{k}"] = float(covered == wanted)
    return scores


def retrieve(memory: Memory, conversation: Conversation, question: str, top_k: int,
             ingest_mode: str = "mem0") -> tuple[list[Retrieved], list[float]]:
    """The conversation's users' results (both speakers', merged, for mem0 ingestion; the one user's as they come,
    for plain); and each search call's latency in ms."""
    lists, latencies = [], []
    for user in conversation.user_ids(ingest_mode):
        started = time.perf_counter()
        found = memory.search(question, user_id=user, top_k=top_k)
        latencies.append((time.perf_counter() - started) * 1000)
        lists.append([retrieved_from(item) for item in found["results"]])
    if len(lists) == 1:
        return lists[0][:top_k], latencies  # nothing to merge: the ranking is search's own
    return merge_results(lists, top_k), latencies


def evaluate(memory: Memory, conversations: Sequence[Conversation], ks: Sequence[int] = (5, 10),
             limit_questions: int | None = None, progress: Callable[[str], None] | None = None,
             ingest_mode: str = "mem0") -> list[dict[str, Any]]:
    """One row per question (the first `limit_questions` of each conversation): its retrieved memories, latencies,
    and its metrics (None when it has no evidence left), also with no credit for episode summaries."""
    top_k = max(ks)
    rows = []
    for conversation in conversations:
        for question in conversation.questions[:limit_questions]:
            ranked, latencies = retrieve(memory, conversation, question.question, top_k, ingest_mode)
            row: dict[str, Any] = {
                "sample_id": conversation.sample_id,
                "index": question.index,
                "category": question.category,
                "question": question.question,
                "answer": question.answer,
                "evidence": list(question.evidence),
                "dropped_evidence": list(question.dropped),
                "retrieved": ranked,
                "latency_ms": latencies,
                "metrics": None,
                "metrics_no_episode_credit": None,
                "episodes_in_top": sum(r.is_episode for r in ranked),
            }
            if question.evidence:
                row["metrics"] = score_question(question.evidence, [r.dia_ids for r in ranked], ks)
                row["metrics_no_episode_credit"] = score_question(
                    question.evidence, [() if r.is_episode else r.dia_ids for r in ranked], ks)
            rows.append(row)
        if progress:
            progress(f"searched {conversation.sample_id}: {len(rows)} questions so far")
    return rows


def summarise(rows: Sequence[dict[str, Any]], ks: Sequence[int] = (5, 10), key: str = "metrics") -> dict[str, Any]:
    """Micro-averages per category, the headline over categories 1-4, and category 5 apart (never in the headline).
    Each group: questions, scored (with evidence), skipped (without), and each metric."""
    names = [f"{m}@{k}" for k in ks for m in METRICS]
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row["category"]), []).append(row)
        if row["category"] in SCORED_CATEGORIES:
            groups.setdefault(HEADLINE, []).append(row)
    order = [str(c) for c in SCORED_CATEGORIES] + [HEADLINE, "5"]
    order += sorted(g for g in groups if g not in order)
    summary: dict[str, Any] = {}
    for label in order:
        members = groups.get(label, [])
        if not members and label != HEADLINE:
            continue
        scored = [row[key] for row in members if row[key] is not None]
        entry: dict[str, Any] = {
            "name": "overall" if label == HEADLINE else CATEGORY_NAMES.get(int(label), f"category {label}"),
            "questions": len(members),
            "scored": len(scored),
            "skipped_no_evidence": len(members) - len(scored),
        }
        for name in names:
            entry[name] = round(float(np.mean([s[name] for s in scored])), 4) if scored else None
        summary[label] = entry
    return summary


def percentiles(values: Sequence[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    data = np.asarray(values, dtype=float)
    return {"n": len(values), "p50": round(float(np.percentile(data, 50)), 2),
            "p99": round(float(np.percentile(data, 99)), 2), "mean": round(float(data.mean()), 2),
            "max": round(float(data.max()), 2)}


def latency_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    calls = [ms for row in rows for ms in row["latency_ms"]]
    return {"per_call": percentiles(calls), "per_question": percentiles([sum(row["latency_ms"]) for row in rows])}


def format_table(summary: dict[str, Any], ks: Sequence[int] = (5, 10)) -> str:
    names = [f"{m}@{k}" for k in ks for m in METRICS]
    lines = ["| category | scored | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
    for label, entry in summary.items():
        shown = f"**{label} {entry['name']}**" if label == HEADLINE else f"{label} {entry['name']}"
        if label == "5":
            shown += " (apart)"
        values = ["-" if entry[n] is None else f"{100 * entry[n]:.1f}" for n in names]
        lines.append(f"| {shown} | {entry['scored']} | " + " | ".join(values) + " |")
    return "\n".join(lines)


# --- LLM-judged answers --------------------------------------------------------------------------------------------

ANSWER_PROMPT = (
    "You answer a question about a long conversation between two people, using only the memories below. Each "
    "memory starts with the date it was said on; resolve 'yesterday', 'last week' and the like against that date. "
    "Answer in a few words, with dates as dates (e.g. 7 May 2023). If the memories do not hold the answer, say so "
    "briefly."
)
JUDGE_PROMPT = (
    "You grade an answer to a question against the gold answer. Be generous: the answer is CORRECT if it refers to "
    "the same thing as the gold answer, even when worded differently, longer, or with a date in another format; "
    'otherwise it is WRONG. Reply with JSON only: {"label": "CORRECT"} or {"label": "WRONG"}.'
)
_LABEL = re.compile(r"\b(CORRECT|INCORRECT|WRONG)\b")


def _memory_line(item: Retrieved) -> str:
    if item.event_time:
        try:
            return f"- ({datetime.fromisoformat(item.event_time).strftime('%d %B %Y')}) {item.content}"
        except ValueError:
            pass
    return f"- {item.content}"


def answer_messages(question: str, memories: Sequence[Retrieved]) -> list[dict[str, str]]:
    listed = "\n".join(_memory_line(m) for m in memories) or "(no memories)"
    return [{"role": "system", "content": ANSWER_PROMPT},
            {"role": "user", "content": f"Memories:\n{listed}\n\nQuestion: {question}\nAnswer:"}]


def judge_messages(question: str, gold: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": JUDGE_PROMPT},
            {"role": "user", "content": f"Question: {question}\nGold answer: {gold}\nAnswer: {answer}"}]


def parse_label(text: str) -> str | None:
    """CORRECT or WRONG from the judge's reply (JSON, or free text naming one); None when neither is there."""
    try:
        label = str(parse_json_object(text).get("label", "")).strip().upper()
    except Exception:
        label = ""
    if label not in ("CORRECT", "WRONG", "INCORRECT"):
        match = _LABEL.search(text.upper())
        label = match.group(1) if match else ""
    return {"CORRECT": "CORRECT", "WRONG": "WRONG", "INCORRECT": "WRONG"}.get(label)


async def _judge_row(llm: LLM, row: dict[str, Any], limit: asyncio.Semaphore) -> dict[str, Any]:
    async with limit:
        try:
            answer = (await llm.complete(answer_messages(row["question"], row["retrieved"]), json_mode=False,
                                         max_tokens=120, temperature=0.0)).strip()
        except LLMError as exc:
            return {"answer": None, "label": None, "error": f"answer: {exc}"}
        try:
            reply = await llm.complete(judge_messages(row["question"], str(row["answer"]), answer), json_mode=True,
                                       max_tokens=40, temperature=0.0)
        except LLMError as exc:
            return {"answer": answer, "label": None, "error": f"judge: {exc}"}
        label = parse_label(reply)
        return {"answer": answer, "label": label, "error": None if label else f"judge said {reply[:80]!r}"}


def judge(llm: LLM, rows: Sequence[dict[str, Any]], concurrency: int = 4) -> list[dict[str, Any]]:
    """Answer and grade each category 1-4 row that has a gold answer; the verdict goes into row["judged"]."""
    targets = [row for row in rows if row["category"] in SCORED_CATEGORIES and row["answer"] is not None]

    async def run() -> list[dict[str, Any]]:
        limit = asyncio.Semaphore(concurrency)
        try:
            return list(await asyncio.gather(*(_judge_row(llm, row, limit) for row in targets)))
        finally:
            await llm.aclose()

    for row, verdict in zip(targets, asyncio.run(run()), strict=True):
        row["judged"] = verdict
    return targets


def summarise_judgements(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy per category and over 1-4; an answer or grading that failed counts as not correct."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if "judged" in row:
            groups.setdefault(str(row["category"]), []).append(row["judged"])
            groups.setdefault(HEADLINE, []).append(row["judged"])
    summary = {}
    for label in [str(c) for c in SCORED_CATEGORIES] + [HEADLINE]:
        verdicts = groups.get(label, [])
        correct = sum(v["label"] == "CORRECT" for v in verdicts)
        summary[label] = {
            "name": "overall" if label == HEADLINE else CATEGORY_NAMES[int(label)],
            "questions": len(verdicts), "correct": correct,
            "wrong": sum(v["label"] == "WRONG" for v in verdicts),
            "errors": sum(v["label"] is None for v in verdicts),
            "accuracy": round(correct / len(verdicts), 4) if verdicts else None,
        }
    return summary


def format_judge_table(summary: dict[str, Any]) -> str:
    lines = ["| category | questions | J (accuracy) | errors |", "|---|---:|---:|---:|"]
    for label, entry in summary.items():
        shown = f"**{label} {entry['name']}**" if label == HEADLINE else f"{label} {entry['name']}"
        accuracy = "-" if entry["accuracy"] is None else f"{100 * entry['accuracy']:.1f}"
        lines.append(f"| {shown} | {entry['questions']} | {accuracy} | {entry['errors']} |")
    return "\n".join(lines)


# --- stores and runs -----------------------------------------------------------------------------------------------


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def ingestion_settings(data: Path, conversations: Sequence[Conversation], *, infer: bool, embedder: Embedder,
                       llm: LLM | None, batch: int, ingest_mode: str = "mem0") -> dict[str, Any]:
    """What a store's contents depend on: a reused store must match all of it."""
    return {
        "data": str(Path(data).resolve()),
        "data_sha256": file_sha256(data),
        "conversations": [c.sample_id for c in conversations],
        "ingest": ingest_mode,
        "infer": infer,
        "extractor": (llm.model_id if llm is not None else "offline") if infer else None,
        "embedder": embedder.model_id,
        "batch": batch,
    }


def open_store(path: Path | str, settings: dict[str, Any], reuse: bool,
               log: Callable[[str], None]) -> tuple[MemoryStore, dict[str, Any] | None]:
    """The store at `path`, and the recorded ingestion when `reuse` finds this data already in it. A store this
    harness wrote with other settings (or did not finish) is emptied; one it did not write is refused."""
    store = build_store(str(path))
    saved = json.loads(store.get_state(STATE_KEY) or "null")
    # Stores written before --ingest existed were all mem0's: they still match a mem0 run.
    saved_settings = {"ingest": "mem0", **saved["settings"]} if saved and saved.get("settings") else None
    if reuse and saved and saved_settings == settings and saved.get("ingestion"):
        return store, saved["ingestion"]
    if saved is None and (sum(store.count().values()) or store.embedding_binding() is not None):
        store.close()
        raise SystemExit(f"{path} holds data this harness did not write; give another --store")
    if saved is not None:
        log(f"{path}: emptying ({'other settings' if reuse else 'no --reuse'})")
        store.reset()
    store.set_state(STATE_KEY, json.dumps({"settings": settings, "ingestion": None}))
    return store, None


def git_info(where: Path = BENCH_DIR) -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def store_path_for(args: argparse.Namespace, infer: bool, tmp: Path) -> Path | str:
    mode = "true" if infer else "false"
    if args.store and "://" in args.store:  # a PostgreSQL database, used as it is
        if args.infer == "both":
            raise SystemExit("--store with a database URL takes one mode: --infer true or --infer false")
        return args.store
    if args.store is None:
        return tmp / f"locomo-{args.ingest}-infer-{mode}.db"
    path = Path(args.store)
    return path.with_name(f"{path.stem}.infer-{mode}{path.suffix}") if args.infer == "both" else path


def build_llm_from(args: argparse.Namespace) -> LLM | None:
    if not args.llm:
        return None
    options = {k: v for k, v in {"base_url": args.llm_base_url, "api_key": args.llm_api_key}.items() if v}
    return build_llm(args.llm, **options)


def run_mode(args: argparse.Namespace, infer: bool, conversations: Sequence[Conversation], embedder: Embedder,
             tmp: Path, log: Callable[[str], None]) -> dict[str, Any]:
    ks = sorted(set(args.k))
    llm = build_llm_from(args) if infer else None
    path = store_path_for(args, infer, tmp)
    settings = ingestion_settings(args.data, conversations, infer=infer, embedder=embedder, llm=llm, batch=args.batch,
                                  ingest_mode=args.ingest)
    store, ingestion = open_store(path, settings, args.reuse, log)
    # The graph recall path's limit is a read setting, not part of the ingestion: a store ingested once is searched
    # with and without it (--reuse --graph-limit 0).
    config = {"retrieval": {"graph_limit": args.graph_limit}} if args.graph_limit is not None else None
    memory = Memory(store, embedder, llm=llm, config=config)
    try:
        reused = ingestion is not None
        if ingestion is None:
            log(f"ingesting {len(conversations)} conversations ({args.ingest}), infer={str(infer).lower()} into {path}")
            ingestion = ingest(memory, conversations, infer=infer, batch=args.batch, ingest_mode=args.ingest,
                               progress=log)
            ingestion["memories"] = memory_counts(store)
            ingestion["library_git"] = git_info(Path(jiyi.__file__).parent)
            store.set_state(STATE_KEY, json.dumps({"settings": settings, "ingestion": ingestion}))
        elif ingestion.get("library_git") != git_info(Path(jiyi.__file__).parent):
            # Write-path changes are not part of the reuse key (that would defeat tuning the read path): say so.
            log(f"note: {path} was ingested by jiyi at {ingestion.get('library_git')}; drop --reuse if the write "
                "path changed since")
        rows = evaluate(memory, conversations, ks, args.limit_questions, progress=log, ingest_mode=args.ingest)
    finally:
        memory.close()
    result: dict[str, Any] = {
        "ingest": args.ingest,
        "infer": infer,
        "extractor": settings["extractor"],
        "store": str(path) if args.store else None,
        "reused_store": reused,
        "ingestion": ingestion,
        "questions": {
            "total": len(rows),
            "scored": sum(r["metrics"] is not None for r in rows),
            "skipped_no_evidence": sum(r["metrics"] is None for r in rows),
            "evidence_ids_dropped": sum(len(r["dropped_evidence"]) for r in rows),
            "with_episode_in_top": sum(r["episodes_in_top"] > 0 for r in rows),
        },
        "retrieval": summarise(rows, ks),
        "retrieval_no_episode_credit": summarise(rows, ks, key="metrics_no_episode_credit"),
        "latency_ms": latency_summary(rows),
    }
    if args.judge:
        judge_llm = build_llm_from(args)
        assert judge_llm is not None  # main() refuses --judge without --llm
        log(f"judging answers with {judge_llm.model_id}")
        judge(judge_llm, rows, args.judge_concurrency)
        result["judge"] = {"model": judge_llm.model_id, "accuracy": summarise_judgements(rows)}
    if args.details:
        result["details"] = [{**{k: v for k, v in row.items() if k != "retrieved"},
                              "retrieved": [r.to_json() for r in row["retrieved"]]} for row in rows]
    result["_rows"] = rows
    return result


def report(result: dict[str, Any], ks: Sequence[int], embedder: str, conversations: int) -> str:
    mode = f"{result['ingest']} ingestion, infer={str(result['infer']).lower()}"
    mode += f" ({result['extractor']})" if result["infer"] else ""
    ingestion, questions, latency = result["ingestion"], result["questions"], result["latency_ms"]
    lines = [
        f"### LoCoMo, {mode}, embedder {embedder}, {conversations} conversations",
        f"{questions['total']} questions, {questions['scored']} scored, {questions['skipped_no_evidence']} without "
        f"evidence skipped; ingestion {ingestion['seconds']:.1f} s"
        f"{' (reused store)' if result['reused_store'] else ''}, {ingestion['memories']['total']} memories",
        "",
        format_table(result["retrieval"], ks),
        "",
        f"search per call: p50 {latency['per_call']['p50']} ms, p99 {latency['per_call']['p99']} ms; "
        f"per question ({'1 call' if result['ingest'] == 'plain' else '2 calls'}): "
        f"p50 {latency['per_question']['p50']} ms, p99 {latency['per_question']['p99']} ms",
    ]
    if questions["with_episode_in_top"]:
        strict = result["retrieval_no_episode_credit"][HEADLINE]
        top = max(ks)
        lines.append(f"episode summaries in the top {top} of {questions['with_episode_in_top']} questions; with no "
                     f"credit for them, 1-4: any@{top} {100 * strict[f'any@{top}']:.1f}, "
                     f"frac@{top} {100 * strict[f'frac@{top}']:.1f}")
    if "judge" in result:
        lines += ["", f"LLM-judged answers ({result['judge']['model']}):", "",
                  format_judge_table(result["judge"]["accuracy"])]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a LoCoMo-format JSON file")
    parser.add_argument("--infer", "--mode", dest="infer", choices=["false", "true", "both"], default="false",
                        help="false: store every message as is; true: jiyi's extraction; both: one run of each")
    parser.add_argument("--store", help="SQLite file to keep (with --infer both, .infer-false/.infer-true are "
                                        "inserted before the suffix), or a postgresql:// URL of an empty "
                                        "database (one mode); default: a temporary SQLite file")
    parser.add_argument("--reuse", action="store_true", help="skip ingestion if the store already holds it")
    parser.add_argument("--ingest", choices=INGEST_MODES, default="mem0",
                        help="mem0: two users per conversation, one per speaker, batches of --batch; plain: one "
                             "user, one add per turn, every turn role user")
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--batch", type=int, help="messages per add with --ingest mem0 (default 2, as mem0)")
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10], help="cut-offs; searches use top_k=max")
    parser.add_argument("--llm", help='extraction (with --infer true) and judge model, e.g. "openai:gpt-4o-mini"')
    parser.add_argument("--llm-base-url")
    parser.add_argument("--llm-api-key")
    parser.add_argument("--judge", action="store_true", help="LLM-judged answer accuracy (needs --llm)")
    parser.add_argument("--judge-concurrency", type=int, default=4)
    parser.add_argument("--limit-conversations", type=int, help="only the first N conversations")
    parser.add_argument("--limit-questions", type=int, help="only the first N questions of each conversation")
    parser.add_argument("--graph-limit", type=int, help="memories the entity graph's recall path brings "
                                                         "(retrieval.graph_limit; 0: the path off); default 10")
    parser.add_argument("--details", action="store_true", help="also write every question's retrieved memories")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON result file")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    if args.judge and not args.llm:
        parser.error("--judge needs --llm")
    if args.ingest == "plain" and args.batch not in (None, 1):
        parser.error("--ingest plain adds one turn at a time; --batch is for --ingest mem0")
    # Recorded (and part of the --reuse key) as what was done: plain sends one message per add.
    args.batch = 1 if args.ingest == "plain" else (2 if args.batch is None else args.batch)
    if min(args.k) < 1 or args.batch < 1:
        parser.error("--k and --batch must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    started = time.perf_counter()

    def log(message: str) -> None:
        if not args.quiet:
            print(f"[{time.perf_counter() - started:6.0f} s] {message}", file=sys.stderr, flush=True)

    ks = sorted(set(args.k))
    conversations = load_conversations(args.data, args.limit_conversations)
    embedder = build_embedder(args.embedder)
    modes = {"false": [False], "true": [True], "both": [False, True]}[args.infer]
    tmp = Path(tempfile.mkdtemp(prefix="jiyi-locomo-"))
    results: dict[str, Any] = {}
    try:
        for infer in modes:
            result = run_mode(args, infer, conversations, embedder, tmp, log)
            print(report(result, ks, args.embedder, len(conversations)), end="\n\n", flush=True)
            result.pop("_rows")
            results[f"infer={str(infer).lower()}"] = result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    output = {
        "benchmark": "locomo",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "git": git_info(),  # of the harness; "library" says which jiyi was measured
        "data": {"path": str(Path(args.data).resolve()), "sha256": file_sha256(args.data),
                 "conversations": [c.sample_id for c in conversations]},
        "settings": {"k": ks, "ingest": args.ingest, "batch": args.batch, "embedder": args.embedder,
                     "embedder_model": embedder.model_id,
                     "llm": args.llm, "llm_base_url": args.llm_base_url, "judge": args.judge,
                     "limit_conversations": args.limit_conversations, "limit_questions": args.limit_questions,
                     "graph_limit": args.graph_limit},
        "library": {"jiyi": jiyi.__version__, "path": str(Path(jiyi.__file__).parent),
                    "git": git_info(Path(jiyi.__file__).parent)},
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                    "env": {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "JIYI_"))}},
        "wall_seconds": round(time.perf_counter() - started, 1),
        "modes": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(output, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    return output


if __name__ == "__main__":
    main()
