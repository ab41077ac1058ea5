// Retries, NODE_LOST and the event-stream reader against a scripted fetch:
// the failures a single real server cannot be made to give on demand (a
// lost node, a dropped connection, a proxy's 503).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Client, PtcxError, parseRetryAfter } from "../dist/index.js";
import { readEvents } from "../dist/sse.js";

// scripted returns a fetch answering from script (one entry per request:
// a Response, an Error to throw, or a function of the request), and the
// requests it saw.
function scripted(script) {
  const seen = [];
  const f = async (url, init) => {
    const req = { url: String(url), method: init.method, headers: init.headers, body: init.body ? JSON.parse(init.body) : undefined };
    seen.push(req);
    const next = script.shift();
    if (next === undefined) throw new Error(`no answer left for ${req.method} ${req.url}`);
    if (next instanceof Error) throw next;
    return typeof next === "function" ? next(req) : next;
  };
  return { f, seen };
}

const json = (status, body, headers = {}) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
const refusal = (status, code, retryAfter) => json(status, { error: { code, message: code } }, retryAfter === undefined ? {} : { "Retry-After": retryAfter });
const state = (status, extra = {}) => json(200, { id: "ex_1", status, ...extra });
const fast = { maxRetries: 5, maxElapsedMs: 10_000 };
const client = (f, retry = fast) => new Client({ baseUrl: "http://ptcx.invalid/", key: "k", fetch: f, retry });
const netErr = () => new TypeError("fetch failed");

describe("parseRetryAfter", () => {
  for (const [v, min, max] of [
    [null, undefined, undefined],
    ["1", 1000, 1000],
    [" 7 ", 7000, 7000],
    ["0", 0, 0],
    ["-5", 1000, 1000],
    ["soon", 1000, 1000],
    ["", 1000, 1000],
    ["3600", 3_600_000, 3_600_000],
    ["3601", 3_600_000, 3_600_000],
    ["99999999999999999999", 3_600_000, 3_600_000],
    [new Date(Date.now() + 90_000).toUTCString(), 80_000, 90_000],
    [new Date(Date.now() - 3_600_000).toUTCString(), 0, 0],
  ]) {
    test(`${JSON.stringify(v)}`, () => {
      const got = parseRetryAfter(v);
      if (min === undefined) return assert.equal(got, undefined);
      assert.ok(got >= min && got <= max, `${got}`);
    });
  }
});

