"""No two of jiyi's packages import each other, directly or through other modules (issue 30: `stores` and
`webhooks` did). Imports are read from the source (also those inside functions and TYPE_CHECKING blocks: a cycle
there is still a cycle of design)."""

from __future__ import annotations

import ast
from itertools import combinations
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "jiyi"


def import_graph(root: Path) -> dict[str, set[str]]:
    """For each top-level part of `root` (a package, or a module at its top), the other parts it imports."""
    edges: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).parts
        source = parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith(f"{root.name}.") and (target := name.split(".")[1]) != source:
                    edges.setdefault(source, set()).add(target)
    return edges


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for target in edges.get(stack.pop(), ()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def package_cycles(root: Path) -> list[tuple[str, str]]:
    edges = import_graph(root)
    packages = sorted(p.name for p in root.iterdir() if (p / "__init__.py").exists())
    reach = {p: reachable(edges, p) for p in packages}
    return [(a, b) for a, b in combinations(packages, 2) if b in reach[a] and a in reach[b]]


def test_no_two_packages_import_each_other() -> None:
    assert package_cycles(SRC) == []


def test_a_cycle_through_a_module_is_found(tmp_path: Path) -> None:
    root = tmp_path / "jiyi"
    for package in ("stores", "webhooks"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    (root / "stores" / "base.py").write_text("from jiyi.models import Change\n")
    (root / "models.py").write_text("def f():\n    from jiyi.webhooks.store import Port\n")
    (root / "webhooks" / "store.py").write_text("import jiyi.stores.base\n")
    assert package_cycles(root) == [("stores", "webhooks")]
