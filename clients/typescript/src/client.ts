// The HTTP client of ptcx serve: one method per route of
// serve/openapi.yaml, each retried within the client's RetryOptions.
import { PtcxError } from "./errors.js";
import { Budget, parseRetryAfter, retryable, sleep, waitFor, withRetry, type RetryOptions } from "./retry.js";
import { runExecution, type RunOptions } from "./run.js";
import { readEvents } from "./sse.js";
import type {
  CallResponse,
  Decision,
  ErrorBody,
  ExecutionEvent,
  ExecutionRequest,
  ExecutionState,
  ToolResult,
} from "./types.js";

export interface ClientOptions {
  /** The server's address, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** The tenant's API key (sent as `Authorization: Bearer <key>`). */
  key: string;
  /** Retries of every request (RetryOptions' defaults when absent). */
  retry?: RetryOptions;
  /** The fetch to use; the global one when absent. */
  fetch?: typeof fetch;
}

/** Options of one request. */
export interface RequestOptions {
  /** Aborts the request, its retries' waits included. */
  signal?: AbortSignal;
  /** The bounds of this request's retries; the client's when absent. */
  retry?: RetryOptions;
}

export interface ToolsOptions extends RequestOptions {
  scope?: string;
  format?: "openai" | "responses" | "anthropic";
}

export interface EventsOptions extends RequestOptions {
  /** Resume after this event id (sent as Last-Event-ID). */
  lastEventId?: number;
}

interface Req {
  method: string;
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Safe to send again even if the server acted on it. */
  idempotent: boolean;
  signal?: AbortSignal | undefined;
  retry?: RetryOptions | undefined;
}

/**
 * Client talks to one ptcx serve with one tenant's key. It holds no state
 * of its own between calls, so one client may be shared freely.
 */
export class Client {
  readonly baseUrl: string;
  readonly retry: RetryOptions;
  private readonly key: string;
  private readonly fetchFn: typeof fetch;

