// Approvals against a real ptcx serve whose tools file has a tool that
// asks (accepts.on_violation "ask"): decide, and run's approve option.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client, PtcxError } from "../dist/index.js";
import { startServe } from "./serve.mjs";

const tools = [
  {
    name: "fetch", description: "Fetch mail.", input_schema: { type: "object" },
    command: ["sh", "-c", "cat >/dev/null; echo '\"mail\"'"], labels: { integrity: "untrusted" },
  },
  {
    name: "send", description: "Send.", input_schema: { type: "object" },
    command: ["sh", "-c", "cat >/dev/null; echo '\"sent\"'"],
    accepts: { args: { to: { integrity: "trusted" } }, on_violation: "ask" },
  },
];
const code = `const m = await tools.fetch({});
try { return await tools.send({to: m}) } catch (e) { return e.code + ": " + e.message }`;

let srv;
let c;
before(async () => {
  srv = await startServe({ tools });
  c = new Client({ baseUrl: srv.url, key: srv.keys.main });
});
after(async () => srv && (await srv.stop()));

describe("approvals", () => {
  test("a call that asks is pending as an approval; decide approves it", async () => {
    const st = await c.execute({ code });
    assert.equal(st.status, "pending", JSON.stringify(st));
    const p = st.pending[0];
    assert.equal(p.kind, "approval");
    assert.equal(p.name, "send");
    assert.deepEqual(p.arguments, { to: "mail" });
    assert.match(p.reason, /send may not receive untrusted data/);
    assert.equal(p.labels.integrity, "untrusted");
    const done = await c.decide(st.id, [{ id: p.id, approve: true }]);
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(done.value, "sent");
    // The same decision again is a no-op; another is 409.
    await c.decide(st.id, [{ id: p.id, approve: true }]);
    await assert.rejects(c.decide(st.id, [{ id: p.id, approve: false }]), (e) => e instanceof PtcxError && e.status === 409);
  });

  test("run declines with approve, the reason reaching the program", async () => {
    const seen = [];
    const st = await c.run({ code }, { approve: (call) => (seen.push(call.name), { approve: false, reason: "no" }) });
    assert.equal(st.status, "completed", JSON.stringify(st));
    assert.equal(st.value, "DENIED: rejected by the approver: no");
    assert.deepEqual(seen, ["send"]);
    await assert.rejects(c.run({ code }), /RunOptions.approve is not set/);
  });
});
