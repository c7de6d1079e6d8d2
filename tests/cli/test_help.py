"""What a new user reads first: `jiyi --version`, and each command's --help with what it does, every option
explained, and examples that the command line accepts."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

import jiyi
from jiyi.cli.parser import build_parser
from tests.cli.process import jiyi as run

ROOT = Path(__file__).resolve().parents[2]


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append((*path, name))
                found.extend(_subcommands(child, (*path, name)))
    return found


def _parser_of(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


COMMANDS = _subcommands(build_parser())


def test_every_command_is_covered() -> None:
    assert {c[0] for c in COMMANDS} >= {"serve", "mcp", "add", "search", "list", "history", "export", "import",
                                        "worker", "keys", "maintain"}
    assert {c for c in COMMANDS if c[0] == "keys"} >= {("keys", "create"), ("keys", "list"), ("keys", "revoke"),
                                                       ("keys", "reopen")}


def test_version_says_which_jiyi_and_which_python(tmp_path: Path) -> None:
    result = run(tmp_path, "--version")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.strip() == (f"jiyi {version} from {Path(jiyi.__file__).parent} "
                                     f"(Python {'.'.join(map(str, sys.version_info[:3]))})")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_describes_the_command_and_shows_examples(tmp_path: Path, command: tuple[str, ...]) -> None:
    result = run(tmp_path, *command, "--help")
    assert result.returncode == 0 and result.stderr == ""
    text = result.stdout
    # The description: the paragraph between the usage lines and the first list of arguments.
    description = text.split("\n\n", 1)[1].split("\npositional arguments:", 1)[0].split("\noptions:", 1)[0]
    assert len(description.split()) >= 12, text
    assert "\nexamples:\n" in text
    examples = [line.strip() for line in text.split("\nexamples:\n", 1)[1].splitlines() if line.strip()]
    assert any(line.startswith("jiyi " + " ".join(command)) for line in examples), examples


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_option_is_explained(command: tuple[str, ...]) -> None:
    parser = _parser_of(command)
    unexplained = [action.option_strings or [action.dest] for action in parser._actions
                   if not isinstance(action, argparse._SubParsersAction) and not (action.help or "").strip()]
    assert unexplained == []


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_the_examples_are_command_lines_jiyi_accepts(command: tuple[str, ...]) -> None:
    epilog = _parser_of(command).epilog or ""
    lines = [line.strip() for line in epilog.splitlines()[1:] if line.strip() and not line.strip().startswith("#")]
    assert lines
    for line in lines:
        for part in line.split(" && "):
            words = shlex.split(part, comments=True)
            words = words[next(i for i, w in enumerate(words) if w == "jiyi"):]  # VAR=value before it
            words = words[:words.index(">")] if ">" in words else words  # what the shell redirects
            assert not any(re.fullmatch(r"[A-Z_]+=.*", w) for w in words[1:]), part
            parsed = build_parser().parse_args(words[1:])
            assert callable(parsed.func), part


def test_the_short_scope_options_are_explained(tmp_path: Path) -> None:
    text = run(tmp_path, "list", "--help").stdout
    for option, words in (("-u ID", "the person"), ("-a ID", "assistant or character"), ("-r ID", "conversation"),
                          ("--show-expired  ", "also memories whose")):
        line = next(line for line in text.splitlines() if line.lstrip().startswith("-") and option in line)
        assert words in line, line
    assert "0 to 1" in run(tmp_path, "search", "--help").stdout  # --threshold's range
