"""The 422 sentence (server/validation.py) from pydantic's own errors for jiyi's request bodies: a union's losing
members left out, the field named as a caller writes it, at most three problems, never the value sent."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from jiyi.server.platform_schemas import PlatformAdd
from jiyi.server.schemas import SearchBody
from jiyi.server.validation import validation_sentence


def sentence(model: type[BaseModel], body: Any) -> str:
    with pytest.raises(ValidationError) as failed:
        model.model_validate(body)
    return validation_sentence([{**e, "loc": ("body", *e["loc"])} for e in failed.value.errors()])


@pytest.mark.parametrize(("model", "body", "expected"), [
    (PlatformAdd, {"messages": [{"content": "my secret"}]}, "messages[0].role is required"),
    (PlatformAdd, {"messages": [{"role": "user", "content": 7}]},
     "messages[0].content must be a string, an object or a list"),
    (PlatformAdd, {"messages": 42}, "messages must be a list or a string"),
    (PlatformAdd, {"messages": []}, "messages must not be empty"),
    (SearchBody, {"query": "q", "top_k": 0, "limit": 0, "threshold": 2, "explain": "maybe"},
     "limit must be greater than or equal to 1; top_k must be greater than or equal to 1; threshold must be less "
     "than or equal to 1 (and 1 more)"),
    (SearchBody, [1], "the request body must be an object"),
])
def test_one_sentence_names_each_field(model: type[BaseModel], body: Any, expected: str) -> None:
    said = sentence(model, body)
    assert said == expected
    assert "my secret" not in said


def test_a_query_parameter_and_bad_json_are_named_as_such() -> None:
    assert validation_sentence([{"loc": ("query", "top_k"), "type": "int_parsing", "msg": "x"}]) == \
        "query parameter top_k must be an integer"
    assert validation_sentence([{"loc": ("body", 15), "type": "json_invalid", "msg": "JSON decode error"}]) == \
        "the request body is not valid JSON"
