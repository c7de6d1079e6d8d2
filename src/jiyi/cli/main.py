"""The `jiyi` command: serve, add, search, list, history, export, import, worker, maintain, keys, mcp.

parser.py says what each command takes; commands.py, keys.py and serve.py do it; config.py reads the settings. Here:
the one place an error becomes a line on standard error and an exit status (2)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from jiyi.cli.parser import build_parser
from jiyi.cli.serve import app_from_environment, one_blas_thread
from jiyi.errors import JiyiError


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    one_blas_thread()
    try:
        return int(args.func(args))
    except JiyiError as exc:
        print(f"jiyi: {exc}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"jiyi: invalid JSON argument: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


__all__ = ["app_from_environment", "build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
