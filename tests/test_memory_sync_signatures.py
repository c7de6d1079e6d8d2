"""Memory (sync) and AsyncMemory are one API: every public async method has a sync twin with its signature, so an
IDE, help() and a type checker show the sync one's arguments (mem0's sync methods take **kwargs and show nothing)."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from jiyi.memory import AsyncMemory, Memory

# Memory's own public attributes, which have no async twin to copy: how it is built and what it holds.
SYNC_ONLY = {"from_config", "store", "embedder"}
MEM0_METHODS = {"add", "search", "get", "get_all", "update", "delete", "delete_all", "history", "reset"}


def _public(cls: type) -> dict[str, object]:
    return {name: value for name, value in vars(cls).items() if not name.startswith("_")}


def _async_methods() -> list[str]:
    return sorted(name for name, value in _public(AsyncMemory).items() if inspect.iscoroutinefunction(value))


def _described(signature: inspect.Signature) -> list[tuple[str, object, object, object]]:
    return [(p.name, p.kind, p.default, p.annotation) for p in signature.parameters.values()]


def test_the_async_facade_has_the_methods_mem0s_users_call() -> None:
    assert set(_async_methods()) >= MEM0_METHODS | {"context", "close", "settle", "process_pending"}


@pytest.mark.parametrize("name", _async_methods())
def test_each_sync_method_has_its_async_twins_signature(name: str) -> None:
    twin, sync = getattr(AsyncMemory, name), getattr(Memory, name)
    assert not inspect.iscoroutinefunction(sync)
    expected, actual = inspect.signature(twin), inspect.signature(sync)
    assert _described(actual) == _described(expected)  # names, kinds, defaults, annotations
    assert actual.return_annotation == expected.return_annotation
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in actual.parameters.values())
    assert typing.get_type_hints(sync) == typing.get_type_hints(twin)  # the annotations resolve to the same types
    assert sync.__doc__ == twin.__doc__


def test_memory_has_no_public_method_without_an_async_twin() -> None:
    assert set(_public(Memory)) - set(_async_methods()) == SYNC_ONLY


def test_help_shows_the_arguments() -> None:
    shown = inspect.signature(Memory.search)
    assert "user_id" in shown.parameters and shown.parameters["top_k"].default is None
    assert shown.parameters["user_id"].kind is inspect.Parameter.KEYWORD_ONLY


def test_a_type_checker_sees_the_sync_signatures(tmp_path: Path) -> None:
    """What an IDE shows comes from the static types: a misspelt argument is an error, a right call is typed."""
    pytest.importorskip("mypy")
    script = tmp_path / "uses_memory.py"
    script.write_text(
        "from jiyi import Memory\n"
        "memory = Memory.from_config({})\n"
        "reveal_type(memory.search)\n"
        "found: dict[str, object] = memory.search('咖啡', user_id='alice', top_k=3)\n"
        "memory.search('coffee', user_idd='alice')\n"
        "memory.add('hi', user_id='alice', infer='no')\n",
        encoding="utf-8")
    src = Path(__file__).resolve().parents[1] / "src"
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--ignore-missing-imports", "--no-incremental",
                           "--follow-imports=silent", "--config-file", "/dev/null", str(script)],
                          capture_output=True, text=True, timeout=300, env={"MYPYPATH": str(src), "PATH": ""})
    lines = done.stdout.splitlines()
    revealed = next(line for line in lines if "Revealed type" in line)
    assert "query: str, *, user_id: str | None =" in revealed and "-> dict[str, Any]" in revealed
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 2, done.stdout
    assert 'Unexpected keyword argument "user_idd"' in errors[0] and ":5:" in errors[0]
    assert 'Argument "infer"' in errors[1] and ":6:" in errors[1]
