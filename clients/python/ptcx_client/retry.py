"""Retries, bounded in count and in total time."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class RetryPolicy:
    """How a request is retried. The server says which answers to retry: a
    429, a 503, or a 409 with Retry-After were refused before anything was
    done (docs/service.md, "Requests and errors"), and are sent again after
    their Retry-After (``default_wait`` where they name none). A request
    without an answer (connection refused or reset, a timeout) is sent again
    only where that is harmless: reads, tool results (repeated call ids are
    no-ops), cancels, and an execution carrying an ``idempotency_key``. An
    execution that failed ``NODE_LOST`` (its node was lost while it ran) is
    started again by ``Client.run`` only when it carries an idempotency key.

    Every request gets at most ``max_retries`` retries within ``max_elapsed``
    seconds from its first attempt: a wait that would end past that is not
    waited, and the last error is raised. ``max_retries=0`` retries nothing.
    """

    max_retries: int = 5
    max_elapsed: float = 60.0
    default_wait: float = 1.0
    # The wait after a request that got no answer, doubled each time.
    connection_wait: float = 0.25


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header's wait in seconds: whole seconds (the form the
    server sends) or an HTTP date; None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


class Budget:
    """One request's retries: a count and a deadline on the monotonic clock."""

    def __init__(self, policy: RetryPolicy, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self.policy = policy
        self.clock = clock
        self.sleep = sleep
        self.deadline = clock() + policy.max_elapsed
        self.retries = 0

    def wait(self, seconds: float) -> bool:
        """Waits seconds and counts a retry; False (without waiting) when the
        count is spent or the wait would end past the deadline."""
        if self.retries >= self.policy.max_retries or self.clock() + seconds > self.deadline:
            return False
        self.retries += 1
        if seconds > 0:
            self.sleep(seconds)
        return True
