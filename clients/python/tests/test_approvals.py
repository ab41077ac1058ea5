"""Approvals against a real ptcx serve whose tools file has a tool that
asks (accepts.on_violation "ask")."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ptcx_client import Client, Decision, PendingCall, PtcxError  # noqa: E402

from server import KEYS, Server  # noqa: E402

TOOLS = [
    {"name": "fetch", "description": "Fetch mail.", "input_schema": {"type": "object"},
     "command": ["sh", "-c", "cat >/dev/null; echo '\"mail\"'"], "labels": {"integrity": "untrusted"}},
    {"name": "send", "description": "Send.", "input_schema": {"type": "object"},
     "command": ["sh", "-c", "cat >/dev/null; echo '\"sent\"'"],
     "accepts": {"args": {"to": {"integrity": "trusted"}}, "on_violation": "ask"}},
]
CODE = """const m = await tools.fetch({});
try { return await tools.send({to: m}) } catch (e) { return e.code + ": " + e.message }"""

SERVER = Server(tools=TOOLS)


def setUpModule() -> None:
    SERVER.start()


def tearDownModule() -> None:
    SERVER.stop()


class ApprovalsTest(unittest.TestCase):
    def test_postApprovals_approveThenConflict(self) -> None:
        c = Client(SERVER.url, KEYS["alpha"])
        st = c.post_execution({"code": CODE})
        self.assertEqual(st["status"], "pending", st)
        p = st["pending"][0]
        self.assertEqual(p.get("kind"), "approval")
        self.assertEqual(p["name"], "send")
        self.assertEqual(p["arguments"], {"to": "mail"})
        self.assertIn("send may not receive untrusted data", p.get("reason", ""))
        self.assertEqual(p.get("labels", {}).get("integrity"), "untrusted")
        done = c.post_approvals(st["id"], [{"id": p["id"], "approve": True}])
        self.assertEqual(done["status"], "completed", done)
        self.assertEqual(done.get("value"), "sent")
        c.post_approvals(st["id"], [{"id": p["id"], "approve": True}])  # the same again: a no-op
        with self.assertRaises(PtcxError) as err:
            c.post_approvals(st["id"], [{"id": p["id"], "approve": False}])
        self.assertEqual(err.exception.status, 409)

    def test_postApprovals_declineReachesTheProgram(self) -> None:
        c = Client(SERVER.url, KEYS["alpha"])
        st = c.post_execution({"code": CODE})
        done = c.post_approvals(st["id"], [{"id": st["pending"][0]["id"], "approve": False, "reason": "no"}])
        self.assertEqual(done.get("value"), "DENIED: rejected by the approver: no")

    def test_run_decidesWithApprove(self) -> None:
        c = Client(SERVER.url, KEYS["alpha"])
        seen: list[str] = []

        def approve(p: PendingCall) -> Decision:
            seen.append(p["name"])
            return {"id": p["id"], "approve": False, "reason": "not today"}

        st = c.run(CODE, approve=approve)
        self.assertEqual(st.get("value"), "DENIED: rejected by the approver: not today")
        self.assertEqual(seen, ["send"])
        self.assertEqual(c.run(CODE, approve=lambda p: True).get("value"), "sent")
        with self.assertRaisesRegex(RuntimeError, "waits for an approval of send"):
            c.run(CODE)


if __name__ == "__main__":
    unittest.main()
