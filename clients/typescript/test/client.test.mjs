// The client against a real ptcx serve (test/serve.mjs).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client, PtcxError } from "../dist/index.js";
import { demo, startServe } from "./serve.mjs";

let srv;
let c;
before(async () => {
  srv = await startServe();
  c = new Client({ baseUrl: srv.url, key: srv.keys.main });
});
after(async () => srv && (await srv.stop()));

const ask = (extra = {}) => ({ ...demo.client_tools[0], ...extra });

describe("run: the client-tool loop", () => {
  test("answers the README's demo with Ada", async () => {
    const seen = [];
    const st = await c.run(demo, {
      tools: {
        ask: async (args, call) => {
          seen.push({ args, name: call.name, id: call.id });
          return "Ada";
        },
      },
    });
    assert.equal(st.status, "completed", JSON.stringify(st));
    assert.equal(st.text, "hello, Ada");
    assert.equal(st.value, "hello, Ada");
    assert.deepEqual(seen.map((s) => [s.name, s.args]), [["ask", { q: "Your name?" }]]);
    assert.match(seen[0].id, /^ex_[0-9a-f]+:ptc:1$/);
    assert.equal(st.calls.length, 1);
    assert.equal(st.calls[0].tool, "ask");
  });

  test("answers concurrent calls of one pending state together, then later ones", async () => {
    let n = 0;
    const st = await c.run(
      {
        code: `const a = await Promise.all([1, 2, 3].map((i) => tools.ask({q: "q" + i})));
               const b = await tools.ask({q: "last"});
               return a.join(",") + ";" + b`,
        client_tools: [ask()],
      },
      { tools: { ask: async ({ q }) => (n++, q.toUpperCase()) } },
    );
    assert.equal(st.status, "completed", JSON.stringify(st));
    assert.equal(st.value, "Q1,Q2,Q3;LAST");
    assert.equal(n, 4, "each call answered once");
  });

  test("a handler that throws is a ToolCallError in the program", async () => {
    const st = await c.run(
      {
        code: `try { await tools.ask({q: "x"}); return "no error" } catch (e) { return e.name + ": " + e.message }`,
        client_tools: [ask()],
      },
      { tools: { ask: async () => { throw new Error("the user walked away"); } } },
    );
    assert.equal(st.status, "completed", JSON.stringify(st));
    assert.match(st.value, /ToolCallError/);
    assert.match(st.value, /the user walked away/);
  });

  test("a handler's undefined is null in the program", async () => {
    const st = await c.run(
      { code: `const v = await tools.ask({q: "x"}); return v === null`, client_tools: [ask()] },
      { tools: { ask: () => undefined } },
    );
    assert.equal(st.value, true, JSON.stringify(st));
  });

  test("a client tool without a handler is refused before anything is sent", async () => {
    let fetched = 0;
    const spy = new Client({ baseUrl: srv.url, key: srv.keys.main, fetch: (...a) => (fetched++, fetch(...a)) });
    await assert.rejects(spy.run(demo, { tools: {} }), (e) => e instanceof TypeError && /"ask"/.test(e.message));
    assert.equal(fetched, 0);
  });

  test("a program that fails is a failed state, not an error", async () => {
    const st = await c.run({ code: `throw new Error("boom")` });
    assert.equal(st.status, "failed");
    assert.match(st.error.message, /boom/);
  });

  test("a program calling a client tool the request did not declare fails in the program", async () => {
    const st = await c.run({ code: `return await tools.ask({q: "x"})` });
    assert.equal(st.status, "failed", JSON.stringify(st));
  });
});

