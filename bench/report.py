"""Writing a benchmark's JSON report with the commit it measured."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


def commit_of(directory: Path) -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=directory,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def write_report(path: Path, report: dict[str, Any]) -> None:
    report["commit"] = commit_of(path.resolve().parent)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