describe("which failures are retried", () => {
  test("a refusal with Retry-After is retried even for a start without a key (nothing ran)", async () => {
    const { f, seen } = scripted([refusal(503, "DRAINING", "0"), refusal(409, "CONFLICT", "0"), state("completed")]);
    const st = await client(f).execute({ code: "x" });
    assert.equal(st.status, "completed");
    assert.equal(seen.length, 3);
  });

  test("a 503 without Retry-After is retried for a GET, not for a start without a key", async () => {
    const a = scripted([refusal(503, "HTTP_503"), state("completed")]);
    assert.equal((await client(a.f).get("ex_1")).status, "completed");
    assert.equal(a.seen.length, 2);
    const b = scripted([refusal(503, "HTTP_503"), state("completed")]);
    await assert.rejects(client(b.f).execute({ code: "x" }), (e) => e instanceof PtcxError && e.status === 503 && e.retries === 0);
    assert.equal(b.seen.length, 1);
  });

  test("a dropped connection is retried for a start with an idempotency key, the same key sent again", async () => {
    const { f, seen } = scripted([netErr(), netErr(), state("completed")]);
    const st = await client(f).execute({ code: "x", idempotency_key: "k1" });
    assert.equal(st.status, "completed");
    assert.deepEqual(seen.map((r) => r.body.idempotency_key), ["k1", "k1", "k1"]);
  });

  test("a dropped connection is not retried for a start without a key, nor for a direct call", async () => {
    const a = scripted([netErr(), state("completed")]);
    await assert.rejects(client(a.f).execute({ code: "x" }), TypeError);
    assert.equal(a.seen.length, 1);
    const b = scripted([netErr(), json(200, { ok: true })]);
    await assert.rejects(client(b.f).call("run_code", { code: "x" }), TypeError);
    assert.equal(b.seen.length, 1);
  });

  test("a body cut off in transit is retried for a GET", async () => {
    const cut = () =>
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode('{"id": "ex_1", "sta'));
            c.error(new TypeError("terminated"));
          },
        }),
        { status: 200 },
      );
    const { f, seen } = scripted([cut(), state("completed")]);
    assert.equal((await client(f).get("ex_1")).status, "completed");
    assert.equal(seen.length, 2);
  });

  test("posted tool results are retried on a dropped connection (a repeat is a no-op)", async () => {
    const { f, seen } = scripted([netErr(), state("completed")]);
    await client(f).toolResults("ex_1", [{ id: "c1", ok: true, value: 1 }]);
    assert.equal(seen.length, 2);
    assert.deepEqual(seen[0].body, seen[1].body);
  });

  test("400, 401, 404 and 409 without Retry-After are never retried", async () => {
    for (const [s, code] of [[400, "BAD_REQUEST"], [401, "UNAUTHORIZED"], [404, "NOT_FOUND"], [409, "CONFLICT"]]) {
      const { f, seen } = scripted([refusal(s, code), state("completed")]);
      await assert.rejects(client(f).get("ex_1"), (e) => e.status === s && e.code === code);
      assert.equal(seen.length, 1, code);
    }
  });

  test("a body that is not the server's JSON keeps its text", async () => {
    const { f } = scripted([new Response("<html>bad gateway</html>", { status: 502 })]);
    await assert.rejects(client(f).get("ex_1"), (e) => e.status === 502 && e.code === "HTTP_502" && /bad gateway/.test(e.message));
  });

  test("retries stop at maxRetries, and the error says how many were made", async () => {
    const { f, seen } = scripted(Array.from({ length: 10 }, () => refusal(429, "QUOTA_EXCEEDED", "0")));
    await assert.rejects(client(f, { maxRetries: 3 }).execute({ code: "x" }), (e) => e.retries === 3);
    assert.equal(seen.length, 4);
  });

  test("maxRetries 0 turns retries off", async () => {
    const { f, seen } = scripted([refusal(429, "QUOTA_EXCEEDED", "0"), state("completed")]);
    await assert.rejects(client(f, { maxRetries: 0 }).execute({ code: "x" }), (e) => e.status === 429);
    assert.equal(seen.length, 1);
  });

  test("a Retry-After past maxElapsedMs is not waited for (nor shortened)", async () => {
    const { f, seen } = scripted([refusal(429, "QUOTA_EXCEEDED", "30"), state("completed")]);
    const t0 = Date.now();
    await assert.rejects(client(f, { maxElapsedMs: 5000 }).execute({ code: "x" }), (e) => e.status === 429 && e.retries === 0);
    assert.ok(Date.now() - t0 < 1000);
    assert.equal(seen.length, 1);
  });

  test("the wait is the server's Retry-After, else a growing backoff", async () => {
    const waits = [];
    const { f } = scripted([refusal(429, "QUOTA_EXCEEDED", "0"), refusal(503, "HTTP_503"), refusal(503, "HTTP_503"), state("completed")]);
    await client(f, { onRetry: (i) => waits.push(i.waitMs) }).get("ex_1");
    assert.deepEqual(waits, [0, 500, 1000]);
  });
});

describe("NODE_LOST", () => {
  const lost = () => state("failed", { error: { code: "NODE_LOST", message: "its node was lost" } });

  test("with an idempotency key, the execution is started again under a derived key", async () => {
    const { f, seen } = scripted([lost(), state("completed", { value: 1 })]);
    const st = await client(f, { ...fast, onRetry: () => {} }).run({ code: "x", idempotency_key: "job-7" });
    assert.equal(st.status, "completed");
    assert.deepEqual(seen.map((r) => r.body.idempotency_key), ["job-7", "job-7#1"]);
  });

  test("without a key, the NODE_LOST state is returned and nothing is started again", async () => {
    const { f, seen } = scripted([lost(), state("completed")]);
    const st = await client(f).run({ code: "x" });
    assert.equal(st.error.code, "NODE_LOST");
    assert.equal(seen.length, 1);
  });

  test("the repeats are bounded by maxRetries", async () => {
    const { f, seen } = scripted([lost(), lost(), lost(), lost()]);
    const st = await client(f, { maxRetries: 2 }).run({ code: "x", idempotency_key: "j" });
    assert.equal(st.error.code, "NODE_LOST");
    assert.deepEqual(seen.map((r) => r.body.idempotency_key), ["j", "j#1", "j#2"]);
  });

  test("another failure is returned at once, key or not", async () => {
    const { f, seen } = scripted([state("failed", { error: { code: "BUSY", message: "no room" } })]);
    const st = await client(f).run({ code: "x", idempotency_key: "j" });
    assert.equal(st.error.code, "BUSY");
    assert.equal(seen.length, 1);
  });
});

