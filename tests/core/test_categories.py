"""mem0's categories assigned offline (jiyi/core/categories.py, jiyi/categorizing.py): words, prototypes, custom
lists."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import jiyi.categorizing as categorizing
from jiyi import InvalidInput, build_embedder, build_store
from jiyi.categorizing import Categorizer
from jiyi.core.categories import (
    DEFAULT_NAMES,
    Prototypes,
    Taxonomy,
    default_taxonomy,
    parse_custom_categories,
    taxonomy_for,
)
from jiyi.embedders.hashing import HashingEmbedder

# Written for these tests (not taken from a labelled set): what each sentence is plainly about, by its words alone.
PLAIN = [
    ("User's name is Daniel", "personal_details"), ("用户今年三十五岁，住在深圳", "personal_details"),
    ("User's son starts kindergarten in September", "family"), ("用户的哥哥在国外读书", "family"),
    ("User is an accountant at a law firm", "professional_details"),
    ("我在一家互联网公司做运营", "professional_details"),
    ("User plays badminton every Friday", "sports"), ("用户每周踢两次足球", "sports"),
    ("User spent a month backpacking in Vietnam", "travel"), ("用户春节要去三亚度假", "travel"),
    ("User drinks green tea every afternoon", "food"), ("用户爱吃螺蛳粉", "food"),
    ("User plays the cello in an orchestra", "music"), ("用户在学古筝", "music"),
    ("User has asthma", "health"), ("我最近失眠很严重", "health"),
    ("User's laptop keeps crashing", "technology"), ("用户在自学编程", "technology"),
    ("User does embroidery in the evenings", "hobbies"), ("用户周末喜欢去钓鱼", "hobbies"),
    ("User loves oversized hoodies", "fashion"), ("用户平时不化妆", "fashion"),
    ("User is watching a new Netflix series", "entertainment"), ("用户最近在追韩剧", "entertainment"),
    ("User graduated from university last year", "milestones"), ("用户今年退休了", "milestones"),
    ("User wants answers in bullet points", "user_preferences"), ("用户希望回复简短一点", "user_preferences"),
    ("User's rent went up again", "misc"), ("用户的快递丢了", "misc"),
]


def choose(taxonomy: Taxonomy, text: str) -> list[str]:
    return taxonomy.choose(taxonomy.word_scores(text), None)


def test_mem0s_fifteen_default_categories_in_its_order_with_misc_for_the_rest() -> None:
    taxonomy = default_taxonomy()
    assert taxonomy.names == DEFAULT_NAMES == (
        "personal_details", "family", "professional_details", "sports", "travel", "food", "music", "health",
        "technology", "hobbies", "fashion", "entertainment", "milestones", "user_preferences", "misc")
    assert taxonomy.fallback == "misc"
    assert choose(taxonomy, "It was a Tuesday") == ["misc"]  # nothing said for any category


@pytest.mark.parametrize("text, category", PLAIN)
def test_plain_statements_are_placed_by_their_words_in_english_and_chinese(text: str, category: str) -> None:
    assert choose(default_taxonomy(), text)[0] == category


def test_a_preference_about_a_topic_is_the_topic_first_and_a_preference_too() -> None:
    taxonomy = default_taxonomy()
    assert choose(taxonomy, "User loves spicy Sichuan food") == ["food", "user_preferences"]
    assert choose(taxonomy, "用户最喜欢听周杰伦的歌") == ["music", "user_preferences"]
    assert choose(taxonomy, "User is allergic to peanuts")[0] == "health"  # allergies are health first


def test_a_chinese_word_is_counted_once_where_a_longer_one_holds_it() -> None:
    taxonomy = default_taxonomy()
    scores = taxonomy.word_scores("用户在学小提琴")
    music = taxonomy.names.index("music")
    # 小提琴 (music) holds 提琴; counted once, not as two words
    assert scores[music] == pytest.approx(1.0)


def test_the_similarity_decides_what_words_leave_open() -> None:
    taxonomy = Taxonomy(tuple(default_taxonomy().categories))
    words = np.zeros(len(taxonomy.names), dtype=np.float32)
    near_travel = np.zeros(len(taxonomy.names), dtype=np.float32)
    near_travel[taxonomy.names.index("travel")] = 1.0
    assert taxonomy.choose(words, near_travel) == ["travel"]
    assert taxonomy.choose(words, np.zeros_like(near_travel)) == ["misc"]  # no category stands out
    leaning = np.full(len(taxonomy.names), 0.5, dtype=np.float32)  # travel ahead, as e5 leans (z ~ 1.8)
    leaning[[taxonomy.names.index(n) for n in ("travel", "music", "health", "sports", "hobbies")]] = 0.8
    leaning[taxonomy.names.index("travel")] = 0.9
    assert taxonomy.choose(words, leaning) == ["travel"]
    words[taxonomy.names.index("food")] = 1.0
    assert taxonomy.choose(words, leaning)[0] == "food"  # a word outweighs the embedder's leaning


def test_prototypes_are_each_categorys_centroid_less_what_it_shares_with_the_rest() -> None:
    taxonomy = taxonomy_for([{"a": "first"}, {"b": "second"}])
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    owners = [index for index, _ in taxonomy.prototypes]
    prototypes = Prototypes.from_vectors(taxonomy, vectors[:len(owners)])
    similarity = prototypes.similarity(np.array([1.0, 0.0], dtype=np.float32))[0]
    assert similarity[0] > similarity[1]


@pytest.mark.parametrize("given, pairs", [
    ([{"recipes": "cooking and recipes"}], [("recipes", "cooking and recipes")]),
    ([{"name": "recipes", "description": "cooking"}], [("recipes", "cooking")]),
    (["recipes", {"pets": ""}], [("recipes", ""), ("pets", "")]),
])
def test_custom_categories_take_mem0s_forms(given: list, pairs: list) -> None:
    assert parse_custom_categories(given) == pairs


@pytest.mark.parametrize("given, message", [
    ("recipes", "must be a non-empty list"),
    ([], "must be a non-empty list"),
    ([{"a": "x", "b": "y"}], "each of custom_categories"),
    ([{"": "x"}], "is not a category name"),
    ([{"a": "x"}, {"a": "y"}], "names a category twice"),
    ([{"a": 3}], "must be text"),
])
def test_bad_custom_categories_are_refused_with_what_to_fix(given: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_custom_categories(given)


def test_custom_categories_are_honoured_by_their_names_descriptions_and_the_words_those_name() -> None:
    taxonomy = taxonomy_for([{"pets": "the user's pets"}, {"work": "job and career"},
                             {"recipes": "cooking recipes and meal ideas"}])
    assert taxonomy.fallback is None
    assert choose(taxonomy, "User has a golden retriever named Max") == ["pets"]  # pets -> the lexicon's dogs
    assert choose(taxonomy, "用户在银行上班") == ["work"]  # work -> 上班
    assert choose(taxonomy, "User baked a lemon cake") == ["recipes"]  # cooking -> baked
    assert choose(taxonomy, "User likes jazz") == []  # nothing said for any, and no vector to go by


def test_a_custom_category_named_like_a_default_one_keeps_its_words() -> None:
    taxonomy = taxonomy_for([{"food": "what the user eats"}, {"misc": "the rest"}])
    assert choose(taxonomy, "用户爱吃螺蛳粉") == ["food"]
    assert choose(taxonomy, "User plays chess") == ["misc"]


class CountingEmbedder(HashingEmbedder):
    """The hashing test double, counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += len(texts)
        return super().embed_documents(texts)


