"""bench/entities.py on a tiny hand-made user: its precision and recall are counted from the labels."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import entities

USER = {
    "id": "en99", "language": "en",
    "turns": [
        {"index": 0, "date": "2024-01-02", "user": "my sister Maya lives in Lisbon now", "assistant": "nice"},
        {"index": 1, "date": "2024-01-09", "user": "my dog Rex ate my homework", "assistant": "oh no"},
        {"index": 2, "date": "2024-02-01", "user": "Maya moved to Porto", "assistant": "ok"},
    ],
    "entities": [
        {"id": "maya", "kind": "person", "name": "Maya", "aliases": ["Maya", "my sister"]},
        {"id": "lisbon", "kind": "place", "name": "Lisbon", "aliases": ["Lisbon"]},
        {"id": "porto", "kind": "place", "name": "Porto", "aliases": ["Porto"]},
        {"id": "boss", "kind": "person", "name": "Greta", "aliases": ["Greta"]},
    ],
    "relations": [
        {"source": "maya", "relation": "sister_of", "target": "user", "turn": 0, "invalid_turn": None},
        {"source": "maya", "relation": "lives_in", "target": "lisbon", "turn": 0, "invalid_turn": 2},
        {"source": "maya", "relation": "lives_in", "target": "porto", "turn": 2, "invalid_turn": None},
        {"source": "boss", "relation": "boss_of", "target": "user", "turn": 1, "invalid_turn": None},
    ],
}


def test_scores_count_the_labels_found_and_the_ones_not_labelled() -> None:
    report = entities.evaluate([USER])
    scores = report["offline"]["en"]
    # Rex is found but not labelled; Greta is labelled but never said
    assert (scores["entity_precision"], scores["entity_recall"]) == (0.75, 0.75)
    # found: sister_of, lives_in Lisbon, lives_in Porto, pet_of; right: the first three of four labelled
    assert (scores["relation_precision"], scores["relation_recall"]) == (0.75, 0.75)
    assert scores["closed"] == 1.0  # the move to Porto ended Lisbon
    assert report["users"]["en99"]["missed"] == ["boss boss_of user"]


def test_symmetric_and_couple_relations_are_compared_as_the_set_suggests() -> None:
    assert entities.normal("user", "lives_with", "coco") == entities.normal("coco", "lives_with", "user")
    assert entities.normal("kay", "girlfriend_of", "user") == entities.normal("kay", "partner_of", "user")
    assert entities.normal("mom", "mother_of", "user") != entities.normal("user", "mother_of", "mom")
