"""FLIP-232 retry strategies: how often and how long after to retry an element, and on what."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from connector_base.errors import InvalidOptionError

__all__ = ["AsyncRetryStrategy", "empty_result", "has_exception"]

ResultPredicate = Callable[[Sequence[Any]], bool]
ExceptionPredicate = Callable[[BaseException], bool]


def empty_result(results: Sequence[Any]) -> bool:
    """A result predicate: retry when the call returned no rows."""
    return len(results) == 0


def has_exception(error: BaseException) -> bool:
    """An exception predicate: retry on any exception."""
    return isinstance(error, Exception)


def _never(_: Any) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class AsyncRetryStrategy:
    """When to retry one element's call, and how long to wait before attempt ``n + 1``.

    An attempt is retried when ``attempt < max_attempts`` and either its exception satisfies
    ``retry_on_exception`` or its rows satisfy ``retry_on_result``. When no attempt is left, the last
    rows are emitted, or the last exception fails the element. The operator's timeout covers all
    attempts and the waits between them. Build with the factories, not the constructor.
    """

    max_attempts: int
    initial_delay_s: float
    max_delay_s: float
    multiplier: float
    retry_on_result: ResultPredicate = _never
    retry_on_exception: ExceptionPredicate = has_exception

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise InvalidOptionError("max_attempts", self.max_attempts, "an integer >= 1")
        for name in ("initial_delay_s", "max_delay_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise InvalidOptionError(name, value, "a finite number of seconds >= 0")
        if not math.isfinite(self.multiplier) or self.multiplier < 1.0:
            raise InvalidOptionError("multiplier", self.multiplier, "a finite number >= 1.0")

    @classmethod
    def no_retry(cls) -> AsyncRetryStrategy:
        """One attempt; an exception fails the element."""
        return cls(1, 0.0, 0.0, 1.0)

    @classmethod
    def fixed_delay(
        cls,
        max_attempts: int,
        delay_s: float,
        *,
        retry_on_result: ResultPredicate | None = None,
        retry_on_exception: ExceptionPredicate | None = None,
    ) -> AsyncRetryStrategy:
        """Up to ``max_attempts`` attempts, ``delay_s`` apart (on any exception unless told otherwise)."""
        return cls(
            max_attempts,
            delay_s,
            delay_s,
            1.0,
            retry_on_result or _never,
            retry_on_exception or has_exception,
        )

    @classmethod
    def exponential_backoff(
        cls,
        max_attempts: int,
        initial_delay_s: float,
        max_delay_s: float,
        multiplier: float = 2.0,
        *,
        retry_on_result: ResultPredicate | None = None,
        retry_on_exception: ExceptionPredicate | None = None,
    ) -> AsyncRetryStrategy:
        """Up to ``max_attempts`` attempts; waits start at ``initial_delay_s``, grow by ``multiplier``."""
        if max_delay_s < initial_delay_s:
            raise InvalidOptionError(
                "max_delay_s", max_delay_s, f"a number >= initial_delay_s ({initial_delay_s})"
            )
        return cls(
            max_attempts,
            initial_delay_s,
            max_delay_s,
            multiplier,
            retry_on_result or _never,
            retry_on_exception or has_exception,
        )

    def can_retry(self, attempt: int) -> bool:
        """Whether attempt number ``attempt`` (1-based) may be followed by another."""
        return attempt < self.max_attempts

    def backoff_s(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return min(self.max_delay_s, self.initial_delay_s * self.multiplier ** (attempt - 1))

    def should_retry(self, results: Sequence[Any] | None, error: BaseException | None) -> bool:
        """Whether the outcome of one attempt asks for another (ignoring the attempt count)."""
        if error is not None:
            return self.retry_on_exception(error)
        return results is not None and self.retry_on_result(results)