  constructor(o: ClientOptions) {
    if (!o.baseUrl) throw new TypeError("ptcx client: baseUrl is required");
    if (!o.key) throw new TypeError("ptcx client: key is required");
    this.baseUrl = o.baseUrl.replace(/\/+$/, "");
    this.key = o.key;
    this.retry = o.retry ?? {};
    this.fetchFn = o.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * execute starts an execution (POST /v1/executions) and answers its
   * state: settled, pending on client-side calls, or running (after the
   * server's max_wait_ms, or at once with `wait: false`). A refusal that
   * carries Retry-After (nothing ran) is retried; any other failure only
   * when the request has an idempotency_key, which makes a repeat return
   * the first execution.
   */
  execute(req: ExecutionRequest, o: RequestOptions = {}): Promise<ExecutionState> {
    return this.json({
      method: "POST",
      path: "/v1/executions",
      body: req,
      idempotent: !!req.idempotency_key,
      signal: o.signal,
      retry: o.retry,
    });
  }

  /** get reads an execution's state; `wait` waits while it runs (up to max_wait_ms). */
  get(id: string, o: RequestOptions & { wait?: boolean } = {}): Promise<ExecutionState> {
    return this.json({
      method: "GET",
      path: `/v1/executions/${encodeURIComponent(id)}`,
      query: { wait: o.wait ? "true" : undefined },
      idempotent: true,
      signal: o.signal,
      retry: o.retry,
    });
  }

  /** cancel cancels a live execution and answers its settled (failed) state; a settled one is 409. */
  cancel(id: string, o: RequestOptions = {}): Promise<ExecutionState> {
    return this.json({ method: "DELETE", path: `/v1/executions/${encodeURIComponent(id)}`, idempotent: false, signal: o.signal, retry: o.retry });
  }

  /**
   * toolResults answers pending client-side calls and answers the new
   * state. Posting results again is harmless (known ids are no-ops), so it
   * is retried as an idempotent request.
   */
  toolResults(id: string, results: ToolResult[], o: RequestOptions = {}): Promise<ExecutionState> {
    return this.json({
      method: "POST",
      path: `/v1/executions/${encodeURIComponent(id)}/tool_results`,
      body: { results },
      idempotent: true,
      signal: o.signal,
      retry: o.retry,
    });
  }

  /**
   * decide decides pending approvals (the pending items of kind
   * "approval") and answers the new state: approved, the call runs and the
   * program continues; declined, its promise rejects with DENIED and the
   * reason. The same decision again is a no-op, so it is retried as an
   * idempotent request; another decision for an approval decided already
   * is a 409 PtcxError.
   */
  decide(id: string, decisions: Decision[], o: RequestOptions = {}): Promise<ExecutionState> {
    return this.json({
      method: "POST",
      path: `/v1/executions/${encodeURIComponent(id)}/approvals`,
      body: { decisions },
      idempotent: true,
      signal: o.signal,
      retry: o.retry,
    });
  }

  /**
   * run starts an execution and drives it to settlement, answering its
   * client-side calls with `o.tools` (run.ts). A failed execution is a
   * state, not an error.
   */
  run(req: ExecutionRequest, o: RunOptions = {}): Promise<ExecutionState> {
    return runExecution(this, req, o);
  }

  /**
   * session is a handle on a keep_state session: its `run` and `execute`
   * set `session` and `keep_state`, its `delete` ends it.
   */
  session(name: string, scope?: string): Session {
    return new Session(this, name, scope);
  }

  /**
   * deleteSession ends a keep_state session (DELETE /v1/sessions/{name}):
   * true when it existed, false when it had no kept state (404).
   */
  async deleteSession(name: string, o: RequestOptions & { scope?: string } = {}): Promise<boolean> {
    try {
      await this.send({
        method: "DELETE",
        path: `/v1/sessions/${encodeURIComponent(name)}`,
        query: { scope: o.scope },
        idempotent: false,
        signal: o.signal,
        retry: o.retry,
      });
      return true;
    } catch (err) {
      if (err instanceof PtcxError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * call makes a model-direct tool call (POST /v1/calls): the envelope of
   * `ptcx call`, `{ok, value?, text?, error?}`. The collapse holds: in ptc
   * mode only run_code is callable. Retried only on a refusal with
   * Retry-After (a call may have effects).
   */
  call(name: string, args: Record<string, unknown> = {}, o: RequestOptions & { scope?: string } = {}): Promise<CallResponse> {
    return this.json({
      method: "POST",
      path: "/v1/calls",
      body: { name, arguments: args, ...(o.scope ? { scope: o.scope } : {}) },
      idempotent: false,
      signal: o.signal,
      retry: o.retry,
    });
  }

  /** tools is the advertised tool surface in a model API's format (GET /v1/tools). */
  tools(o: ToolsOptions = {}): Promise<{ tools: unknown[] }> {
    return this.json({ method: "GET", path: "/v1/tools", query: { scope: o.scope, format: o.format }, idempotent: true, signal: o.signal, retry: o.retry });
  }

  /**
   * prompt is the tool sections of the system prompt (GET /v1/prompt);
   * language is the one it declares the tools in (default: typescript when
   * the tenant enables it, else the one it enables).
   */
  prompt(o: RequestOptions & { scope?: string; language?: "typescript" | "python" } = {}): Promise<{ sections: { name: string; text: string }[] }> {
    return this.json({ method: "GET", path: "/v1/prompt", query: { scope: o.scope, language: o.language }, idempotent: true, signal: o.signal, retry: o.retry });
  }

  /**
   * events streams an execution's events (Server-Sent Events) until its
   * `done` event. A stream that breaks before `done` is resumed after the
   * last event seen (Last-Event-ID), within the retry bounds; so is a
   * refusal (429 max_streams).
   */
  async *events(id: string, o: EventsOptions = {}): AsyncGenerator<ExecutionEvent> {
    let last = o.lastEventId ?? 0;
    const retry = o.retry ?? this.retry;
    let budget = new Budget(retry);
    for (;;) {
      let progressed = false;
      try {
        // Sent once: this loop's budget counts its refusals and breaks alike.
        const resp = await this.once({
          method: "GET",
          path: `/v1/executions/${encodeURIComponent(id)}/events`,
          headers: { Accept: "text/event-stream", ...(last > 0 ? { "Last-Event-ID": String(last) } : {}) },
          idempotent: true,
          signal: o.signal,
        });
        if (!resp.body) throw new TypeError("ptcx serve: an event stream without a body");
        for await (const raw of readEvents(resp.body)) {
          const ev: ExecutionEvent = {
            id: Number(raw.id),
            type: raw.event as ExecutionEvent["type"],
            data: raw.data === "" ? undefined : JSON.parse(raw.data),
          };
          if (Number.isInteger(ev.id) && ev.id > 0) last = ev.id;
          progressed = true;
          yield ev;
          if (ev.type === "done") return;
        }
        throw new TypeError("ptcx serve: the event stream ended before its done event");
      } catch (err) {
        if (progressed) budget = new Budget(retry); // the bounds count retries without progress
        const wait = retryable(err, true) ? budget.next(err, waitFor(err, budget.retries + 1)) : undefined;
        if (wait === undefined) {
          if (err instanceof PtcxError) err.retries = budget.retries;
          throw err;
        }
        await sleep(wait, o.signal);
      }
    }
  }

  // json sends r and decodes its answer, both within the retries: a body
  // cut off in transit is a failed attempt like a refused one.
  private json<T>(r: Req): Promise<T> {
    return withRetry(r.retry ?? this.retry, r.idempotent, r.signal, async () => (await (await this.once(r)).json()) as T);
  }

  private send(r: Req): Promise<Response> {
    return withRetry(r.retry ?? this.retry, r.idempotent, r.signal, () => this.once(r));
  }

  // once sends the request once: a 2xx response, or a PtcxError.
  private async once(r: Req): Promise<Response> {
    const url = new URL(this.baseUrl + r.path);
    for (const [k, v] of Object.entries(r.query ?? {})) if (v !== undefined && v !== "") url.searchParams.set(k, v);
    const headers: Record<string, string> = { Authorization: `Bearer ${this.key}`, ...r.headers };
    const init: RequestInit = { method: r.method, headers };
    if (r.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(r.body);
    }
    if (r.signal) init.signal = r.signal;
    const resp = await this.fetchFn(url, init);
    if (resp.ok) return resp;
    const text = await resp.text().catch(() => "");
    let body: ErrorBody = { code: `HTTP_${resp.status}`, message: text.slice(0, 1024) || resp.statusText };
    try {
      const env = JSON.parse(text) as { error?: ErrorBody };
      if (env.error && typeof env.error.code === "string") body = env.error;
    } catch {
      // not the server's JSON (a proxy's page): keep the text
    }
    throw new PtcxError(resp.status, body, parseRetryAfter(resp.headers.get("Retry-After")));
  }
}

/** Session runs programs in one keep_state session's program state (docs/service.md, "Sessions"). */
export class Session {
  constructor(
    readonly client: Client,
    readonly name: string,
    readonly scope?: string,
  ) {}

  private req(req: ExecutionRequest): ExecutionRequest {
    return { ...req, session: this.name, keep_state: true, ...(this.scope ? { scope: this.scope } : {}) };
  }

  /** run is Client.run in the session. */
  run(req: ExecutionRequest, o: RunOptions = {}): Promise<ExecutionState> {
    return this.client.run(this.req(req), o);
  }

  /** execute is Client.execute in the session. */
  execute(req: ExecutionRequest, o: RequestOptions = {}): Promise<ExecutionState> {
    return this.client.execute(this.req(req), o);
  }

  /** delete ends the session: true when it existed. */
  delete(o: RequestOptions = {}): Promise<boolean> {
    return this.client.deleteSession(this.name, { ...o, ...(this.scope ? { scope: this.scope } : {}) });
  }
}
