"""Turning what callers pass as `messages` (a string, one dict, a list of dicts) into validated chat messages."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from jiyi.errors import InvalidInput
from jiyi.records import StoredMessage
from jiyi.text import has_cjk

ROLES = frozenset({"user", "assistant", "system", "tool", "function", "developer"})


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str
    content: str
    name: str | None = None
    created_at: datetime | None = None
    external_id: str | None = None


def parse_time(value: Any, field: str = "timestamp") -> datetime | None:
    """ISO 8601 text, a datetime or Unix seconds; naive values are taken as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            parsed = datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidInput(f"{field}: {value!r} is not a valid Unix time") from exc
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(f"{field}: {value!r} is not an ISO 8601 date or datetime") from exc
    else:
        raise InvalidInput(f"{field}: expected an ISO 8601 string or Unix seconds, got {type(value).__name__}")
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError as exc:
        raise InvalidInput(f"{field}: {value!r} is out of the supported date range") from exc


def check_text(value: str, field: str) -> str:
    """Refuse strings that cannot be stored as UTF-8 (lone surrogates are valid JSON but not valid text)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{field} is not valid Unicode text (lone surrogate at position {exc.start})") from exc
    return value


def check_json_value(value: Any, field: str) -> Any:
    """Metadata must survive a JSON round trip in every store: finite numbers, text keys, valid Unicode."""
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise InvalidInput(f"{field} holds a number that is not finite (NaN or infinity)") from exc
    except TypeError as exc:
        raise InvalidInput(f"{field} must hold only JSON values: {exc}") from exc
    check_text(encoded, field)
    return value


# Content parts with nothing jiyi can read (mem0's multimodal messages, OpenAI's parts), named as the refusal names
# them. jiyi does not look at images or fetch documents: it keeps a part's "caption", or the text parts beside it.
MEDIA_PARTS = {"image_url": "an image", "input_image": "an image", "mdx_url": "a document", "pdf_url": "a PDF",
               "file": "a file", "input_file": "a file", "input_audio": "audio"}
TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def content_text(content: Any, where: str, *, media_needs_text: bool = True) -> str:
    """The text of a message's content: a string, one content part, or a list of them (text parts joined, a media
    part by its caption). Media without any text is refused when the text is to be remembered (`media_needs_text`);
    read for retrieval it is simply no text."""
    if isinstance(content, str):
        return content
    parts = [content] if isinstance(content, dict) else content
    if not isinstance(parts, list):
        raise InvalidInput(f"{where} must be a string, a content part or a list of content parts")
    texts: list[str] = []
    media: list[str] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        text = part.get("text") if kind in TEXT_PARTS else part.get("caption") if kind in MEDIA_PARTS else None
        if isinstance(text, str) and text.strip():
            texts.append(text)
        elif kind in MEDIA_PARTS:
            media.append(kind)
    if media and not texts and media_needs_text:
        raise InvalidInput(f"{where} is {MEDIA_PARTS[media[0]]} ({media[0]}) with no text: jiyi does not look at "
                           f'images or documents, so give what it shows as a "caption" beside {media[0]} or as a '
                           f'{{"type": "text"}} part')
    return "\n".join(texts)


def _message(item: Any, index: int, *, content_required: bool) -> ChatMessage:
    if not isinstance(item, dict):
        raise InvalidInput(f"messages[{index}] must be an object with role and content")
    role = item.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise InvalidInput(f"messages[{index}].role must be one of {sorted(ROLES)}, got {role!r}")
    content = item.get("content")
    if content is None and content_required:
        raise InvalidInput(f"messages[{index}] has no content")
    name = item.get("name")
    if name is not None and not isinstance(name, str):
        raise InvalidInput(f"messages[{index}].name must be a string")
    external_id = item.get("id", item.get("message_id"))
    return ChatMessage(
        role=role,
        content=check_text(content_text(content, f"messages[{index}].content", media_needs_text=content_required),
                           f"messages[{index}].content") if content is not None else "",
        name=check_text(name, f"messages[{index}].name") if name else None,
        created_at=parse_time(item.get("created_at", item.get("timestamp")), f"messages[{index}].created_at"),
        external_id=str(external_id) if external_id is not None else None,
    )


def normalize_messages(messages: Any) -> list[ChatMessage]:
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, dict):
        messages = [messages]
    if not isinstance(messages, list) or not messages:
        raise InvalidInput("messages must be a non-empty string, a message object or a non-empty list of them")
    return [_message(item, index, content_required=True) for index, item in enumerate(messages)]


def parse_chat(messages: Any, max_messages: int = 500) -> list[ChatMessage]:
    """A chat request's messages in OpenAI format, read for retrieval: like normalize_messages, but an empty or null
    content (an assistant message that only calls tools) is allowed."""
    if not isinstance(messages, list) or not messages:
        raise InvalidInput("messages must be a non-empty list of {role, content} objects")
    if len(messages) > max_messages:
        raise InvalidInput(f"messages holds {len(messages)} messages; at most {max_messages} are accepted")
    return [_message(item, index, content_required=False) for index, item in enumerate(messages)]


_EVIDENCE_IDS = uuid.UUID("5a0c1f4e-2f1b-4a57-9d1e-7c3b2a9e6d10")


def evidence_id(message_id: str) -> str:
    """The id of a message's evidence record: derived from the message, so a retried turn never stores it twice, and
    a reply's record finds the record of the message it answers."""
    return str(uuid.uuid5(_EVIDENCE_IDS, message_id))


