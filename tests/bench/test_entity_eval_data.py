"""bench/data/entity_eval*.json (issue 32's labelled set, written blind to the code) hold together: every id a
relation, mention or question uses exists, turns are in range, and the counts in each file's description match."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_entity_sets_hold_together() -> None:
    done = subprocess.run([sys.executable, "bench/check_entity_eval.py"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(".json OK") == 2
