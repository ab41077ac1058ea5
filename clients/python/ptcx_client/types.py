"""The wire of ``ptcx serve`` as typed dictionaries: the schemas of
serve/openapi.yaml (serve/protocol's Go types), member for member. An answer
is such a dictionary as the server sent it: members it leaves out are absent."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Status = Literal["running", "pending", "completed", "failed"]


class RunLimits(TypedDict, total=False):
    timeout_ms: int
    wall_ms: int
    memory_mb: int
    output_bytes: int
    model_bytes: int
    max_calls: int


class ClientTool(TypedDict):
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: NotRequired[dict[str, Any]]


class ExecutionRequest(TypedDict):
    code: str
    description: NotRequired[str]
    # "typescript" (the default) or "python", for a tenant whose languages enable it.
    language: NotRequired[str]
    scope: NotRequired[str]
    session: NotRequired[str]
    keep_state: NotRequired[bool]
    workspace_state: NotRequired[str]
    limits: NotRequired[RunLimits]
    client_tools: NotRequired[list[ClientTool]]
    idempotency_key: NotRequired[str]
    wait: NotRequired[bool]


class ErrorBody(TypedDict):
    code: str
    message: str
    kind: NotRequired[str]
    reason: NotRequired[str]
    violations: NotRequired[list[str]]
    location: NotRequired[dict[str, Any]]
    stack: NotRequired[str]


class Stats(TypedDict):
    duration_ms: float
    calls: int
    compute_ms: float
    memory_bytes: int


class CallRecord(TypedDict):
    id: str
    tool: str
    ok: bool
    duration_ms: float
    code: NotRequired[str]


class Label(TypedDict):
    integrity: NotRequired[str]
    confidentiality: NotRequired[str]


class PendingCall(TypedDict):
    """A client tool's call (kind "tool", or no kind), or a call waiting
    for a person's decision (kind "approval", with its reason and labels)."""

    id: str
    name: str
    arguments: Any
    kind: NotRequired[str]
    reason: NotRequired[str]
    labels: NotRequired[Label]


class Decision(TypedDict):
    """Decides one pending approval (post_approvals)."""

    id: str
    approve: bool
    reason: NotRequired[str]


class ExecutionState(TypedDict):
    id: str
    status: Status
    text: NotRequired[str]
    value: NotRequired[Any]
    logs: NotRequired[list[str]]
    stats: NotRequired[Stats]
    calls: NotRequired[list[CallRecord]]
    pending: NotRequired[list[PendingCall]]
    expires_at: NotRequired[str]
    error: NotRequired[ErrorBody]


class ToolResultError(TypedDict):
    message: str


class ToolResult(TypedDict):
    id: str
    ok: bool
    value: NotRequired[Any]
    error: NotRequired[ToolResultError]


class CallResponse(TypedDict):
    ok: bool
    value: NotRequired[Any]
    text: NotRequired[str]
    error: NotRequired[ErrorBody]


class Event(TypedDict):
    """One Server-Sent Event of an execution: its id, its type (call_started,
    call_finished, pending, result_received, expired, log, done) and its data."""

    id: int
    type: str
    data: Any