describe("executions", () => {
  test("execute with wait false, get, cancel; cancelling again is 409, not retried", async () => {
    const st = await c.execute({ code: "while (true) {}", wait: false, limits: { timeout_ms: 20000 } });
    assert.ok(["running", "pending"].includes(st.status), st.status);
    const got = await c.get(st.id);
    assert.equal(got.id, st.id);
    const cancelled = await c.cancel(st.id);
    assert.equal(cancelled.status, "failed");
    await assert.rejects(c.cancel(st.id), (e) => e instanceof PtcxError && e.status === 409 && e.code === "CONFLICT" && e.retries === 0);
  });

  test("get with wait waits for the settlement", async () => {
    const st = await c.execute({ code: "let s = 0; for (let i = 0; i < 3e6; i++) s += i; return s", wait: false });
    let got = await c.get(st.id, { wait: true });
    while (got.status === "running") got = await c.get(st.id, { wait: true });
    assert.equal(got.status, "completed");
    assert.equal(got.value, 4499998500000);
  });

  test("an idempotency key returns the first execution; another body under it is 409", async () => {
    const key = `idem-${Date.now()}`;
    const a = await c.execute({ code: "return Math.random()", idempotency_key: key });
    const b = await c.execute({ code: "return Math.random()", idempotency_key: key });
    assert.equal(b.id, a.id);
    assert.equal(b.value, a.value);
    await assert.rejects(
      c.execute({ code: "return 2", idempotency_key: key }),
      (e) => e instanceof PtcxError && e.status === 409 && e.retries === 0,
    );
  });

  test("an unknown execution is 404 NOT_FOUND", async () => {
    await assert.rejects(c.get("ex_000000000000000000000000"), (e) => e instanceof PtcxError && e.status === 404 && e.code === "NOT_FOUND");
  });

  test("a wrong key is 401, not retried", async () => {
    const bad = new Client({ baseUrl: srv.url, key: "nobody's" });
    await assert.rejects(bad.execute({ code: "return 1" }), (e) => e instanceof PtcxError && e.status === 401 && e.code === "UNAUTHORIZED");
  });

  test("a bad request is 400 naming the field", async () => {
    await assert.rejects(c.execute({ code: "return 1", limits: { timeout_ms: -1 } }), (e) => e instanceof PtcxError && e.status === 400 && /timeout_ms/.test(e.message));
  });
});

describe("retries on a real quota (max_pending 1)", () => {
  // The tenant `tight` may hold one execution with client tools: a second is
  // refused 429 max_pending with Retry-After: 1 until the first settles.
  const holdOne = async (t) => {
    const tight = new Client({ baseUrl: srv.url, key: srv.keys.tight });
    const first = await tight.execute(demo);
    assert.equal(first.status, "pending");
    t.after(() => tight.cancel(first.id).catch(() => {}));
    return { tight, first };
  };

  test("a refused start is retried after Retry-After and runs once there is room", async (t) => {
    const { tight, first } = await holdOne(t);
    const retries = [];
    const started = Date.now();
    const second = tight.run(demo, {
      tools: { ask: () => "Grace" },
      retry: {
        onRetry: (i) => {
          retries.push(i);
          if (retries.length === 1) tight.toolResults(first.id, [{ id: first.pending[0].id, ok: true, value: "Ada" }]);
        },
      },
    });
    const st = await second;
    assert.equal(st.value, "hello, Grace");
    assert.ok(retries.length >= 1);
    assert.equal(retries[0].error.status, 429);
    assert.equal(retries[0].error.reason, "max_pending");
    assert.equal(retries[0].waitMs, 1000);
    assert.ok(Date.now() - started >= 1000, "Retry-After was honoured");
  });

  test("retries are bounded in count", async (t) => {
    const { tight } = await holdOne(t);
    const started = Date.now();
    await assert.rejects(
      tight.run(demo, { tools: { ask: () => "x" }, retry: { maxRetries: 2 } }),
      (e) => e instanceof PtcxError && e.status === 429 && e.retries === 2,
    );
    const took = Date.now() - started;
    assert.ok(took >= 2000 && took < 6000, `${took} ms`);
  });

  test("retries are bounded in time", async (t) => {
    const { tight } = await holdOne(t);
    const started = Date.now();
    await assert.rejects(
      tight.run(demo, { tools: { ask: () => "x" }, retry: { maxRetries: 100, maxElapsedMs: 1500 } }),
      (e) => e instanceof PtcxError && e.status === 429 && e.retries === 1,
    );
    assert.ok(Date.now() - started < 1500 + 1000, "no wait ends past maxElapsedMs");
  });

  test("an abort ends the wait at once", async (t) => {
    const { tight } = await holdOne(t);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("stop")), 200);
    const started = Date.now();
    await assert.rejects(tight.run(demo, { tools: { ask: () => "x" }, signal: ac.signal }), /stop/);
    assert.ok(Date.now() - started < 900);
  });
});