describe("the client-tool loop's requests", () => {
  test("pending → results → running → get?wait → completed", async () => {
    const { f, seen } = scripted([
      state("pending", { pending: [{ id: "c1", name: "ask", arguments: { q: "?" } }, { id: "c2", name: "other", arguments: {} }] }),
      state("running"),
      state("completed", { value: "done" }),
    ]);
    const st = await client(f).run({ code: "x", client_tools: [{ name: "ask", input_schema: {} }] }, { tools: { ask: ({ q }) => q + "!" } });
    assert.equal(st.value, "done");
    assert.deepEqual(seen.map((r) => `${r.method} ${new URL(r.url).pathname}${new URL(r.url).search}`), [
      "POST /v1/executions",
      "POST /v1/executions/ex_1/tool_results",
      "GET /v1/executions/ex_1?wait=true",
    ]);
    assert.deepEqual(seen[1].body.results, [
      { id: "c1", ok: true, value: "?!" },
      { id: "c2", ok: false, error: { message: 'the client has no handler for client tool "other"' } },
    ]);
    assert.equal(seen[0].headers.Authorization, "Bearer k");
  });

  test("a call still pending after its result was posted is posted again, not run again", async () => {
    let runs = 0;
    const p = () => state("pending", { pending: [{ id: "c1", name: "ask", arguments: {} }] });
    const { f, seen } = scripted([p(), p(), state("completed")]);
    await client(f).run({ code: "x" }, { tools: { ask: () => ++runs } });
    assert.equal(runs, 1);
    assert.deepEqual(seen[2].body.results, [{ id: "c1", ok: true, value: 1 }]);
  });

  test("an execution that stays pending on answered calls is given up within the bounds", async () => {
    const p = () => state("pending", { pending: [{ id: "c1", name: "ask", arguments: {} }] });
    const { f, seen } = scripted([p(), p(), p(), p(), p()]);
    await assert.rejects(client(f, { maxRetries: 2 }).run({ code: "x" }, { tools: { ask: () => 1 } }), /stays pending on calls whose results were posted/);
    assert.equal(seen.length, 4, "start, the results, and two posts again");
  });
});

describe("the event-stream reader", () => {
  const stream = (...chunks) =>
    new ReadableStream({
      start(c) {
        for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch));
        c.close();
      },
    });
  const all = async (s) => {
    const out = [];
    for await (const e of readEvents(s)) out.push(e);
    return out;
  };

  test("events split anywhere, CRLF and CR line ends, comments and multi-line data", async () => {
    const got = await all(stream("id: 1\nevent: log\nda", "ta: {\"line\":\"a\"}\n\n: keep-alive\n\n", "id: 2\r", "\nevent: done\r\ndata: x\rdata: y\r\n\r\n"));
    assert.deepEqual(got, [
      { id: "1", event: "log", data: '{"line":"a"}' },
      { id: "2", event: "done", data: "x\ny" },
    ]);
  });

  test("an event the stream cut before its blank line is dropped", async () => {
    assert.deepEqual(await all(stream("id: 1\nevent: log\ndata: {}\n")), []);
  });

  test("a stream that breaks before done is resumed after the last id seen", async () => {
    const sse = (text) => new Response(text, { status: 200, headers: { "Content-Type": "text/event-stream" } });
    const { f, seen } = scripted([
      sse('id: 1\nevent: log\ndata: {"line":"a"}\n\n'),
      sse('id: 2\nevent: done\ndata: {"status":"completed","dropped_events":0}\n\n'),
    ]);
    const evs = [];
    for await (const e of client(f).events("ex_1")) evs.push(e);
    assert.deepEqual(evs.map((e) => [e.id, e.type]), [[1, "log"], [2, "done"]]);
    assert.equal(seen[0].headers["Last-Event-ID"], undefined);
    assert.equal(seen[1].headers["Last-Event-ID"], "1");
  });

  test("a refused stream is retried within the same bounds as its breaks", async () => {
    const { f, seen } = scripted(Array.from({ length: 10 }, () => refusal(429, "QUOTA_EXCEEDED", "0")));
    await assert.rejects(async () => {
      for await (const _ of client(f, { maxRetries: 2 }).events("ex_1"));
    }, (e) => e.status === 429 && e.retries === 2);
    assert.equal(seen.length, 3);
  });

  test("a stream that keeps breaking without an event gives up within the bounds", async () => {
    const empty = () => new Response("", { status: 200 });
    const { f, seen } = scripted([empty(), empty(), empty(), empty()]);
    await assert.rejects(async () => {
      for await (const _ of client(f, { maxRetries: 2 }).events("ex_1"));
    }, /ended before its done event/);
    assert.equal(seen.length, 3);
  });
});
