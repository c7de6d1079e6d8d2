"""Settings as the command line gets them: flags over JIYI_* variables over a config file."""

from __future__ import annotations

import argparse
from typing import Any

from jiyi.settings import Settings

# The flags that set a setting, by field: a bad value is reported under the name it was given as.
FLAGS = {"store": "--store", "embedder": "--embedder", "config_file": "--config", "home": "--home",
         "host": "--host", "port": "--port", "workers": "--workers", "insecure": "--insecure"}


def load_settings(args: argparse.Namespace) -> Settings:
    given = {name: getattr(args, name, None) for name in FLAGS}
    return Settings(**{name: value for name, value in given.items() if value is not None and value is not False})


def memory_config(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    """The config a command's Memory (or key store) is built from."""
    return settings.to_config()
