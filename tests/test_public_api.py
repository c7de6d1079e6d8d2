"""The public API is what jiyi/__init__.py exports; this pins it so a change is deliberate."""

import jiyi

EXPECTED = {
    "AddRequest", "AsyncMemory", "BackendUnavailable", "Category", "ConfigError", "ContextRequest",
    "EmbeddingMismatch", "Event", "HistoryEvent", "InvalidInput", "JiyiError", "Layer", "ListRequest", "Memory",
    "MemoryRecord", "MemoryType", "NotFound", "NotSupportedYet", "Scope", "SearchHit", "SearchQuery", "Source",
    "__version__", "build_embedder", "build_store", "register_embedder", "register_store",
}


def test_public_api_is_pinned() -> None:
    assert set(jiyi.__all__) == EXPECTED
    for name in jiyi.__all__:
        assert getattr(jiyi, name) is not None


def test_custom_backends_register_the_same_way_as_built_ins(tmp_path) -> None:
    from jiyi.embedders.hashing import HashingEmbedder

    class Tiny(HashingEmbedder):
        pass

    jiyi.register_embedder("tiny", lambda arg, options: Tiny(dims=int(arg or 8)))
    jiyi.register_store("mystore", lambda rest: jiyi.build_store(f"sqlite:///{tmp_path / rest}"))
    memory = jiyi.Memory.from_config({"store": "mystore://x.db", "embedder": "tiny:32"})
    assert isinstance(memory.embedder, Tiny) and memory.embedder.dims == 32
    memory.add("registered backends work", user_id="u", infer=False)
    assert memory.search("backends", user_id="u")["results"][0]["memory"] == "registered backends work"
    memory.close()