describe("events", () => {
  test("streams a pending execution's events to done, and resumes after an id", async () => {
    const st = await c.execute({
      code: `console.log("before"); const n = await tools.ask({q: "?"}); console.log("after " + n); return n`,
      client_tools: [ask()],
    });
    assert.equal(st.status, "pending");
    const events = [];
    const reading = (async () => {
      for await (const ev of c.events(st.id)) {
        events.push(ev);
        if (ev.type === "pending") await c.toolResults(st.id, [{ id: ev.data.id, ok: true, value: "Ada" }]);
      }
    })();
    await reading;
    const types = events.map((e) => e.type);
    assert.deepEqual(events.map((e) => e.id), events.map((_, i) => i + 1), "ids count up from 1");
    for (const want of ["log", "pending", "result_received", "call_finished", "done"]) assert.ok(types.includes(want), `${want} in ${types}`);
    assert.equal(types.at(-1), "done");
    assert.equal(events.at(-1).data.status, "completed");
    assert.deepEqual(events.filter((e) => e.type === "log").map((e) => e.data.line), ["before", "after Ada"]);

    const rest = [];
    for await (const ev of c.events(st.id, { lastEventId: 2 })) rest.push(ev);
    assert.deepEqual(rest.map((e) => e.id), events.slice(2).map((e) => e.id));
  });

  test("an unknown execution's stream is 404", async () => {
    const it = c.events("ex_000000000000000000000000");
    await assert.rejects(it.next(), (e) => e instanceof PtcxError && e.status === 404);
  });
});

describe("sessions (keep_state)", () => {
  test("a session keeps its program state until deleted", async () => {
    const s = c.session(`s-${Date.now()}`);
    const first = await s.run({ code: "let n = 41; globalThis.hits = 1; return n" });
    assert.equal(first.value, 41, JSON.stringify(first));
    const second = await s.run({ code: "n += 1; hits++; return [n, hits]" });
    assert.deepEqual(second.value, [42, 2], JSON.stringify(second));
    assert.equal(await s.delete(), true);
    assert.equal(await s.delete(), false, "a session with no kept state is 404: false");
    const fresh = await s.run({ code: "return typeof n" });
    assert.equal(fresh.value, "undefined");
  });

  test("a keep_state program answers its client tools too", async () => {
    const s = c.session(`ct-${Date.now()}`);
    const st = await s.run({ ...demo, code: `globalThis.who = await tools.ask({q: "?"}); return who` }, { tools: { ask: () => "Ada" } });
    assert.equal(st.value, "Ada", JSON.stringify(st));
    const again = await s.run({ code: "return who" });
    assert.equal(again.value, "Ada");
    await s.delete();
  });
});

describe("calls, tools and prompt", () => {
  test("run_code is callable directly; another tool is UNKNOWN_TOOL (the collapse)", async () => {
    const ok = await c.call("run_code", { code: "return 6 * 7" });
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.equal(ok.value.result, 42, "run_code's value: {result, logs}");
    const refused = await c.call("read", { path: "a.txt" });
    assert.equal(refused.ok, false);
    assert.equal(refused.error.code, "UNKNOWN_TOOL");
  });

  test("the advertised tools are run_code alone in ptc mode; the prompt has sections", async () => {
    const { tools } = await c.tools();
    assert.deepEqual(tools.map((t) => t.function?.name ?? t.name), ["run_code"]);
    const anthropic = await c.tools({ format: "anthropic" });
    assert.equal(anthropic.tools[0].name, "run_code");
    const { sections } = await c.prompt();
    assert.ok(sections.length > 0);
  });
});

describe("inputs", () => {
  test("a client needs a base URL and a key", () => {
    assert.throws(() => new Client({ baseUrl: "", key: "k" }), /baseUrl/);
    assert.throws(() => new Client({ baseUrl: srv.url, key: "" }), /key/);
  });

  test("ids are escaped into the path, never reaching another route", async () => {
    await assert.rejects(c.get("../calls"), (e) => e instanceof PtcxError && e.status === 404);
    await assert.rejects(c.toolResults("x/../../v1/calls", []), (e) => e instanceof PtcxError && e.status === 404);
  });

  test("a session name the server refuses is 400", async () => {
    await assert.rejects(c.session("no spaces allowed").run({ code: "return 1" }), (e) => e instanceof PtcxError && e.status === 400);
  });
});

describe("event streams the client leaves", () => {
  test("breaking out of events closes the stream (the tenant's max_streams is not used up)", async () => {
    const tight = new Client({ baseUrl: srv.url, key: srv.keys.tight, retry: { maxRetries: 0 } });
    const st = await tight.execute(demo);
    assert.equal(st.status, "pending");
    try {
      for (let i = 0; i < 6; i++) {
        for await (const ev of tight.events(st.id)) {
          assert.equal(ev.type, "pending");
          break;
        }
      }
    } finally {
      await tight.cancel(st.id);
    }
  });
});