def forget_shared_prototypes() -> None:
    with categorizing._SHARED_LOCK:
        categorizing._SHARED.clear()


def test_prototype_vectors_are_made_once_per_store_and_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = build_store(f"sqlite:///{tmp_path / 'c.db'}")
    store.bind_embedding("hashing:v1-256", 256)
    embedder = CountingEmbedder()
    forget_shared_prototypes()  # as a new process starts: another test may have made them in this one
    first = Categorizer(embedder, store)
    taxonomy = first.prepare()
    assert embedder.embedded == len(taxonomy.prototypes)
    first.prepare()
    assert embedder.embedded == len(taxonomy.prototypes)  # kept in memory
    forget_shared_prototypes()
    again = Categorizer(embedder, store)  # another process on the same store
    assert np.array_equal(again.prototypes(taxonomy).centroids, first.prototypes(taxonomy).centroids)
    assert embedder.embedded == len(taxonomy.prototypes)  # read back, not embedded again
    store.close()


def test_categorize_uses_the_vectors_facts_are_stored_with() -> None:
    embedder = build_embedder("hashing")
    categorizer = Categorizer(embedder)
    taxonomy = categorizer.prepare()
    texts = ["User has asthma", "用户春节要去三亚度假"]
    by_vector = categorizer.categorize(taxonomy, texts, embedder.embed_documents(texts))
    # the hashing double's vectors lean anywhere; the words still place each fact
    assert "health" in by_vector[0] and "travel" in by_vector[1]
    assert set(by_vector[0] + by_vector[1]) <= set(DEFAULT_NAMES)
    assert categorizer.categorize(taxonomy, texts, None) == [["health"], ["travel"]]
    assert categorizer.categorize(taxonomy, [], None) == []
