// The client-tool loop: start an execution, answer its client-side calls
// each time it is pending, wait while it runs, until it settles.
import type { Client } from "./client.js";
import { Budget, sleep, waitFor, type RetryOptions } from "./retry.js";
import type { Decision, ExecutionRequest, ExecutionState, PendingCall, ToolResult } from "./types.js";

/** The code of an execution whose node was lost while it ran (docs/cluster.md). */
export const NODE_LOST = "NODE_LOST";

/**
 * A ClientToolHandler runs one client-side call in the caller's process:
 * it gets the call's arguments (already checked by the server against the
 * tool's input_schema) and returns its value (JSON). A throw becomes a
 * failed result, a ToolCallError in the program, with the error's message.
 */
export type ClientToolHandler = (args: any, call: PendingCall & { signal?: AbortSignal }) => unknown;

export interface RunOptions {
  /**
   * The handlers of the request's client_tools, by name: every declared
   * client tool needs one. A call of a name without one gets a failed
   * result.
   */
  tools?: Record<string, ClientToolHandler>;
  /**
   * Decides the calls that wait for a person's approval (pending items of
   * kind "approval": their name, arguments, reason and labels): true or
   * {approve, reason}. Without it, run throws at the first approval.
   */
  approve?: (call: PendingCall) => boolean | { approve: boolean; reason?: string } | Promise<boolean | { approve: boolean; reason?: string }>;
  /** Aborts the run: the requests, the waits and the handlers' signal. The execution is left as it is. */
  signal?: AbortSignal;
  /** The bounds of the run's retries; the client's when absent. */
  retry?: RetryOptions;
}

/**
 * runExecution is Client.run. Each pending state's calls are answered
 * together (their handlers run concurrently) and posted in one request;
 * a running state is waited for (GET ?wait=true). It returns the settled
 * state, completed or failed.
 *
 * An execution that fails NODE_LOST (its node died while it ran, so its
 * program may have had some of its effects) is started again only when
 * the request has an idempotency_key: the caller has said the request may
 * be repeated. The repeat's key is the original's with `#N` appended (the
 * Nth repeat), since the original key names the lost execution; the
 * repeats count against the retry bounds. Without a key, the NODE_LOST
 * state is returned.
 */
export async function runExecution(c: Client, req: ExecutionRequest, o: RunOptions): Promise<ExecutionState> {
  const handlers = o.tools ?? {};
  for (const t of req.client_tools ?? []) {
    if (typeof handlers[t.name] !== "function") {
      throw new TypeError(`ptcx client: client tool ${JSON.stringify(t.name)} is declared in client_tools but RunOptions.tools has no handler for it`);
    }
  }
  const retry = o.retry ?? c.retry;
  const restarts = new Budget(retry);
  let body = req;
  for (;;) {
    const st = await drive(c, body, handlers, o.approve, o.signal, retry);
    if (st.status !== "failed" || st.error?.code !== NODE_LOST || !req.idempotency_key) return st;
    const wait = restarts.next(st.error, waitFor(undefined, restarts.retries + 1));
    if (wait === undefined) return st;
    await sleep(wait, o.signal);
    body = { ...req, idempotency_key: `${req.idempotency_key}#${restarts.retries}` };
  }
}

async function drive(
  c: Client,
  req: ExecutionRequest,
  handlers: Record<string, ClientToolHandler>,
  approve: RunOptions["approve"],
  signal: AbortSignal | undefined,
  retry: RetryOptions,
): Promise<ExecutionState> {
  const ro = signal ? { signal, retry } : { retry };
  const answered = new Map<string, ToolResult>();
  const stalls = new Budget(retry); // pending states with no call not yet answered
  let st = await c.execute(req, ro);
  for (;;) {
    switch (st.status) {
      case "pending": {
        const approvals = (st.pending ?? []).filter((p) => p.id !== undefined && p.kind === "approval");
        if (approvals.length > 0) {
          if (!approve) throw new Error(`ptcx client: execution ${st.id} waits for an approval of ${approvals[0]!.name} and RunOptions.approve is not set`);
          const decisions: Decision[] = [];
          for (const p of approvals) {
            const d = await approve(p);
            decisions.push(typeof d === "boolean" ? { id: p.id!, approve: d } : { id: p.id!, approve: d.approve, reason: d.reason });
          }
          st = await c.decide(st.id, decisions, ro);
          break;
        }
        const calls = (st.pending ?? []).filter((p) => p.id !== undefined);
        const fresh = calls.filter((p) => !answered.has(p.id!));
        if (fresh.length === 0) {
          const why = new Error(`ptcx client: execution ${st.id} stays pending on calls whose results were posted`);
          const wait = stalls.next(why, waitFor(undefined, stalls.retries + 1));
          if (wait === undefined) throw why;
          await sleep(wait, signal);
        }
        const results = await Promise.all(fresh.map((p) => answer(p, handlers, signal)));
        for (const r of results) answered.set(r.id, r);
        // Calls answered already are posted again: a no-op for the server,
        // or the retry of a resume it could not make then.
        const again = calls.filter((p) => !fresh.includes(p)).map((p) => answered.get(p.id!)!);
        st = await c.toolResults(st.id, [...results, ...again], ro);
        break;
      }
      case "running":
        st = await c.get(st.id, { ...ro, wait: true });
        break;
      default:
        return st;
    }
  }
}

async function answer(p: PendingCall, handlers: Record<string, ClientToolHandler>, signal: AbortSignal | undefined): Promise<ToolResult> {
  const id = p.id!;
  const h = p.name !== undefined ? handlers[p.name] : undefined;
  if (!h) return { id, ok: false, error: { message: `the client has no handler for client tool ${JSON.stringify(p.name)}` } };
  try {
    const value = await h(p.arguments, signal ? { ...p, signal } : p);
    return { id, ok: true, value: value === undefined ? null : value };
  } catch (err) {
    return { id, ok: false, error: { message: err instanceof Error ? err.message : String(err) } };
  }
}
