// @ptcx/client/ai: the Vercel AI SDK adapter. createRunCodeTool turns a set
// of AI SDK tools into one `run_code` tool: the model writes a TypeScript
// program that calls them as typed async functions (`await
// tools.weather({city: "Paris"})`); the program runs in ptcx serve, and
// each call it makes comes back to this process as a client-side call,
// where the tool's own `execute` runs. The tools' input schemas are the
// client tools' schemas, so the server checks every call's arguments and
// the program's bindings are typed by them.
import { asSchema, jsonSchema, tool, type Tool, type ToolExecutionOptions } from "ai";
import type { Client } from "./client.js";
import type { RetryOptions } from "./retry.js";
import type { ClientToolHandler } from "./run.js";
import { tsType } from "./schema-ts.js";
import type { ClientTool, ExecutionRequest, ExecutionState, RunLimits } from "./types.js";

export interface RunCodeToolOptions {
  /** The ptcx serve client whose tenant runs the programs. */
  client: Client;
  /** The tools a program may call, by name (the binding's name): each needs an `execute`. */
  tools: Record<string, Tool<any, any>>;
  /** The execution's scope on the server (its tools, its workspace); the deployment's when absent. */
  scope?: string;
  /** Limits for each program (lowered to the tenant's). */
  limits?: RunLimits;
  /**
   * A keep_state session for every program: the globals one program
   * leaves are there for the next (docs/service.md, "Sessions").
   */
  session?: string;
  /** The retry bounds of each run; the client's when absent. */
  retry?: RetryOptions;
  /** Text put before the tools' declarations in the tool's description. */
  description?: string;
}

/** What the model gets back from run_code: the envelope of `ptcx call`, without the value. */
export type RunCodeOutput =
  | { ok: true; text: string }
  | { ok: false; error: { code: string; message: string }; logs?: string[] };

export interface RunCodeInput {
  code: string;
  description?: string;
}

const defaultDescription =
  "Run a TypeScript program that calls the tools below as typed async functions on `tools` " +
  "(e.g. `const w = await tools.NAME({...})`), with loops, Promise.all and local filtering, and " +
  "returns (with `return`) only what the answer needs. The program runs in a sandbox with no network, " +
  "file system or environment; console.log lines are shown with the result.";

/**
 * createRunCodeTool returns the `run_code` tool over `o.tools`. It is
 * async because an AI SDK schema may give its JSON Schema as a promise.
 * A tool that has no `execute` (a provider's, or one the client answers)
 * or that needs approval is refused: a program would run it without the
 * approval step.
 */
export async function createRunCodeTool(o: RunCodeToolOptions): Promise<Tool<RunCodeInput, RunCodeOutput>> {
  const clientTools: ClientTool[] = [];
  const decls: string[] = [];
  const validators: Record<string, ((v: unknown) => unknown) | undefined> = {};
  for (const [name, t] of Object.entries(o.tools)) {
    if (typeof t.execute !== "function") throw new TypeError(`ptcx run_code: tool ${JSON.stringify(name)} has no execute function to run`);
    if (t.needsApproval) throw new TypeError(`ptcx run_code: tool ${JSON.stringify(name)} needs approval, which a program's call would bypass`);
    const input = asSchema(t.inputSchema);
    const inSchema = (await input.jsonSchema) as Record<string, unknown>;
    const ct: ClientTool = { name, description: t.description ?? "", input_schema: inSchema };
    if (t.outputSchema) ct.output_schema = (await asSchema(t.outputSchema).jsonSchema) as Record<string, unknown>;
    clientTools.push(ct);
    const out = ct.output_schema ? tsType(ct.output_schema) : "unknown";
    decls.push(`${t.description ? `/** ${t.description.replace(/\*\//g, "* /")} */\n` : ""}tools.${name}(input: ${tsType(inSchema)}): Promise<${out}>`);
    validators[name] = input.validate
      ? async (v: unknown) => {
          const r = await input.validate!(v);
          if (!r.success) throw new Error(`invalid input for ${name}: ${r.error.message}`);
          return r.value;
        }
      : undefined;
  }
  const description = `${o.description ?? defaultDescription}\n\nThe tools:\n\n${decls.join("\n\n")}`;

  return tool<RunCodeInput, RunCodeOutput>({
    description,
    inputSchema: jsonSchema<RunCodeInput>({
      type: "object",
      properties: {
        code: { type: "string", description: "The TypeScript program: an async function body; `return` its answer." },
        description: { type: "string", description: "What the program does, in a few words." },
      },
      required: ["code"],
      additionalProperties: false,
    }),
    execute: async (input: RunCodeInput, opts: ToolExecutionOptions): Promise<RunCodeOutput> => {
      const handlers: Record<string, ClientToolHandler> = {};
      for (const [name, t] of Object.entries(o.tools)) {
        handlers[name] = async (args, call) => {
          const validate = validators[name];
          const parsed = validate ? await validate(args) : args;
          const options: ToolExecutionOptions = { ...opts, toolCallId: call.id ?? opts.toolCallId };
          return lastOf(await t.execute!(parsed, options));
        };
      }
      const req: ExecutionRequest = {
        code: input.code,
        client_tools: clientTools,
        ...(input.description ? { description: input.description } : {}),
        ...(o.scope ? { scope: o.scope } : {}),
        ...(o.limits ? { limits: o.limits } : {}),
        ...(o.session ? { session: o.session, keep_state: true } : {}),
      };
      const st = await o.client.run(req, {
        tools: handlers,
        ...(opts.abortSignal ? { signal: opts.abortSignal } : {}),
        ...(o.retry ? { retry: o.retry } : {}),
      });
      return output(st);
    },
  });
}

// lastOf is a tool's result: its value, or the last value of a tool that
// streams its output (an AsyncIterable), as the AI SDK takes it.
async function lastOf(v: unknown): Promise<unknown> {
  if (v && typeof v === "object" && Symbol.asyncIterator in v) {
    let last: unknown;
    for await (const x of v as AsyncIterable<unknown>) last = x;
    return last;
  }
  return v;
}

function output(st: ExecutionState): RunCodeOutput {
  if (st.status === "completed") return { ok: true, text: st.text ?? "" };
  const out: RunCodeOutput = {
    ok: false,
    error: { code: st.error?.code ?? "INTERNAL", message: st.error?.message ?? `the execution ended ${st.status}` },
  };
  if (st.logs && st.logs.length > 0) out.logs = st.logs;
  return out;
}
