"""Settings as the command line gets them: flags over JIYI_* variables over a config file. A bad value ends the
command with one line that names the setting, says what is wrong with its value and what is allowed; no traceback,
and never the value of a setting that holds a key."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
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


def store_source(settings: Settings, args: argparse.Namespace) -> str:
    if getattr(args, "store", None) is not None:
        return "--store"
    if "store" in settings.model_fields_set:
        return _environment("store")[0]
    if settings.config_file is not None:
        return f"the store of {settings.config_file}"
    return "the default store"


def memory_config(settings: Settings, args: argparse.Namespace, *, make_home: bool = True) -> dict[str, Any]:
    """The config a command's Memory (or key store) is built from, its SQLite file's folder checked first (see
    ready_folder). `make_home=False`: check only, make nothing yet (a command that may still refuse to run)."""
    from jiyi.stores import sqlite_path
    from jiyi.wiring import normalize_config

    config = settings.to_config()
    url = normalize_config(config)["store"]
    path = sqlite_path(url)
    if path is None:
        return config
    ready_folder(path, settings.home.expanduser().absolute(), url, store_source(settings, args), make_home)
    if not path.is_absolute():
        # Said as it was resolved: the server's banner, /health and GET /configure show the file it really is.
        config["store"] = f"sqlite:///{path.absolute()}"
    return config


def ready_folder(path: Path, home: Path, url: str, source: str, make_home: bool = True) -> None:
    """Make sure the SQLite file's folder exists before the store is opened.

    jiyi's own data folder (JIYI_HOME, ~/.jiyi by default) is made when it is missing, with a line saying where:
    that is the quick start. Any other folder is not. A store path whose folder does not exist is most often a typo,
    or sqlite:///data/memory.db (three slashes: relative to wherever the command runs) written for /data/memory.db;
    making the folder would hide the mistake behind a new, empty store that answers {"results": []}, and a server
    would keep its users' memories in a place nobody meant (lost with the container, or the next deploy). SQLite
    itself refuses to open a file in a missing folder, and so does this: one line with the absolute path the URL
    resolved to and the two ways on, and nothing created."""
    folder = path.absolute().parent
    if folder.is_dir():
        return
    if folder == home:
        if make_home:
            folder.mkdir(parents=True, exist_ok=True)
            print(f"jiyi: made the data folder {folder}", file=sys.stderr)
        return
    if folder.exists():
        raise ConfigError(f"{source} {url}: {folder} is not a folder")
    make = f"nothing was created. Make it (mkdir -p {shlex.quote(str(folder))})"
    if path.is_absolute():
        raise ConfigError(f"{source} {url}: the folder {folder} does not exist; {make} or choose a file in a folder "
                          "that exists")
    raise ConfigError(f"{source} {url}: the folder {folder} does not exist (a relative path, taken from the working "
                      f"directory {Path.cwd()}); {make}, or if you meant /{path}, write sqlite:////{path} (four "
                      "slashes)")
