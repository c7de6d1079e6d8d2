"""Every label of the console in English and Chinese: each key has both texts with the same placeholders, every key
a template or route names exists, and the language follows the browser until the visitor picks one."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from jiyi.core.categories import DEFAULT_NAMES
from jiyi.records import Category, Event, Layer, MemoryType, Source, TurnStatus
from jiyi.server.ui import i18n
from jiyi.server.ui.i18n import MESSAGES, Translator, negotiate
from jiyi.stores.entities import ENTITY_KINDS

UI = Path(i18n.__file__).parent
LITERAL_KEY = re.compile(r"""\bt\(\s*["']([a-z_]+\.[A-Za-z_.0-9-]+)["']""")


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_label_has_both_languages_with_the_same_placeholders() -> None:
    for key, (english, chinese) in MESSAGES.items():
        assert english.strip() and chinese.strip(), key
        assert _fields(english) == _fields(chinese), key


def test_every_key_the_pages_name_exists() -> None:
    named = set()
    for source in [*UI.glob("templates/*.html"), *UI.glob("*.py")]:
        named |= set(LITERAL_KEY.findall(source.read_text(encoding="utf-8")))
    assert named and not named - set(MESSAGES), sorted(named - set(MESSAGES))


@pytest.mark.parametrize(("prefix", "values"), [
    ("layer", [v.value for v in Layer]), ("category", [v.value for v in Category]),
    ("type", [v.value for v in MemoryType]), ("source", [v.value for v in Source]),
    ("event", [v.value for v in Event]), ("turn", [v.value for v in TurnStatus]), ("topic", list(DEFAULT_NAMES)),
    ("kind", [*ENTITY_KINDS, "user"]), ("event", ["ADD", "UPDATE", "CLOSE", "DELETE", "MERGE"]),  # GraphEvent's
])
def test_every_value_the_console_shows_has_a_label(prefix: str, values: list[str]) -> None:
    assert [v for v in values if f"{prefix}.{v}" not in MESSAGES] == []


def test_chinese_labels_are_chinese() -> None:
    zh = Translator("zh")
    assert zh("nav.users") == "用户" and zh("tab.memories") == "记忆" and zh("event.RESTORE") == "恢复"
    assert zh("pager.page_of", page=2, pages=9) == "第 2 页，共 9 页"
    assert Translator("en")("pager.page_of", page=2, pages=9) == "Page 2 of 9"
    with pytest.raises(KeyError):
        zh("no.such.label")


@pytest.mark.parametrize(("header", "chosen", "expected"), [
    ("zh-CN,zh;q=0.9,en;q=0.8", None, "zh"),
    ("en-US,en;q=0.9,zh-CN;q=0.8", None, "en"),
    ("fr-FR,zh-TW;q=0.5", None, "zh"),
    ("de, en;q=0.1, zh;q=0", None, "en"),
    ("ja", None, "en"),
    (None, None, "en"),
    ("zh-CN", "en", "en"),
    ("en", "zh", "zh"),
    ("en", "klingon", "en"),
    ("zh;q=abc, en;q=0.2", None, "en"),
])
def test_the_language_follows_the_browser_until_one_is_chosen(header: str | None, chosen: str | None,
                                                              expected: str) -> None:
    assert negotiate(header, chosen) == expected
