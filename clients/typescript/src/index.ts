// @ptcx/client: a client of ptcx serve (docs/service.md) with no runtime
// dependencies. The Vercel AI SDK adapter is the second entry point,
// @ptcx/client/ai (src/ai.ts).
export { Client, Session } from "./client.js";
export type { ClientOptions, RequestOptions, ToolsOptions, EventsOptions } from "./client.js";
export { PtcxError } from "./errors.js";
export { parseRetryAfter } from "./retry.js";
export type { RetryOptions, RetryInfo } from "./retry.js";
export { NODE_LOST } from "./run.js";
export type { RunOptions, ClientToolHandler } from "./run.js";
export type * from "./types.js";
