"""A bad setting ends the command with exit status 2 and one line: the setting as it was given, what is wrong with
the value, and what is allowed. No traceback, and never a key or a password."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.process import jiyi

SECRET = "jiyi_s3cret-do-not-print"

# (environment, arguments, what the line must say)
CASES = [
    ({"JIYI_PORT": "99999"}, ["serve"], ["JIYI_PORT=99999", "too large", "allowed: 1 to 65535"]),
    ({"JIYI_PORT": "eighty"}, ["serve"], ["JIYI_PORT=eighty", "not a whole number", "allowed: 1 to 65535"]),
    ({}, ["serve", "--port", "0"], ["--port=0", "too small", "allowed: 1 to 65535"]),
    ({}, ["serve", "--workers", "0"], ["--workers=0", "too small", "allowed: 1 to 64"]),
    ({"JIYI_API_KEYS": "alice"}, ["serve"], ["JIYI_API_KEYS", "not JSON", '{"<a long random key>": "alice"}',
                                            "jiyi keys create"]),
    ({"JIYI_API_KEYS": SECRET}, ["serve"], ["JIYI_API_KEYS", "value is not shown", "not JSON"]),
    ({"JIYI_API_KEYS": f'{{"{SECRET}": 7}}'}, ["serve"], ["JIYI_API_KEYS", "non-empty string"]),
    ({"JIYI_API_KEYS": f'["{SECRET}"]'}, ["serve"], ["JIYI_API_KEYS", "not a JSON object"]),
    ({"JIYI_SHUTDOWN_GRACE": "30"}, ["serve"], ["JIYI_SHUTDOWN_GRACE=30", "too large", "allowed: 0 to 10"]),
    ({"JIYI_MAX_BODY_BYTES": "10"}, ["serve"], ["JIYI_MAX_BODY_BYTES=10", "too small", "allowed: at least 1024"]),
    ({"JIYI_INSECURE": "maybe"}, ["serve"], ["JIYI_INSECURE=maybe", "not true or false", "yes or no"]),
    ({"JIYI_LOG_LEVEL": "loud"}, ["serve"], ["JIYI_LOG_LEVEL=loud", "not a log level", "debug"]),
    ({"JIYI_MCP_TOOL_NAMES": "camel"}, ["serve"], ["JIYI_MCP_TOOL_NAMES=camel", "'underscore' or 'dotted'"]),
    ({"JIYI_LLM": "ollama:qwen2.5:7b", "JIYI_LLM_BASE_URL": "localhost:11434"}, ["add", "-u", "a", "x"],
     ["JIYI_LLM_BASE_URL=localhost:11434", "not an http(s) URL", "http://127.0.0.1:11434/v1"]),
    ({"JIYI_CORS_ORIGINS": "127.0.0.1:8000"}, ["serve"], ["JIYI_CORS_ORIGINS", "not a browser origin",
                                                          "scheme://host[:port]"]),
    ({"JIYI_STORE": f"mysql://bob:{SECRET}@db.example.com/jiyi"}, ["list", "-u", "a"],
     ["unknown store 'mysql://'", "sqlite://"]),
    ({"JIYI_STORE": f"postgresql://bob:{SECRET}@db.example.com:fivefour/jiyi"}, ["list", "-u", "a"],
     ["JIYI_STORE=", "not a valid URL", "fivefour"]),
    ({"JIYI_STORE": "sqlite:"}, ["list", "-u", "a"], ["JIYI_STORE=sqlite:", "not a store URL"]),
    ({}, ["add", "-u", "a", "--metadata", "{source: diary}", "x"], ["--metadata", "not valid JSON", "an object"]),
    ({}, ["search", "-u", "a", "--filters", "[1]", "q"], ["--filters", "expected a JSON object"]),
]


@pytest.mark.parametrize(("env", "args", "says"), CASES, ids=[" ".join([*e, *a]) for e, a, _ in CASES])
def test_a_bad_setting_is_one_line(tmp_path: Path, env: dict[str, str], args: list[str], says: list[str]) -> None:
    result = jiyi(tmp_path / "home", *args, env=env, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("jiyi: "), result.stderr
    assert all(words in lines[0] for words in says), lines[0]
    assert SECRET not in result.stderr and "Traceback" not in result.stderr


def test_two_bad_settings_are_two_lines(tmp_path: Path) -> None:
    result = jiyi(tmp_path, "serve", env={"JIYI_PORT": "99999", "JIYI_WORKERS": "100"})
    assert result.returncode == 2
    assert sorted(result.stderr.splitlines()) == ["jiyi: JIYI_PORT=99999: too large; allowed: 1 to 65535",
                                                  "jiyi: JIYI_WORKERS=100: too large; allowed: 1 to 64"]
