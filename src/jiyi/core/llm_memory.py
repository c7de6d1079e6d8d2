"""Extraction, decisions and episode summaries by an LLM: prompts in, parsed and validated structures out.

Whatever the model answers is checked here: unknown ids, missing texts and unknown events are dropped, never applied,
and ids are small integers the model cannot invent (mem0's temp_uuid_mapping).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from jiyi.core import prompts
from jiyi.core.facts import Candidate, Decision, Fact, FactKind, is_chinese
from jiyi.core.messages import ChatMessage
from jiyi.core.offline import overlap
from jiyi.llms.base import LLM, LLMBadOutput, ask_json
from jiyi.records import Category, Event

MAX_FACT_CHARS = 500


def render_conversation(messages: Sequence[ChatMessage], when: datetime | None = None) -> str:
    lines = []
    if when is not None:
        lines.append(f"Conversation date: {when.strftime('%Y-%m-%d %H:%M')} (UTC)\n")
    for message in messages:
        if message.role not in ("user", "assistant") or not message.content.strip():
            continue
        who = message.role if not message.name else f"{message.role} ({message.name})"
        lines.append(f"{who}: {message.content.strip()}")
    return "\n".join(lines)


def _conversation_is_chinese(messages: Sequence[ChatMessage]) -> bool:
    return is_chinese(" ".join(m.content for m in messages if m.role == "user") or
                      " ".join(m.content for m in messages))


def _facts_from(answer: dict[str, Any], about: str) -> list[Fact]:
    items = answer.get("facts", answer.get("items"))
    if items is None:
        raise LLMBadOutput("the extraction answer has no \"facts\" list")
    if not isinstance(items, list):
        raise LLMBadOutput("\"facts\" is not a list")
    facts = []
    for item in items:
        text: Any
        if isinstance(item, str):
            text, kind, importance, category = item, "other", 0.5, "fact"
        elif isinstance(item, dict):
            text = item.get("text") or item.get("fact") or item.get("memory") or ""
            kind, importance = item.get("type", "other"), item.get("importance", 0.5)
            category = item.get("category", "")
        else:
            continue
        if not isinstance(text, str) or not text.strip():
            continue
        try:
            fact_kind = FactKind(str(kind).lower())
        except ValueError:
            fact_kind = FactKind.OTHER
        if about == "assistant":
            fact_kind = FactKind.PERSONA
        try:
            weight = min(max(float(importance), 0.0), 1.0)
        except (TypeError, ValueError):
            weight = 0.5
        named = item.get("categories") if isinstance(item, dict) else None
        facts.append(Fact(text=text.strip()[:MAX_FACT_CHARS], kind=fact_kind, importance=weight,
                          category=Category.CORE if str(category).lower() == "core" else Category.FACT, about=about,
                          categories=tuple(c.strip() for c in named if isinstance(c, str))[:5]
                          if isinstance(named, list) else ()))
    return facts


def categories_request(categories: Sequence[tuple[str, str]]) -> str:
    """What the extraction asks beside the facts: mem0's categories of each (names the write path does not know
    are dropped there; a fact without any is categorised offline)."""
    lines = [f"- {name}: {description}" if description else f"- {name}" for name, description in categories]
    return ("Also give each fact \"categories\": a list of one or two of these names, the ones it is about:\n"
            + "\n".join(lines))


async def extract_facts(
    llm: LLM,
    messages: Sequence[ChatMessage],
    *,
    about: str = "user",
    when: datetime | None = None,
    custom_prompt: str | None = None,
    custom_instructions: str | None = None,
    timeout: float | None = None,
    categories: Sequence[tuple[str, str]] = (),
) -> list[Fact]:
    """Facts about the user (`about="user"`) or the assistant; raises LLMError when the LLM cannot be used.
    `categories`: (name, description) of mem0's categories to ask for each fact (see categories_request)."""
    chinese = _conversation_is_chinese(messages)
    if custom_prompt:
        system = custom_prompt  # mem0's custom_fact_extraction_prompt: the caller's words, answering {"facts": [...]}
    else:
        system = prompts.user_facts_prompt(chinese) if about == "user" else prompts.agent_facts_prompt(chinese)
        if custom_instructions:
            system = f"{custom_instructions.strip()}\n{prompts.FORMAT_REMINDER}" if about == "user" else system
    conversation = render_conversation(messages, when)
    data = f"Conversation:\n{conversation}"
    if categories:
        data += f"\n\n{categories_request(categories)}"
    answer = await ask_json(llm, [{"role": "system", "content": system},
                                  {"role": "user", "content": data}], timeout=timeout)
    return _facts_from(answer, about)


