"""The client of ``ptcx serve`` (docs/service.md; serve/openapi.yaml, whose
operationIds name its methods). A Client holds no connection between
requests, so one may be shared between threads."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from .errors import PtcxConnectionError, PtcxError
from .retry import Budget, RetryPolicy, retry_after_seconds
from .types import (
    CallResponse,
    ClientTool,
    Decision,
    ErrorBody,
    Event,
    ExecutionRequest,
    ExecutionState,
    PendingCall,
    RunLimits,
    ToolResult,
)

# The largest answer body read (as the Go client's).
MAX_RESPONSE_BYTES = 64 << 20

# Answer returns the results of an execution's pending client-side calls.
Answer = Callable[[list[PendingCall]], list[ToolResult]]


@dataclass(frozen=True)
class Tool:
    """A client-side tool: declared to the server with the execution, and
    run here by ``Client.run`` each time the program calls it. ``handler``
    gets the call's arguments and returns its JSON value; an exception it
    raises is the program's failed call (a ToolCallError, TOOL_FAILED, with
    the exception's text)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Callable[[Any], Any]
    output_schema: Mapping[str, Any] | None = None

    def declaration(self) -> ClientTool:
        t: ClientTool = {"name": self.name, "description": self.description, "input_schema": dict(self.input_schema)}
        if self.output_schema is not None:
            t["output_schema"] = dict(self.output_schema)
        return t