CONVERSATION_GAP = timedelta(minutes=30)
PRECEDING_MAX_CHARS = 300


# "Name: text" / "名字：内容": a name (not a number, as in "10:30") and a colon followed by a space (not "http://").
_SPEAKER_PREFIX = re.compile(r"^\s*([^\s:：\d][^:：\n]{0,39}?)(?::\s+|：\s*)\S")


def speaker_of(message: StoredMessage) -> str | None:
    """Who said a message, when the caller told: its `name`, a "speaker" in its metadata, or a "Name: " prefix of its
    text (how plain clients send a conversation in which every message has role "user")."""
    if message.name:
        return message.name
    speaker = message.metadata.get("speaker") if isinstance(message.metadata, dict) else None
    if isinstance(speaker, str) and speaker.strip():
        return speaker.strip()
    return speaker_prefix(message.content)


# A name as a speaker prefix gives it: "Caroline", "Mary Jane", "Dr. Chen", "小明" — not "Favourite food", "Note to
# self" or "A client 6 memory 2", which a note written as "label: value" starts with. Two such notes stored one
# after the other are not two people talking, and neither is a speaker a question could name. Nor is a label with a
# number ("第12条", "第三点", "Item 3", "Day 2") or one of the words notes are headed with ("备注", "地址", "Note",
# "Reminder"): a store of "第N条：…" notes held a "speaker" per memory (issue 28).
_ALPHABETIC_NAME = re.compile(r"^[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}$")
_CJK_NAME_MAX = 6
_NUMBERED = re.compile(r"\d|^第[一二三四五六七八九十百千万两零〇]+|^[一二三四五六七八九十]+[、.．]?$")
_NOTE_HEADINGS = frozenset("""
    note notes nb ps p.s. reminder reminders todo to-do task tasks tip tips summary update edit re subject title topic
    date time day when where location place address phone tel email e-mail name age birthday question answer
    warning important info fyi status result results source quote example step item idea goal plan agenda memo
    备注 注 注意 注意事项 提醒 提示 地址 位置 地点 时间 日期 日子 电话 手机 邮箱 姓名 名字 年龄 生日 标题 主题 内容 问题
    答案 回答 总结 小结 结论 说明 原因 结果 来源 例子 例如 比如 步骤 事项 待办 计划 目标 想法 心得 感想 更新 补充 附
    重要 重点 要点 关键 状态 进度 摘要 引用 原话 任务 清单 记录 日记 笔记 今日 今天 昨天 明天 早上 晚上
""".split())


@lru_cache(maxsize=50_000)  # the same candidates come back search after search (core/speakers.py asks of each)
def speaker_prefix(text: str) -> str | None:
    """The name of a "Name: text" line, if it starts with one and the label looks like a name."""
    prefix = _SPEAKER_PREFIX.match(text)
    name = prefix.group(1).strip() if prefix else None
    return name if name is not None and _name_like(name) else None


def without_speaker(text: str) -> str:
    """The words of a "Name: text" line without the name (the text as it is when it has no such prefix)."""
    prefix = _SPEAKER_PREFIX.match(text)
    if prefix is None or not _name_like(prefix.group(1).strip()):
        return text
    return text[prefix.end() - 1:]


def _name_like(label: str) -> bool:
    if _NUMBERED.search(label) or label.casefold() in _NOTE_HEADINGS:
        return False
    if has_cjk(label):
        return len(label) <= _CJK_NAME_MAX and " " not in label
    return bool(_ALPHABETIC_NAME.match(label))


def _other_party(before: StoredMessage, message: StoredMessage) -> bool:
    if {before.role, message.role} == {"user", "assistant"}:
        return True
    speakers = speaker_of(before), speaker_of(message)
    return before.role == message.role and None not in speakers and speakers[0] != speakers[1]


def in_conversation(messages: Sequence[StoredMessage], gap: timedelta = CONVERSATION_GAP) -> list[str]:
    """For each message, the text its vector is made from: the message, preceded by the one said just before it when
    that one is the other party's turn in the same conversation (user after assistant or assistant after user, or
    two speakers told apart by name under one role; same scope, at most `gap` earlier).

    A reply such as "Yes, it was amazing!" or "是啊，超好吃" means nothing alone; with what it answers, its vector
    finds it. Statements stored one after another by the same party (a list of facts) keep vectors of their own."""
    texts = []
    for index, message in enumerate(messages):
        before = messages[index - 1] if index else None
        if (before is not None and _other_party(before, message) and before.content.strip()
                and before.scope == message.scope
                and timedelta(0) <= message.created_at - before.created_at <= gap):
            preceding = " ".join(before.content.split())[-PRECEDING_MAX_CHARS:]
            texts.append(f"{preceding}\n{message.content.strip()}")
        else:
            texts.append(message.content.strip())
    return texts
