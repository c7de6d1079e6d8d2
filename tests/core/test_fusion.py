from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from jiyi.core.fusion import PathHit, fuse, fused_scores

hit_lists = st.lists(
    st.tuples(st.sampled_from(list("abcdefgh")), st.floats(0, 1), st.floats(0, 1)), max_size=8, unique_by=lambda t: t[0]
)


@given(vector=hit_lists, keyword=hit_lists, seed=st.integers())
def test_fusion_ignores_path_order_and_stays_in_unit_range(vector: list, keyword: list, seed: int) -> None:
    paths = {"vector": [PathHit(i, s, r) for i, s, r in vector], "keyword": [PathHit(i, s, r) for i, s, r in keyword]}
    shuffled = list(paths.items())
    random.Random(seed).shuffle(shuffled)
    a = fuse(paths)
    b = fuse(dict(shuffled))
    assert [(f.memory_id, round(f.score, 12)) for f in a] == [(f.memory_id, round(f.score, 12)) for f in b]
    assert all(0.0 <= f.score <= 1.0 + 1e-9 for f in a)
    assert [f.score for f in a] == sorted((f.score for f in a), reverse=True)


def test_agreement_beats_a_single_path_and_irrelevance_scores_low() -> None:
    fused = fuse({
        "vector": [PathHit("both", 0.9, 0.9), PathHit("vec_only", 0.85, 0.8)],
        "keyword": [PathHit("both", 7.0, 1.0), PathHit("kw_only", 5.0, 1.0)],
    })
    assert fused[0].memory_id == "both"
    assert fused[0].score > 0.9
    lonely = fuse({"vector": [PathHit("noise", 0.5, 0.01)], "keyword": []})
    assert lonely[0].score < 0.01


@given(vector=hit_lists, keyword=hit_lists, rules=hit_lists, norm=st.sampled_from([None, 2.0]))
def test_fused_scores_are_fuses_scores_to_the_bit_in_its_order(vector: list, keyword: list, rules: list,
                                                                 norm: float | None) -> None:
    paths = {name: [PathHit(i, s, r) for i, s, r in hits]
             for name, hits in (("vector", vector), ("keyword", keyword), ("rules", rules))}
    weights = {"vector": 1.0, "keyword": 1.0, "rules": 0.6}
    expected = [(f.memory_id, f.score) for f in fuse(paths, weights, norm=norm)]
    assert list(fused_scores(paths, weights, norm=norm).items()) == expected
