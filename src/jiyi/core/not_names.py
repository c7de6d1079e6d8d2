"""The words that look like a name and are not one (not_names.json), read once a process."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def _lists() -> dict[str, frozenset[str]]:
    data = json.loads(resources.files("jiyi.core").joinpath("not_names.json").read_text(encoding="utf-8"))
    return {language: frozenset(word.casefold() for word in data[language]) for language in ("en", "zh")}


def not_a_name_en(word: str) -> bool:
    return word.casefold() in _lists()["en"]


def not_a_name_zh(word: str) -> bool:
    return word in _lists()["zh"]
