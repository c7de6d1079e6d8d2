"""CapabilityCheck answers what isinstance answers, for each object in turn."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from jiyi.capability import CapabilityCheck


@runtime_checkable
class Quacks(Protocol):
    def quack(self) -> str:
        ...


class Duck:
    def quack(self) -> str:
        return "quack"


class Stone:
    pass


def test_it_answers_as_isinstance_does_for_each_object_asked_about_in_turn() -> None:
    quacks = CapabilityCheck[Quacks](Quacks)
    duck, stone = Duck(), Stone()
    answers = [quacks(obj) for obj in (duck, duck, stone, stone, duck, None)]
    assert answers == [isinstance(obj, Quacks) for obj in (duck, duck, stone, stone, duck, None)]
    assert answers == [True, True, False, False, True, False]


def test_a_new_object_of_another_kind_is_checked_anew() -> None:
    quacks = CapabilityCheck[Quacks](Quacks)
    assert not quacks(Stone())
    assert quacks(Duck())  # not the last answer (False) remembered for an object it was not about
