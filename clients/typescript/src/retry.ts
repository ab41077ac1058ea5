// Retries: which failures are retried, how long the client waits, and the
// bounds on both. The server sends Retry-After only where nothing was done
// and the same request may be sent again (docs/service.md, "Requests and
// errors"); anything else is retried only for a request that is safe to
// repeat.
import { PtcxError } from "./errors.js";

/** RetryOptions bound the client's retries; every field has a default. */
export interface RetryOptions {
  /** Retries of one request at most (default 5; 0 turns retries off). */
  maxRetries?: number;
  /**
   * The time from a request's first attempt past which no retry is made
   * (default 60 000 ms): a wait that would end later is not started, and
   * the last error is thrown instead. A Retry-After is never shortened.
   */
  maxElapsedMs?: number;
  /** Called before each retry's wait (for logs and tests). */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  /** The failure retried: a PtcxError, a network error, or a NODE_LOST execution's error. */
  error: unknown;
  waitMs: number;
}

export const defaultMaxRetries = 5;
export const defaultMaxElapsedMs = 60_000;

// maxRetryAfterMs bounds the wait a Retry-After asks for (as serve/client's).
const maxRetryAfterMs = 3_600_000;

/**
 * parseRetryAfter is the wait, in ms, a Retry-After header value asks for:
 * whole seconds (what ptcx serve sends) or an HTTP date; 1 s when it is
 * neither, at most an hour; undefined when there is no header.
 */
export function parseRetryAfter(v: string | null | undefined): number | undefined {
  if (v === null || v === undefined) return undefined;
  const s = v.trim();
  if (/^\d+$/.test(s)) return Math.min(Number(s) * 1000, maxRetryAfterMs);
  if (/^-\d+$/.test(s)) return 1000;
  const t = Date.parse(s);
  if (!Number.isNaN(t) && /[a-z]/i.test(s)) return Math.min(Math.max(t - Date.now(), 0), maxRetryAfterMs);
  return 1000;
}

/**
 * retryable says whether a failed request may be sent again. `idempotent`
 * says the request is safe to repeat even if the server acted on it (a
 * GET, posted tool results, an execution with an idempotency key).
 */
export function retryable(err: unknown, idempotent: boolean): boolean {
  if (err instanceof PtcxError) {
    const s = err.status;
    if (err.retryAfterMs !== undefined && (s === 409 || s === 429 || s === 503)) return true; // nothing was done
    return idempotent && (s === 429 || s === 503);
  }
  return idempotent && isNetworkError(err);
}

function isNetworkError(err: unknown): boolean {
  // fetch rejects with a TypeError when the connection fails; an abort is
  // the caller's and never retried.
  return err instanceof TypeError;
}

/** backoffMs is the wait before retry n (1-based) when the server named none. */
export function backoffMs(n: number): number {
  return Math.min(250 * 2 ** (n - 1), 5000);
}

/** waitFor is the wait before retry n of err: its Retry-After, else a backoff. */
export function waitFor(err: unknown, n: number): number {
  if (err instanceof PtcxError && err.retryAfterMs !== undefined) return err.retryAfterMs;
  return backoffMs(n);
}

/**
 * Budget counts one operation's retries against RetryOptions: `next`
 * returns the wait before another attempt, or undefined when the bounds
 * say to stop.
 */
export class Budget {
  private readonly start = Date.now();
  private used = 0;
  constructor(private readonly o: RetryOptions) {}

  next(err: unknown, waitMs: number): number | undefined {
    const max = this.o.maxRetries ?? defaultMaxRetries;
    const elapsed = this.o.maxElapsedMs ?? defaultMaxElapsedMs;
    if (this.used >= max || Date.now() - this.start + waitMs > elapsed) return undefined;
    this.used++;
    this.o.onRetry?.({ attempt: this.used, error: err, waitMs });
    return waitMs;
  }

  get retries(): number {
    return this.used;
  }
}

/** withRetry runs op until it succeeds, fails for good, or the budget ends. */
export async function withRetry<T>(
  o: RetryOptions,
  idempotent: boolean,
  signal: AbortSignal | undefined,
  op: () => Promise<T>,
): Promise<T> {
  const budget = new Budget(o);
  for (;;) {
    try {
      return await op();
    } catch (err) {
      const wait = retryable(err, idempotent) ? budget.next(err, waitFor(err, budget.retries + 1)) : undefined;
      if (wait === undefined) {
        if (err instanceof PtcxError) err.retries = budget.retries;
        throw err;
      }
      await sleep(wait, signal);
    }
  }
}

/** sleep waits ms, or rejects with the signal's reason when it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
