// A consumer of the built package's declarations (@ptcx/client; consumer-ai.ts
// is @ptcx/client/ai's), compiled (not run) by
// test/types.test.mjs: the package's exports resolve to typed .d.ts, and
// misuse is a type error.
import { Client, PtcxError, type ExecutionEvent, type ExecutionState, type ExecutionStatus } from "@ptcx/client";

export async function use(c: Client): Promise<string> {
  const st: ExecutionState = await c.run(
    { code: "return 1", client_tools: [{ name: "ask", input_schema: { type: "object" } }], idempotency_key: "k" },
    { tools: { ask: async (args: { q: string }) => args.q }, retry: { maxRetries: 2, maxElapsedMs: 1000 } },
  );
  const s: ExecutionStatus = st.status;
  // @ts-expect-error: not a status
  const bad: ExecutionStatus = "done";
  // @ts-expect-error: code is required
  await c.execute({ scope: "x" });
  for await (const ev of c.events(st.id, { lastEventId: 1 })) {
    const e: ExecutionEvent = ev;
    if (e.type === "done") break;
  }
  try {
    await c.call("run_code", { code: "return 1" });
  } catch (err) {
    if (err instanceof PtcxError) return `${err.status} ${err.code} ${err.reason ?? ""} ${err.retryAfterMs ?? 0}`;
  }
  return s + bad;
}
