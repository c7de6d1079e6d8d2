"""docs/tracing.md's example runs as written, in a fresh process (it sets the process's global tracer provider)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.cli.process import SRC

PAGE = Path(__file__).resolve().parents[2] / "docs" / "tracing.md"


def test_the_library_example_shows_jiyis_span_beneath_the_apps(tmp_path: Path) -> None:
    [example] = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['jiyi.context']"]


def test_the_page_names_every_span_jiyi_makes() -> None:
    page = PAGE.read_text(encoding="utf-8")
    source = "".join(p.read_text(encoding="utf-8") for p in (Path(SRC) / "jiyi").rglob("*.py"))
    spans = set(re.findall(r'tracing\.span\("(jiyi\.[a-z.]+)"', source))
    stores = set(re.findall(r'@store_call\("(\w+)"(?:, "(\w+)")?\)', source))
    assert {"jiyi.add", "jiyi.search", "jiyi.context", "jiyi.extract"} <= spans and len(stores) >= 6
    assert [name for name in spans if f"`{name}`" not in page] == []
    assert [op for op, table in stores if f"`{op} {table or 'memories'}`" not in page] == []