async def decide(
    llm: LLM,
    facts: Sequence[Fact],
    candidates: Sequence[Candidate],
    *,
    shown: Sequence[Candidate] = (),
    reply: str | None = None,
    custom_prompt: str | None = None,
    timeout: float | None = None,
) -> list[Decision]:
    """ADD / UPDATE / DELETE / NONE per fact against `candidates`, and BOOST for memories in `shown` (those the
    assistant was given for its reply) that shaped `reply`."""
    known: dict[str, Candidate] = {}
    for candidate in [*candidates, *shown]:
        known.setdefault(candidate.memory_id, candidate)
    temp_ids = {str(i): real for i, real in enumerate(known)}
    real_to_temp = {real: temp for temp, real in temp_ids.items()}
    chinese = is_chinese(" ".join(f.text for f in facts))
    instructions = custom_prompt or prompts.decide_prompt(chinese)
    existing = [{"id": real_to_temp[c.memory_id], "text": c.text} for c in candidates]
    data = [f"Existing memories: {_json(existing)}", f"New facts: {_json([f.text for f in facts])}"]
    if shown and reply:
        given = [{"id": real_to_temp[c.memory_id], "text": c.text} for c in shown]
        data.append(f"Memories given to the assistant: {_json(given)}")
        data.append(f"The assistant's reply: {_json(reply)}")
    answer = await ask_json(llm, [{"role": "system", "content": instructions},
                                  {"role": "user", "content": "\n".join(data)}], timeout=timeout)
    items = answer.get("memory", answer.get("items"))
    if not isinstance(items, list):
        raise LLMBadOutput("the decision answer has no \"memory\" list")
    shown_ids = {c.memory_id for c in shown}
    boosted: set[str] = set()
    decisions: list[Decision] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        event_name = str(item.get("event", "")).upper()
        text = item.get("text") if isinstance(item.get("text"), str) else None
        text = text.strip()[:MAX_FACT_CHARS] if text else None
        target = temp_ids.get(str(item.get("id", "")).strip())
        if event_name == "ADD" and text:
            decisions.append(Decision(Event.ADD, text, fact=_closest_fact(text, facts)))
        elif event_name == "UPDATE" and text:
            if target is None:  # an invented id: keep the information as a new memory rather than lose it
                decisions.append(Decision(Event.ADD, text, fact=_closest_fact(text, facts), reason="unknown id"))
            else:
                decisions.append(Decision(Event.UPDATE, text, target, known[target].text, _closest_fact(text, facts)))
        elif event_name == "DELETE" and target is not None:
            decisions.append(Decision(Event.DELETE, known[target].text, target, known[target].text))
        elif event_name == "NONE" and target is not None:
            decisions.append(Decision(Event.NONE, known[target].text, target))
        elif event_name == "BOOST" and target in shown_ids and target not in boosted:
            boosted.add(target)  # once per turn, however often the model says it
            decisions.append(Decision(Event.BOOST, known[target].text, target))
    return decisions


def _closest_fact(text: str, facts: Sequence[Fact]) -> Fact | None:
    if not facts:
        return None
    return max(facts, key=lambda f: overlap(text, f.text))


async def summarize_episode(llm: LLM, messages: Sequence[ChatMessage], *, timeout: float | None = None) -> str:
    chinese = _conversation_is_chinese(messages)
    answer = await ask_json(llm, [{"role": "system", "content": prompts.episode_prompt(chinese)},
                                  {"role": "user", "content": render_conversation(messages)}], timeout=timeout)
    summary = answer.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise LLMBadOutput("the summary answer has no \"summary\" text")
    return summary.strip().splitlines()[0][:300]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
