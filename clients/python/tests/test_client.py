"""The client against a real ptcx serve (tests/server.py), and its retry
rules against a stub where the real server cannot be made to answer so
(NODE_LOST, a request without an answer)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ptcx_client import (  # noqa: E402
    Client,
    PtcxConnectionError,
    PtcxError,
    RetryPolicy,
    Tool,
    parse_events,
    retry_after_seconds,
)

from server import KEYS, Server  # noqa: E402

SERVER = Server()

ASK = Tool(
    name="ask",
    description="Ask the user a question.",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    handler=lambda args: "Ada",
)
DEMO = 'const name = await tools.ask({q: "Your name?"}); return "hello, " + name'


def setUpModule() -> None:
    SERVER.start()


def tearDownModule() -> None:
    SERVER.stop()


def alpha(**kw: Any) -> Client:
    return Client(SERVER.url, KEYS["alpha"], **kw)


def beta(**kw: Any) -> Client:
    return Client(SERVER.url, KEYS["beta"], **kw)


class ExecutionTest(unittest.TestCase):
    def test_run_answersClientToolsUntilSettled(self) -> None:
        asked: list[Any] = []

        def ask(args: Any) -> str:
            asked.append(args)
            return "Ada"

        tool = Tool(ASK.name, ASK.description, ASK.input_schema, ask)
        st = alpha().run(DEMO, tools=[tool])
        self.assertEqual(st["status"], "completed", st)
        self.assertEqual(st["text"], "hello, Ada")
        self.assertEqual(asked, [{"q": "Your name?"}])
        self.assertEqual([c["tool"] for c in st["calls"]], ["ask"])

    def test_run_oneClientFromManyThreads(self) -> None:
        c = alpha()
        results: list[str] = []
        errors: list[BaseException] = []

        def one() -> None:
            try:
                results.append(c.run(DEMO, tools=[ASK])["text"])
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=one) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        self.assertEqual(results, ["hello, Ada"] * 8)

    def test_run_manyRoundsAndAFailedTool(self) -> None:
        def ask(args: Any) -> Any:
            if args["q"] == "fail":
                raise ValueError("no answer for you")
            return args["q"].upper()

        code = """
        const out = [];
        for (const q of ["a", "b", "c"]) out.push(await tools.ask({q}));
        try { await tools.ask({q: "fail"}); } catch (e) { out.push(e.code + ": " + e.message); }
        return out.join(",");
        """
        st = alpha().run(code, tools=[Tool("ask", "Ask.", {"type": "object"}, ask)])
        self.assertEqual(st["status"], "completed", st)
        self.assertTrue(st["text"].startswith("A,B,C,TOOL_FAILED: "), st["text"])
        self.assertIn("no answer for you", st["text"])

    def test_run_aProgramThatThrowsIsAFailedState(self) -> None:
        st = alpha().run('throw new Error("boom")')
        self.assertEqual(st["status"], "failed")
        self.assertIn("boom", st["error"]["message"])

    def test_run_aPythonProgram_whereTheTenantEnablesIt(self) -> None:
        st = alpha().run("import json\nprint('adding')\njson.loads('[1, 2]')[0] + 1", language="python")
        self.assertEqual(st["status"], "completed", st)
        self.assertEqual(st["value"], 2)
        self.assertIn("adding", st["text"])
        # beta runs TypeScript only: the execution fails, naming what it runs.
        st = beta().run("1 + 1", language="python")
        self.assertEqual(st["status"], "failed", st)
        self.assertEqual(st["error"]["code"], "INVALID_ARGS")
        self.assertIn("typescript", st["error"]["message"])

    def test_createAndGet_pendingThenResults(self) -> None:
        c = alpha()
        st = c.create_execution(DEMO, client_tools=[ASK.declaration()])
        self.assertEqual(st["status"], "pending", st)
        call = st["pending"][0]
        self.assertEqual((call["name"], call["arguments"]), ("ask", {"q": "Your name?"}))
        self.assertEqual(c.get_execution(st["id"])["status"], "pending")
        done = c.post_tool_results(st["id"], [{"id": call["id"], "ok": True, "value": "Ada"}])
        self.assertEqual(done["text"], "hello, Ada")
        # Results posted again are no-ops.
        again = c.post_tool_results(st["id"], [{"id": call["id"], "ok": True, "value": "Bob"}])
        self.assertEqual(again["text"], "hello, Ada")
        self.assertEqual(c.get_execution(st["id"], wait=True)["text"], "hello, Ada")

    def test_createExecution_idempotencyKeyReturnsTheFirst(self) -> None:
        c = alpha()
        key = "k-" + uuid.uuid4().hex
        first = c.create_execution("return 1 + 1", idempotency_key=key)
        second = c.create_execution("return 1 + 1", idempotency_key=key)
        self.assertEqual(first["id"], second["id"])
        with self.assertRaises(PtcxError) as cm:
            c.create_execution("return 2 + 2", idempotency_key=key)
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "CONFLICT"))

    def test_cancel_aLiveExecutionThenASettledOne(self) -> None:
        c = alpha()
        st = c.create_execution(DEMO, client_tools=[ASK.declaration()])
        self.assertEqual(c.cancel_execution(st["id"])["status"], "failed")
        with self.assertRaises(PtcxError) as cm:
            c.cancel_execution(st["id"])
        self.assertEqual(cm.exception.status, 409)

    def test_errors_badRequestWrongKeyAnotherTenant(self) -> None:
        c = alpha()
        with self.assertRaises(PtcxError) as cm:
            c.create_execution("")
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "BAD_REQUEST"))
        self.assertIn("field code", str(cm.exception))
        with self.assertRaises(PtcxError) as cm:
            Client(SERVER.url, "not-a-key").get_execution("ex_0")
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "UNAUTHORIZED"))
        st = c.create_execution("return 1")
        with self.assertRaises(PtcxError) as cm:
            Client(SERVER.url, KEYS["beta"]).get_execution(st["id"])
        self.assertEqual(cm.exception.status, 404, "another tenant's execution is not found")
        with self.assertRaises(PtcxError) as cm:
            c.get_execution("../../v1/tools")
        self.assertEqual(cm.exception.status, 404, "an id is one path segment")


class SessionTest(unittest.TestCase):
    def test_keepState_programsShareStateUntilDeleted(self) -> None:
        c = alpha()
        name = "s-" + uuid.uuid4().hex[:8]
        code = "globalThis.n = (globalThis.n ?? 0) + 1; return n"
        self.assertEqual(c.run(code, session=name, keep_state=True)["value"], 1)
        self.assertEqual(c.run(code, session=name, keep_state=True)["value"], 2)
        self.assertEqual(c.run(code)["value"], 1, "without keep_state, a fresh state")
        c.delete_session(name)
        self.assertEqual(c.run(code, session=name, keep_state=True)["value"], 1, "deleted: it starts afresh")
        c.delete_session(name)
        with self.assertRaises(PtcxError) as cm:
            c.delete_session(name)
        self.assertEqual(cm.exception.status, 404)


class EventsTest(unittest.TestCase):
    def test_streamEvents_allThenResumedAfterAnId(self) -> None:
        c = alpha()
        st = c.run('console.log("one"); const x = await tools.ask({q: "?"}); console.log("two"); return x', tools=[ASK])
        self.assertEqual(st["value"], "Ada")
        events = list(c.stream_events(st["id"]))
        types = [e["type"] for e in events]
        self.assertEqual(types[-1], "done")
        self.assertEqual(events[-1]["data"]["status"], "completed")
        for want in ("log", "pending", "result_received"):
            self.assertIn(want, types)
        self.assertEqual([e["data"]["line"] for e in events if e["type"] == "log"], ["one", "two"])
        self.assertEqual([e["id"] for e in events], list(range(1, len(events) + 1)))
        after = list(c.stream_events(st["id"], last_event_id=events[1]["id"]))
        self.assertEqual(after, events[2:])

    def test_parseEvents_fieldsCommentsAndMultilineData(self) -> None:
        stream = [b": keep-alive\n", b"id: 1\n", b"event: log\n", b'data: {"line":\n', b"data: 1}\n", b"\n",
                  b"\r\n", b"id: 2\r\n", b"event: done\r\n", b'data: {"status":"completed"}\r\n', b"\r\n"]
        self.assertEqual(list(parse_events(iter(stream))), [
            {"id": 1, "type": "log", "data": {"line": 1}},
            {"id": 2, "type": "done", "data": {"status": "completed"}},
        ])


class CallsTest(unittest.TestCase):
    def test_callTool_runCodeDirectAndAnUnknownTool(self) -> None:
        c = alpha()
        out = c.call_tool("run_code", {"code": "return 6 * 7"})
        self.assertTrue(out["ok"], out)
        self.assertEqual(out["value"]["result"], 42)
        out = c.call_tool("no_such_tool", {})
        self.assertFalse(out["ok"])
        self.assertEqual(out["error"]["code"], "UNKNOWN_TOOL")

    def test_listToolsAndPrompt(self) -> None:
        c = alpha()
        names = [t["function"]["name"] if "function" in t else t["name"] for t in c.list_tools()["tools"]]
        self.assertIn("run_code", names)
        self.assertIn("run_code", [t["name"] for t in c.list_tools(format="anthropic")["tools"]])
        with self.assertRaises(PtcxError) as cm:
            c.list_tools(format="nope")
        self.assertEqual(cm.exception.status, 400)
        self.assertTrue(c.get_prompt()["sections"])


class QuotaRetryTest(unittest.TestCase):
    """beta runs one program at a time: a second is 429 max_concurrent with
    Retry-After, which the client waits for and retries, within its bounds."""

    def hold_slot(self) -> tuple[Client, str]:
        c = Client(SERVER.url, KEYS["beta"])
        st = c.create_execution("while (true) {}", wait=False, limits={"timeout_ms": 20000})
        self.addCleanup(lambda: _cancel_quietly(c, st["id"]))
        return c, st["id"]

    def test_retry_429UntilTheSlotIsFree(self) -> None:
        holder, held = self.hold_slot()
        waits: list[float] = []

        def sleep(s: float) -> None:
            waits.append(s)
            if len(waits) == 1:
                holder.cancel_execution(held)
            time.sleep(s)

        c = Client(SERVER.url, KEYS["beta"], sleep=sleep, retry=RetryPolicy(max_retries=10, max_elapsed=30))
        st = c.run("return 7")
        self.assertEqual(st["value"], 7)
        self.assertGreaterEqual(len(waits), 1)
        self.assertEqual(waits[0], 1.0, "the server's Retry-After: 1")

    def test_retry_boundedInCount(self) -> None:
        self.hold_slot()
        waits: list[float] = []
        c = Client(SERVER.url, KEYS["beta"], sleep=waits.append, retry=RetryPolicy(max_retries=3, max_elapsed=30))
        with self.assertRaises(PtcxError) as cm:
            c.create_execution("return 1")
        self.assertEqual((cm.exception.status, cm.exception.reason), (429, "max_concurrent"))
        self.assertEqual(cm.exception.retry_after, 1.0)
        self.assertEqual(waits, [1.0, 1.0, 1.0])

    def test_retry_boundedInTime(self) -> None:
        self.hold_slot()
        waits: list[float] = []
        c = Client(SERVER.url, KEYS["beta"], sleep=waits.append, retry=RetryPolicy(max_retries=100, max_elapsed=0.5))
        start = time.monotonic()
        with self.assertRaises(PtcxError):
            c.create_execution("return 1")
        self.assertEqual(waits, [], "a Retry-After past the time budget is not waited")
        self.assertLess(time.monotonic() - start, 5)


class Stub:
    """An HTTP server on loopback answering with handler(method, path, body)
    -> (status, headers, body), recording the requests."""

    def __init__(self, handler: Any) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        stub = self

        class H(BaseHTTPRequestHandler):
            def do(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n)) if n else None
                stub.requests.append((self.command, self.path, body))
                status, headers, out = handler(self.command, self.path, body)
                data = json.dumps(out).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class RetryRulesTest(unittest.TestCase):
    def stub(self, handler: Any) -> Stub:
        s = Stub(handler)
        self.addCleanup(s.close)
        return s

    def test_nodeLost_retriedOnlyWithAnIdempotencyKey(self) -> None:
        def handler(method: str, path: str, body: Any) -> Any:
            key = (body or {}).get("idempotency_key", "")
            if key.endswith("#1"):
                return 200, {}, {"id": "ex_2", "status": "completed", "value": 1, "text": "1"}
            return 200, {}, {"id": "ex_1", "status": "failed", "error": {"code": "NODE_LOST", "message": "lost"}}

        s = self.stub(handler)
        c = Client(s.url, "k", sleep=lambda _: None)
        st = c.run("return 1")
        self.assertEqual(st["error"]["code"], "NODE_LOST", "without a key, NODE_LOST is returned")
        self.assertEqual(len(s.requests), 1)
        st = c.run("return 1", idempotency_key="K")
        self.assertEqual(st["status"], "completed")
        self.assertEqual([r[2].get("idempotency_key") for r in s.requests[1:]], ["K", "K#1"])

    def test_nodeLost_boundedInCount(self) -> None:
        s = self.stub(lambda m, p, b: (200, {}, {"id": "ex_1", "status": "failed", "error": {"code": "NODE_LOST", "message": "lost"}}))
        c = Client(s.url, "k", sleep=lambda _: None, retry=RetryPolicy(max_retries=2))
        st = c.run("return 1", idempotency_key="K")
        self.assertEqual(st["error"]["code"], "NODE_LOST")
        self.assertEqual([r[2]["idempotency_key"] for r in s.requests], ["K", "K#1", "K#2"])

    def test_503_retriedWithRetryAfterThenRaised(self) -> None:
        s = self.stub(lambda m, p, b: (503, {"Retry-After": "2"}, {"error": {"code": "DRAINING", "message": "draining"}}))
        waits: list[float] = []
        c = Client(s.url, "k", sleep=waits.append, retry=RetryPolicy(max_retries=2))
        with self.assertRaises(PtcxError) as cm:
            c.call_tool("run_code", {"code": "1"})
        self.assertEqual((cm.exception.status, cm.exception.code), (503, "DRAINING"))
        self.assertEqual(waits, [2.0, 2.0])
        self.assertEqual(len(s.requests), 3)

    def test_409WithRetryAfter_retried(self) -> None:
        answers = [(409, {"Retry-After": "1"}), (200, {})]
        s = self.stub(lambda m, p, b: (*answers.pop(0), {"id": "ex_1", "status": "completed"}))
        waits: list[float] = []
        st = Client(s.url, "k", sleep=waits.append).create_execution("return 1", session="s", keep_state=True)
        self.assertEqual(st["status"], "completed")
        self.assertEqual(waits, [1.0])

    def test_otherErrors_notRetried(self) -> None:
        for status in (400, 404, 409, 500):
            s = self.stub(lambda m, p, b, status=status: (status, {}, {"error": {"code": "X", "message": "x"}}))
            c = Client(s.url, "k", sleep=lambda _: self.fail("no wait"))
            with self.assertRaises(PtcxError):
                c.get_execution("ex_1")
            self.assertEqual(len(s.requests), 1, status)

    def test_noAnswer_retriedOnlyWhereHarmless(self) -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        sock.close()  # nothing listens there: every request is refused
        cases: list[tuple[str, Callable[[Client], Any], bool]] = [
            ("an execution without a key", lambda c: c.create_execution("return 1"), False),
            ("a direct call", lambda c: c.call_tool("run_code", {"code": "1"}), False),
            ("an execution with a key", lambda c: c.create_execution("return 1", idempotency_key="K"), True),
            ("a read", lambda c: c.get_execution("ex_1"), True),
            ("tool results", lambda c: c.post_tool_results("ex_1", []), True),
        ]
        for name, call, retried in cases:
            waits: list[float] = []
            c = Client(url, "k", sleep=waits.append, retry=RetryPolicy(max_retries=3))
            with self.assertRaises(PtcxConnectionError, msg=name):
                call(c)
            self.assertEqual(waits, [0.25, 0.5, 1.0] if retried else [], name)

    def test_retryAfter_parsesWhatAServerMaySend(self) -> None:
        self.assertEqual(retry_after_seconds("3"), 3.0)
        self.assertEqual(retry_after_seconds(" 0 "), 0.0)
        self.assertIsNone(retry_after_seconds(None))
        self.assertIsNone(retry_after_seconds("soon"))
        self.assertIsNone(retry_after_seconds("-1"))
        self.assertEqual(retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0, "a past date: now")
        future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 90))
        self.assertAlmostEqual(retry_after_seconds(future) or 0, 90, delta=3)


class StreamResumeTest(unittest.TestCase):
    def test_streamEvents_cutBeforeDoneResumesFromTheLastEvent(self) -> None:
        asked: list[str | None] = []

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends where the connection does

            def do_GET(self) -> None:
                last = self.headers.get("Last-Event-ID")
                asked.append(last)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                if last is None:  # one event, then the connection is cut
                    self.wfile.write(b'id: 1\nevent: log\ndata: {"line":"a"}\n\n')
                else:
                    self.wfile.write(b'id: 2\nevent: done\ndata: {"status":"completed","dropped_events":0}\n\n')

            def log_message(self, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        self.addCleanup(httpd.server_close)
        self.addCleanup(httpd.shutdown)
        c = Client(f"http://127.0.0.1:{httpd.server_address[1]}", "k", sleep=lambda _: None)
        self.assertEqual([e["type"] for e in c.stream_events("ex_1")], ["log", "done"])
        self.assertEqual(asked, [None, "1"])

    def test_streamEvents_neverDoneIsBounded(self) -> None:
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        self.addCleanup(httpd.server_close)
        self.addCleanup(httpd.shutdown)
        waits: list[float] = []
        c = Client(f"http://127.0.0.1:{httpd.server_address[1]}", "k", sleep=waits.append, retry=RetryPolicy(max_retries=3))
        with self.assertRaises(PtcxConnectionError):
            list(c.stream_events("ex_1"))
        self.assertEqual(len(waits), 3)


class ExampleTest(unittest.TestCase):
    def test_example_printsHelloAda(self) -> None:
        example = Path(__file__).resolve().parents[1] / "example.py"
        env = {**os.environ, "PTCX_URL": SERVER.url, "PTCX_KEY": KEYS["alpha"]}
        out = subprocess.run([sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, "hello, Ada\n")


def _cancel_quietly(c: Client, execution_id: str) -> None:
    try:
        c.cancel_execution(execution_id)
    except PtcxError:
        pass


if __name__ == "__main__":
    unittest.main()
