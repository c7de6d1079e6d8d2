"""The fenced code blocks of the README and the docs/ pages, for the tests that run them as written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def page(name: str) -> str:
    """A page of the repository by its path ("README.md", "docs/mcp.md")."""
    return (ROOT / name).read_text(encoding="utf-8")


def code_blocks(name: str, language: str) -> list[str]:
    """Every block fenced as ```language in the page, in order (indented fences, as in a list, included)."""
    return [re.sub(r"(?m)^ +", "", block) if block.startswith(" ") else block
            for block in re.findall(rf"(?m)^ *```{language}\n(.*?)^ *```", page(name), re.S)]


def code_block(name: str, language: str, containing: str) -> str:
    """The one block of the language that holds the text; a test fails if there is none, or more than one."""
    found = [block for block in code_blocks(name, language) if containing in block]
    assert len(found) == 1, f"{name}: {len(found)} ```{language} blocks hold {containing!r}"
    return found[0]
