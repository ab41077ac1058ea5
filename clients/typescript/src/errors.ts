import type { ErrorBody } from "./types.js";

/**
 * PtcxError is a non-2xx answer of ptcx serve: its HTTP status, the error
 * body's stable `code` (BAD_REQUEST, QUOTA_EXCEEDED, …; docs/service.md,
 * "Requests and errors"), the quota `reason` when there is one, and the
 * wait the server asked for in `Retry-After`, in milliseconds.
 */
export class PtcxError extends Error {
  readonly status: number;
  readonly code: string;
  readonly reason: string | undefined;
  readonly body: ErrorBody;
  /** The server's Retry-After in ms; undefined when it sent none. */
  readonly retryAfterMs: number | undefined;
  /** How many times the client retried the request before giving up. */
  retries = 0;

  constructor(status: number, body: ErrorBody, retryAfterMs: number | undefined) {
    super(`ptcx serve: ${status} ${body.code}: ${body.message}`);
    this.name = "PtcxError";
    this.status = status;
    this.code = body.code;
    this.reason = body.reason;
    this.body = body;
    this.retryAfterMs = retryAfterMs;
  }
}
