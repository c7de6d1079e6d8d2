"""Errors raised by jiyi. Entry points map them to exit codes and HTTP statuses in one place each."""


class JiyiError(Exception):
    """Base class of every error jiyi raises on purpose."""


class InvalidInput(JiyiError, ValueError):
    """The caller sent something jiyi cannot use; the message says what to fix."""


class NotFound(JiyiError, LookupError):
    """The memory (or other object) does not exist, or is not visible to the caller."""


class Unauthorized(JiyiError):
    """The caller did not present the key a route needs."""


class Forbidden(JiyiError):
    """The caller is known but may not act on what it asked for (another user's memories)."""


class Conflict(JiyiError):
    """The memory changed since the caller read it (its version moved on): nothing was written."""


class ConfigError(JiyiError):
    """The configuration is inconsistent or names something that does not exist."""


class EmbeddingMismatch(ConfigError):
    """The store was built with another embedding model or dimension than the one configured."""


class BackendUnavailable(JiyiError):
    """A store, embedding service or LLM could not be reached or answered with an error."""


class Overloaded(BackendUnavailable):
    """The work could not start within its deadline (a queue is full or slow); the caller may retry after
    `retry_after` seconds. Raised instead of making a request wait without bound."""

    def __init__(self, message: str, *, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RateLimited(JiyiError):
    """This key sent more requests than its rate allows; it may send again after `retry_after` seconds."""

    def __init__(self, message: str, *, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PayloadTooLarge(InvalidInput):
    """A body, field or text is larger than the configured limit; the message names the field and the limit."""


class UnsupportedMediaType(InvalidInput):
    """The request body is not in a format jiyi reads (JSON)."""


class NotSupportedYet(JiyiError):
    """A documented feature whose implementation has not landed; never silently ignored."""


class NotOffered(JiyiError):
    """Something mem0's platform has that a jiyi server does not and will not (projects to create, members to
    invite): the message says so, and what jiyi has instead."""
