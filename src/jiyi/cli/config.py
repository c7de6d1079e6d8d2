"""Settings as the command line gets them: flags over JIYI_* variables over a config file. A bad value ends the
command with one line that names the setting, says what is wrong with its value and what is allowed; no traceback,
and never the value of a setting that holds a key."""

from __future__ import annotations

import argparse
import os
import shlex
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from jiyi.errors import ConfigError
from jiyi.settings import Settings

# The flags that set a setting, by field: a bad value is reported under the name it was given as.
FLAGS = {"store": "--store", "embedder": "--embedder", "config_file": "--config", "home": "--home",
         "host": "--host", "port": "--port", "workers": "--workers", "insecure": "--insecure"}
PROBLEMS = {
    "int_parsing": "not a whole number", "int_from_float": "not a whole number", "int_type": "not a whole number",
    "float_parsing": "not a number", "float_type": "not a number", "bool_parsing": "not true or false",
    "greater_than_equal": "too small", "greater_than": "too small", "less_than_equal": "too large",
    "less_than": "too large", "literal_error": "not one of the choices", "finite_number": "not a finite number",
}


def load_settings(args: argparse.Namespace) -> Settings:
    given = {name: getattr(args, name, None) for name in FLAGS}
    overrides = {name: value for name, value in given.items() if value is not None and value is not False}
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError("\n".join(_describe(error, overrides) for error in exc.errors())) from None


def _describe(error: ErrorDetails, overrides: dict[str, Any]) -> str:
    name = str(error["loc"][0]) if error["loc"] else ""
    if name in overrides:
        setting, value = FLAGS[name], str(overrides[name])
    else:
        setting, value = _environment(name)
    secret = "api_key" in name
    said = f"{setting} (its value is not shown: it holds keys)" if secret else f"{setting}={shlex.quote(value)}"
    if error["type"] == "value_error":
        return f"{said}: {error['msg'].removeprefix('Value error, ')}"
    problem = PROBLEMS.get(error["type"], error["msg"])
    allowed = _allowed(name, error)
    return f"{said}: {problem}" + (f"; allowed: {allowed}" if allowed else "")


def _environment(name: str) -> tuple[str, str]:
    """The variable a setting came from, and its value (pydantic-settings ignores the case of the name)."""
    wanted = f"JIYI_{name}".upper()
    for variable, value in os.environ.items():
        if variable.upper() == wanted:
            return variable, value
    return wanted, ""


def _allowed(name: str, error: ErrorDetails) -> str:
    if error["type"] == "bool_parsing":
        return "1 or 0, true or false, yes or no, on or off"
    if error["type"] == "literal_error":
        return str((error.get("ctx") or {}).get("expected", ""))
    field = Settings.model_fields.get(name)
    bounds: dict[str, Any] = {}
    for constraint in field.metadata if field else ():
        for kind in ("ge", "gt", "le", "lt"):
            if getattr(constraint, kind, None) is not None:
                bounds[kind] = getattr(constraint, kind)
    low = f"{bounds['ge']}" if "ge" in bounds else f"more than {bounds['gt']}" if "gt" in bounds else None
    high = f"{bounds['le']}" if "le" in bounds else f"less than {bounds['lt']}" if "lt" in bounds else None
    if low is not None and high is not None:
        return f"{low} to {high}"
    if low is not None:
        return low if low.startswith("more") else f"at least {low}"
    if high is not None:
        return high if high.startswith("less") else f"at most {high}"
    return ""


def memory_config(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    """The config a command's Memory (or key store) is built from."""
    return settings.to_config()