class Client:
    """Talks to one server (``base_url``, e.g. http://127.0.0.1:8080) with one
    tenant's API key. ``timeout`` bounds each request's connection and each
    read (an event stream gets a keep-alive every 15 s). ``retry`` is the
    retry policy of every request (RetryPolicy's defaults when None)."""

    def __init__(
        self,
        base_url: str,
        key: str,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.key = key
        self.timeout = timeout
        self.retry = retry if retry is not None else RetryPolicy()
        self._sleep = sleep
        self._clock = clock

    # --- executions -----------------------------------------------------

    def create_execution(
        self,
        code: str,
        *,
        client_tools: Sequence[ClientTool] = (),
        idempotency_key: str | None = None,
        session: str | None = None,
        keep_state: bool = False,
        workspace_state: str | None = None,
        scope: str | None = None,
        limits: RunLimits | None = None,
        description: str | None = None,
        language: str | None = None,
        wait: bool = True,
    ) -> ExecutionState:
        """Starts an execution (POST /v1/executions, createExecution). With
        ``wait`` (the default) the answer comes once it settles or turns
        pending (at most the server's max_wait_ms: then ``running``)."""
        req = execution_request(
            code,
            client_tools=client_tools,
            idempotency_key=idempotency_key,
            session=session,
            keep_state=keep_state,
            workspace_state=workspace_state,
            scope=scope,
            limits=limits,
            description=description,
            language=language,
            wait=wait,
        )
        return self.post_execution(req)

    def post_execution(self, req: ExecutionRequest) -> ExecutionState:
        """POST /v1/executions with a request built by the caller; a request
        without an answer is sent again only when it has an idempotency_key."""
        safe = bool(req.get("idempotency_key"))
        return cast(ExecutionState, self._json("POST", "/v1/executions", req, safe=safe))

    def get_execution(self, execution_id: str, *, wait: bool = False) -> ExecutionState:
        """An execution's state (GET /v1/executions/{id}, getExecution);
        ``wait`` waits while it runs (at most the server's max_wait_ms)."""
        query = {"wait": "true"} if wait else None
        return cast(ExecutionState, self._json("GET", f"/v1/executions/{_seg(execution_id)}", query=query))

    def cancel_execution(self, execution_id: str) -> ExecutionState:
        """Cancels a live execution (DELETE /v1/executions/{id},
        cancelExecution); a settled one is a 409 PtcxError."""
        return cast(ExecutionState, self._json("DELETE", f"/v1/executions/{_seg(execution_id)}"))

    def post_tool_results(self, execution_id: str, results: Sequence[ToolResult]) -> ExecutionState:
        """Answers pending client-side calls (POST
        /v1/executions/{id}/tool_results, postToolResults): repeated and
        unknown call ids are no-ops, so a retry is harmless."""
        body = {"results": list(results)}
        return cast(ExecutionState, self._json("POST", f"/v1/executions/{_seg(execution_id)}/tool_results", body))

    def post_approvals(self, execution_id: str, decisions: Sequence[Decision]) -> ExecutionState:
        """Decides pending approvals, the pending items of kind "approval"
        (POST /v1/executions/{id}/approvals, postApprovals): approved, the
        call runs and the program continues; declined, its promise rejects
        with DENIED and the reason. The same decision again is a no-op, so a
        retry is harmless; another decision for one decided already is a 409
        PtcxError."""
        body = {"decisions": list(decisions)}
        return cast(ExecutionState, self._json("POST", f"/v1/executions/{_seg(execution_id)}/approvals", body))

    def run(
        self,
        code: str,
        *,
        tools: Sequence[Tool] = (),
        answer: Answer | None = None,
        approve: Callable[[PendingCall], bool | Decision] | None = None,
        idempotency_key: str | None = None,
        session: str | None = None,
        keep_state: bool = False,
        workspace_state: str | None = None,
        scope: str | None = None,
        limits: RunLimits | None = None,
        description: str | None = None,
        language: str | None = None,
    ) -> ExecutionState:
        """Starts an execution and drives it until it settles, the client-tool
        loop: each time it is pending, its calls are answered (by ``answer``
        when given, else by the handlers of ``tools``) and the results posted;
        while it runs, the server is asked to wait for it. Returns the settled
        state, completed or failed: a failed execution is a state, not an
        error. Requests are retried as ``self.retry`` says; an execution that
        failed NODE_LOST is started again (within the same bounds) only when
        ``idempotency_key`` is given, under the key ``<key>#<n>``, so
        that each new start is itself deduplicated. Calls pending for a
        person's approval (kind "approval") are decided by ``approve`` (True,
        False, or a Decision with a reason); without it, run raises
        RuntimeError at the first one, the execution left pending."""
        declared = [t.declaration() for t in tools]
        handlers = {t.name: t.handler for t in tools}
        reply = answer if answer is not None else (lambda calls: answer_with(handlers, calls))
        budget = Budget(self.retry, self._clock, self._sleep)
        key = idempotency_key
        while True:
            req = execution_request(
                code,
                client_tools=declared,
                idempotency_key=key,
                session=session,
                keep_state=keep_state,
                workspace_state=workspace_state,
                scope=scope,
                limits=limits,
                description=description,
                language=language,
                wait=True,
            )
            st = self.post_execution(req)
            while st["status"] in ("pending", "running"):
                if st["status"] == "pending":
                    pending = st.get("pending", [])
                    approvals = [p for p in pending if p.get("kind") == "approval"]
                    if approvals:
                        st = self.post_approvals(st["id"], _decide(approve, st["id"], approvals))
                        continue
                    st = self.post_tool_results(st["id"], reply(pending))
                else:
                    st = self.get_execution(st["id"], wait=True)
            lost = st["status"] == "failed" and st.get("error", {}).get("code") == "NODE_LOST"
            if not lost or idempotency_key is None or not budget.wait(0):
                return st
            key = f"{idempotency_key}#{budget.retries}"

    # --- sessions, calls, tools -----------------------------------------

    def delete_session(self, name: str, *, scope: str | None = None) -> None:
        """Ends a keep_state session, deleting its saved state (DELETE
        /v1/sessions/{name}, deleteSession); one that does not exist is a
        404 PtcxError."""
        self._json("DELETE", f"/v1/sessions/{_seg(name)}", query={"scope": scope} if scope else None)

    def call_tool(self, name: str, arguments: Any = None, *, scope: str | None = None) -> CallResponse:
        """A model-direct call (POST /v1/calls, callTool): the envelope of
        ``ptcx call``. Never sent again after a request without an answer
        (a call has no idempotency key)."""
        body: dict[str, Any] = {"name": name}
        if arguments is not None:
            body["arguments"] = arguments
        if scope:
            body["scope"] = scope
        return cast(CallResponse, self._json("POST", "/v1/calls", body, safe=False))

    def list_tools(self, *, scope: str | None = None, format: str | None = None) -> dict[str, Any]:
        """The advertised tools (GET /v1/tools, listTools): {"tools": [...]}."""
        query = {k: v for k, v in (("scope", scope), ("format", format)) if v}
        return cast(dict[str, Any], self._json("GET", "/v1/tools", query=query or None))

    def get_prompt(self, *, scope: str | None = None, language: str | None = None) -> dict[str, Any]:
        """The tool sections of the system prompt (GET /v1/prompt, getPrompt), the tools declared in
        language ("typescript" or "python"; default: typescript when the tenant enables it, else the
        one it enables)."""
        query = {k: v for k, v in (("scope", scope), ("language", language)) if v}
        return cast(dict[str, Any], self._json("GET", "/v1/prompt", query=query or None))

    # --- events -----------------------------------------------------------

    def stream_events(self, execution_id: str, *, last_event_id: int = 0) -> Iterator[Event]:
        """The execution's events (GET /v1/executions/{id}/events,
        streamEvents, Server-Sent Events) after event ``last_event_id``, as
        they come, until the ``done`` event. A stream cut before ``done`` is
        resumed from the last event received (Last-Event-ID), within the
        retry policy's bounds."""
        budget = Budget(self.retry, self._clock, self._sleep)
        last = last_event_id
        path = f"/v1/executions/{_seg(execution_id)}/events"
        while True:
            headers = {"Accept": "text/event-stream"}
            if last > 0:
                headers["Last-Event-ID"] = str(last)
            try:
                resp = self._open("GET", path, None, None, headers, budget, safe=True)
                with resp:
                    for ev in parse_events(resp):
                        last = ev["id"]
                        yield ev
                        if ev["type"] == "done":
                            return
            except (OSError, http.client.HTTPException) as e:
                if not budget.wait(self.retry.connection_wait):
                    raise PtcxConnectionError(f"the event stream of {execution_id} was cut: {e}") from e
                continue
            # The stream ended without done: resume it.
            if not budget.wait(self.retry.connection_wait):
                raise PtcxConnectionError(f"the event stream of {execution_id} ended before its done event")

    # --- the requests -------------------------------------------------------

    def _json(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Mapping[str, str] | None = None,
        safe: bool | None = None,
    ) -> Any:
        """Sends a request and decodes its JSON answer (None for a 204)."""
        if safe is None:
            safe = method in ("GET", "DELETE") or path.endswith("/tool_results") or path.endswith("/approvals")
        budget = Budget(self.retry, self._clock, self._sleep)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        with self._open(method, path, query, data, headers, budget, safe=safe) as resp:
            raw = resp.read(MAX_RESPONSE_BYTES + 1)
        if len(raw) > MAX_RESPONSE_BYTES:
            raise PtcxConnectionError(f"{method} {path}: the answer is over {MAX_RESPONSE_BYTES} bytes")
        return json.loads(raw) if raw else None

    def _open(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None,
        data: bytes | None,
        headers: dict[str, str],
        budget: Budget,
        *,
        safe: bool,
    ) -> http.client.HTTPResponse:
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {**headers, "Authorization": f"Bearer {self.key}"}
        wait = self.retry.connection_wait
        while True:
            req = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                return cast(http.client.HTTPResponse, urllib.request.urlopen(req, timeout=self.timeout))
            except urllib.error.HTTPError as e:
                err = _error_of(e)
                if _retryable(err) and budget.wait(err.retry_after if err.retry_after is not None else self.retry.default_wait):
                    continue
                raise err from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
                if safe and budget.wait(wait):
                    wait *= 2
                    continue
                raise PtcxConnectionError(f"{method} {path}: no answer: {_cause(e)}") from e


def execution_request(
    code: str,
    *,
    client_tools: Sequence[ClientTool] = (),
    idempotency_key: str | None = None,
    session: str | None = None,
    keep_state: bool = False,
    workspace_state: str | None = None,
    scope: str | None = None,
    limits: RunLimits | None = None,
    description: str | None = None,
    language: str | None = None,
    wait: bool = True,
) -> ExecutionRequest:
    """The body of POST /v1/executions, with the members given."""
    req: ExecutionRequest = {"code": code}
    if description:
        req["description"] = description
    if language:
        req["language"] = language
    if scope:
        req["scope"] = scope
    if session:
        req["session"] = session
    if keep_state:
        req["keep_state"] = True
    if workspace_state:
        req["workspace_state"] = workspace_state
    if limits:
        req["limits"] = limits
    if client_tools:
        req["client_tools"] = list(client_tools)
    if idempotency_key:
        req["idempotency_key"] = idempotency_key
    if not wait:
        req["wait"] = False
    return req


def _decide(approve: Callable[[PendingCall], bool | Decision] | None, execution_id: str,
            approvals: list[PendingCall]) -> list[Decision]:
    """The decisions of run's ``approve`` for an execution's pending approvals."""
    if approve is None:
        raise RuntimeError(f"ptcx client: execution {execution_id} waits for an approval of {approvals[0]['name']} "
                           "and run was given no approve")
    out: list[Decision] = []
    for p in approvals:
        d = approve(p)
        if isinstance(d, bool):
            out.append({"id": p["id"], "approve": d})
            continue
        dec: Decision = {"id": p["id"], "approve": d["approve"]}
        if "reason" in d:
            dec["reason"] = d["reason"]
        out.append(dec)
    return out


def answer_with(handlers: Mapping[str, Callable[[Any], Any]], calls: list[PendingCall]) -> list[ToolResult]:
    """The results of calls, each from its tool's handler: its return value,
    or the text of the exception it raised as a failed call."""
    results: list[ToolResult] = []
    for call in calls:
        handler = handlers.get(call["name"])
        if handler is None:
            results.append({"id": call["id"], "ok": False, "error": {"message": f"the client has no handler for the tool {call['name']!r}"}})
            continue
        try:
            value = handler(call.get("arguments"))
        except Exception as e:  # the program gets it as a failed call
            results.append({"id": call["id"], "ok": False, "error": {"message": str(e) or type(e).__name__}})
            continue
        results.append({"id": call["id"], "ok": True, "value": value})
    return results


def parse_events(lines: Iterator[bytes] | Any) -> Iterator[Event]:
    """The events of a Server-Sent Events stream, read line by line: ``id``,
    ``event`` and ``data`` fields, an event dispatched at each blank line,
    comments (``: keep-alive``) skipped."""
    ev_id, ev_type = 0, ""
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if ev_type:
                yield {"id": ev_id, "type": ev_type, "data": json.loads("\n".join(data)) if data else None}
            ev_type, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "id":
            ev_id = int(value)
        elif field == "event":
            ev_type = value
        elif field == "data":
            data.append(value)


def _seg(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _retryable(err: PtcxError) -> bool:
    # The server sends these where nothing was done (docs/service.md).
    return err.status in (429, 503) or (err.status == 409 and err.retry_after is not None)


def _error_of(e: urllib.error.HTTPError) -> PtcxError:
    retry_after = retry_after_seconds(e.headers.get("Retry-After"))
    try:
        raw = e.read(MAX_RESPONSE_BYTES)
    except (OSError, http.client.HTTPException):
        raw = b""
    finally:
        e.close()
    body: ErrorBody = {"code": "", "message": raw.decode("utf-8", "replace")}
    try:
        envelope = json.loads(raw)
        if isinstance(envelope, dict) and isinstance(envelope.get("error"), dict):
            body = cast(ErrorBody, envelope["error"])
    except ValueError:
        pass
    return PtcxError(e.code, body, retry_after)


def _cause(e: BaseException) -> str:
    if isinstance(e, urllib.error.URLError) and not isinstance(e.reason, str):
        return str(e.reason)
    if isinstance(e, socket.timeout):
        return "timed out"
    return str(e)
