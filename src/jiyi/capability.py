"""isinstance() against a runtime-checkable Protocol, remembered for the object last asked about.

Such a check looks up every member of the Protocol on the object each time: 7-19 us (Python 3.11), paid per request
where a hot path asks "does this store keep API keys?", "can this embedder count tokens?". The objects asked about
are the few long-lived ones of a server (its store, its embedder), so remembering the answer for the last one asked
about makes the check an identity comparison, and a new object (a reconfigured server's store) is checked anew.
"""

from __future__ import annotations

from typing import Any, Generic, TypeGuard, TypeVar

T = TypeVar("T")


class CapabilityCheck(Generic[T]):
    """`check(obj)` is `isinstance(obj, protocol)`, checked once per object in a row; made as
    `CapabilityCheck[P](P)`. Safe across threads: the remembered pair is replaced whole, and two threads that check
    a new object at once both get the true answer."""

    def __init__(self, protocol: type) -> None:  # type[T] is refused for a Protocol (mypy: type-abstract)
        self.protocol = protocol
        self._last: tuple[Any, bool] = (object(), False)

    def __call__(self, obj: object) -> TypeGuard[T]:
        last, answer = self._last
        if obj is not last:
            answer = isinstance(obj, self.protocol)
            self._last = (obj, answer)
        return answer

    def __repr__(self) -> str:
        return f"CapabilityCheck({self.protocol.__name__})"
