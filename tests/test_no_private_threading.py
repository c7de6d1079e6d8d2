"""No module of jiyi uses a private name of `threading` or `concurrent.futures` (issue 30: the sync facade's exit hook
went through `threading._register_atexit`). A private name may change or vanish in any Python release; what jiyi
needs from these modules it gets through their public API (daemon_pool.py says how for the exit).

Read from the source: attributes (`threading._x`, `cf.thread._y` through any alias), `getattr(module, "_x")` and
`from module import _x`."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "jiyi"
GUARDED = ("threading", "concurrent.futures")


def _guarded(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in GUARDED)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """`a.b.c` with `a` an imported module's local name: the full dotted name; else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value, aliases)) is not None:
        return f"{base}.{node.attr}"
    return None


def private_uses(source: str) -> list[str]:
    """Each private name of a guarded module that `source` uses, as `line: name`, in line order."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # local name -> the module (or module attribute) it stands for
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:  # `import concurrent.futures.thread` binds `concurrent`
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                aliases[alias.asname or alias.name] = full
                if _guarded(node.module) and _private(alias.name):
                    found.append((node.lineno, full))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = _dotted(node.value, aliases)
            if base is not None and _guarded(base):
                found.append((node.lineno, f"{base}.{node.attr}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"getattr", "hasattr"}
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _private(node.args[1].value)):
            base = _dotted(node.args[0], aliases)
            if base is not None and _guarded(base):
                found.append((node.lineno, f"{base}.{node.args[1].value}"))
    return [f"{line}: {name}" for line, name in sorted(found)]


def test_no_module_uses_a_private_name_of_threading_or_concurrent_futures() -> None:
    found = {str(path.relative_to(SRC)): uses for path in sorted(SRC.rglob("*.py"))
             if (uses := private_uses(path.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_check_sees_each_way_of_reaching_a_private_name() -> None:
    source = ("import threading\n"
              "import threading as th\n"
              "import concurrent.futures.thread\n"
              "from concurrent import futures\n"
              "from concurrent.futures import thread as cft\n"
              "from threading import _shutdown\n"
              "threading._register_atexit(print)\n"
              "th._active\n"
              "concurrent.futures.thread._shutdown\n"
              "futures.thread._threads_queues\n"
              "cft._python_exit\n"
              "getattr(threading, '_register_atexit', None)\n"
              "threading.Thread, threading.__name__, futures.ThreadPoolExecutor, other._private\n")
    assert private_uses(source) == [
        "6: threading._shutdown", "7: threading._register_atexit", "8: threading._active",
        "9: concurrent.futures.thread._shutdown", "10: concurrent.futures.thread._threads_queues",
        "11: concurrent.futures.thread._python_exit", "12: threading._register_atexit"]
