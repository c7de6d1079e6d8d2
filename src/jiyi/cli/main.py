"""The `jiyi` command: serve, add, search, list, history, export, import, worker, maintain, keys, mcp.

parser.py says what each command takes; commands.py, keys.py and serve.py do it; config.py reads the settings. Here:
the one place an error becomes one line on standard error and an exit status (2), never a traceback."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from jiyi.cli.parser import build_parser
from jiyi.cli.serve import app_from_environment, one_blas_thread
from jiyi.errors import JiyiError

# user:password@ in a URL an error quotes: the password is replaced before the line is printed.
_CREDENTIALS = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]+):[^@\s]*@", re.IGNORECASE)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    one_blas_thread()
    try:
        return int(args.func(args))
    except JiyiError as exc:
        for line in _lines(str(exc)) or [type(exc).__name__]:
            print("jiyi: " + _CREDENTIALS.sub(r"\1:***@", line), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _lines(message: str) -> list[str]:
    """One line per problem: a line that starts indented continues the one before (libpq's hints do)."""
    lines: list[str] = []
    for line in message.splitlines():
        if lines and line[:1].isspace():
            lines[-1] += " " + line.strip()
        elif line.strip():
            lines.append(line.strip())
    return lines


__all__ = ["app_from_environment", "build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
