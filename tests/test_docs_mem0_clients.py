"""docs/rest-and-sdks.md's table of which test drives each of issue 31's changes through which of mem0's clients:
every test file it names exists and uses that client, and a client without a test says why."""

from __future__ import annotations

import re

from tests.markdown import ROOT, page

TESTS = ROOT / "tests"
CLIENTS = ("Python SDK", "npm client", "MCP tools (mem0's)")
# What a test file of each column must use: mem0's Python SDK, its npm client's drivers, the MCP SDK's client.
USES = {"Python SDK": ("from mem0 import",), "npm client": ("drive.mjs", "drive_profiles.mjs"),
        "MCP tools (mem0's)": ("tests.mcp.helpers",)}


def table() -> list[list[str]]:
    section = page("docs/rest-and-sdks.md").split("### Tested with mem0's clients\n", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("|")]
    assert rows[0][1:] == list(CLIENTS)
    return rows[2:]


def test_every_item_has_a_test_or_a_reason_for_each_client() -> None:
    rows = table()
    assert [row[0].split(".")[0] for row in rows] == [str(n) for n in range(1, 8)]  # items 1-7 of issue 31
    for row in rows:
        for client, cell in zip(CLIENTS, row[1:], strict=True):
            named = re.findall(r"`([\w/]+\.py)`", cell)
            assert named or cell.startswith("none:") or "; none:" in cell, (row[0], client, cell)
            for name in named:
                source = (TESTS / name).read_text(encoding="utf-8")
                assert any(use in source for use in USES[client]), (row[0], client, name)
