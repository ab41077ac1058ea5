"""A client of ``ptcx serve``, standard library only: executions, the
client-tool loop (``Client.run``), sessions, event streams, direct calls,
and bounded retries. See clients/python/README.md."""

from .client import Answer, Client, Tool, answer_with, execution_request, parse_events
from .errors import PtcxConnectionError, PtcxError
from .retry import RetryPolicy, retry_after_seconds
from .types import (
    CallRecord,
    CallResponse,
    ClientTool,
    Decision,
    ErrorBody,
    Event,
    ExecutionRequest,
    ExecutionState,
    PendingCall,
    RunLimits,
    Stats,
    ToolResult,
    ToolResultError,
)

__all__ = [
    "Answer",
    "CallRecord",
    "CallResponse",
    "Client",
    "ClientTool",
    "Decision",
    "ErrorBody",
    "Event",
    "ExecutionRequest",
    "ExecutionState",
    "PendingCall",
    "PtcxConnectionError",
    "PtcxError",
    "RetryPolicy",
    "RunLimits",
    "Stats",
    "Tool",
    "ToolResult",
    "ToolResultError",
    "answer_with",
    "execution_request",
    "parse_events",
    "retry_after_seconds",
]
