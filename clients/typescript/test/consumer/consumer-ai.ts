// A consumer of @ptcx/client/ai's declarations, compiled by
// test/types.test.mjs with skipLibCheck (the AI SDK's own declarations need
// @types/node and @types/json-schema, which a Node-free build lacks).
import type { Client } from "@ptcx/client";
import { createRunCodeTool, type RunCodeOutput } from "@ptcx/client/ai";
import { jsonSchema, tool } from "ai";

export async function useAI(c: Client): Promise<string> {
  const run_code = await createRunCodeTool({
    client: c,
    tools: { t: tool({ description: "t", inputSchema: jsonSchema<{ a: number }>({ type: "object" }), execute: async ({ a }) => a + 1 }) },
    limits: { timeout_ms: 1000 },
  });
  // @ts-expect-error: client is required
  await createRunCodeTool({ tools: {} });
  const out = (await run_code.execute!({ code: "return 1" }, { toolCallId: "x", messages: [] })) as RunCodeOutput;
  return out.ok ? out.text : out.error.code;
}
