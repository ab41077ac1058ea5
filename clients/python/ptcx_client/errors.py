"""The client's errors: an answer of the server that is not a 2xx
(``PtcxError``, with the server's error envelope), and a request that got no
answer at all (``PtcxConnectionError``)."""

from __future__ import annotations

from .types import ErrorBody


class PtcxError(Exception):
    """A non-2xx answer: its HTTP status, the envelope's error (``code``,
    ``message``, ``reason`` of a 429, ...), and its Retry-After in seconds
    (None when it sent none)."""

    def __init__(self, status: int, error: ErrorBody, retry_after: float | None) -> None:
        super().__init__(f"ptcx serve: {status} {error.get('code', '')}: {error.get('message', '')}")
        self.status = status
        self.error = error
        self.retry_after = retry_after

    @property
    def code(self) -> str:
        return self.error.get("code", "")

    @property
    def reason(self) -> str:
        return self.error.get("reason", "")


class PtcxConnectionError(Exception):
    """A request that got no answer (refused, reset, timed out): whether the
    server did anything is unknown, so it is retried only where repeating it
    is harmless (reads, tool results, an execution with an idempotency key)."""
