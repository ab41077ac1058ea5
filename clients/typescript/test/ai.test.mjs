// The AI SDK adapter in a full generateText agent loop: the AI SDK's own
// mock model (ai/test) calls run_code with a program that calls the user's
// tools; the program runs in a real ptcx serve, its calls run the tools
// here, in the test's process, and the model's final answer uses the
// result. No network but loopback.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { Client } from "../dist/index.js";
import { createRunCodeTool } from "../dist/ai.js";
import { startServe } from "./serve.mjs";

let srv;
let client;
before(async () => {
  srv = await startServe();
  client = new Client({ baseUrl: srv.url, key: srv.keys.main });
});
after(async () => srv && (await srv.stop()));

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

// model plays a two-step agent: first it calls run_code with program, then
// it answers with answer(the run_code result it was given).
function model(program, answer) {
  const seen = [];
  const m = new MockLanguageModelV3({
    doGenerate: async (opts) => {
      seen.push(opts);
      const results = opts.prompt.filter((msg) => msg.role === "tool").flatMap((msg) => msg.content);
      if (results.length === 0) {
        return {
          content: [{ type: "tool-call", toolCallId: "call-1", toolName: "run_code", input: JSON.stringify({ code: program, description: "the weather" }) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      }
      return { content: [{ type: "text", text: answer(results[0].output) }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    },
  });
  return { m, seen };
}

function weatherTool(calls) {
  return tool({
    description: "The weather in a city.",
    inputSchema: z.object({ city: z.string().describe("the city's name"), unit: z.enum(["C", "F"]).default("C") }),
    outputSchema: z.object({ city: z.string(), temperature: z.number(), unit: z.string() }),
    execute: async ({ city, unit }, { toolCallId }) => {
      calls.push({ city, unit, toolCallId, pid: process.pid });
      return { city, temperature: city === "Paris" ? 18 : 7, unit };
    },
  });
}

describe("createRunCodeTool", () => {
  test("a generateText agent loop runs the user's tools in this process from a program in ptcx serve", async () => {
    const calls = [];
    const run_code = await createRunCodeTool({ client, tools: { weather: weatherTool(calls) } });
    const program = `
      const cities = ["Paris", "Oslo"];
      const ws = await Promise.all(cities.map((city) => tools.weather({city})));
      const warmest = ws.reduce((a, b) => (a.temperature >= b.temperature ? a : b));
      console.log("compared " + ws.length);
      return warmest.city + " at " + warmest.temperature + "°" + warmest.unit;`;
    const { m, seen } = model(program, (out) => `The warmest is ${out.value.text.split("\n").at(-1)}.`);
    const result = await generateText({ model: m, tools: { run_code }, prompt: "Which is warmer, Paris or Oslo?", stopWhen: stepCountIs(4) });

    assert.equal(result.text, "The warmest is Paris at 18°C.");
    assert.equal(result.steps.length, 2);
    assert.deepEqual(calls.map((c) => [c.city, c.unit, c.pid]).sort(), [["Oslo", "C", process.pid], ["Paris", "C", process.pid]], "zod's default filled in; run here");
    for (const c of calls) assert.match(c.toolCallId, /^ex_[0-9a-f]+:ptc:\d+$/, "each nested call's own id");
    const out = result.steps[0].toolResults[0].output;
    assert.equal(out.ok, true);
    assert.match(out.text, /compared 2/);

    // The model was offered run_code alone, described with the typed binding.
    const offered = seen[0].tools;
    assert.deepEqual(offered.map((t) => t.name), ["run_code"]);
    assert.match(offered[0].description, /tools\.weather\(input: \{ \/\*\* the city's name \*\/ city: string; unit\?: "C" \| "F" \}\): Promise<\{ city: string; temperature: number; unit: string \}>/);
    assert.deepEqual(offered[0].inputSchema.required, ["code"]);
  });

  test("a program's failure comes back to the model as ok: false with the code", async () => {
    const run_code = await createRunCodeTool({ client, tools: { weather: weatherTool([]) } });
    const { m } = model(`throw new Error("no forecast")`, (out) => `failed: ${out.value.ok} ${out.value.error.code} ${out.value.error.message}`);
    const result = await generateText({ model: m, tools: { run_code }, prompt: "?", stopWhen: stepCountIs(4) });
    assert.match(result.text, /^failed: false \S+ .*no forecast/);
  });

  test("arguments the tool's schema refuses never reach execute; the program sees an error", async () => {
    const calls = [];
    const run_code = await createRunCodeTool({ client, tools: { weather: weatherTool(calls) } });
    const { m } = model(
      `try { await tools.weather({city: 5}); return "called" } catch (e) { return "refused: " + e.message }`,
      (out) => out.value.text,
    );
    const result = await generateText({ model: m, tools: { run_code }, prompt: "?", stopWhen: stepCountIs(4) });
    assert.match(result.text, /^refused: /);
    assert.equal(calls.length, 0);
  });

  test("a tool that throws is a ToolCallError in the program", async () => {
    const broken = tool({ description: "Fails.", inputSchema: z.object({}), execute: async () => { throw new Error("out of order"); } });
    const run_code = await createRunCodeTool({ client, tools: { broken } });
    const { m } = model(`try { await tools.broken({}) } catch (e) { return e.name + ": " + e.message }`, (out) => out.value.text);
    const result = await generateText({ model: m, tools: { run_code }, prompt: "?", stopWhen: stepCountIs(4) });
    assert.match(result.text, /ToolCallError.*out of order/);
  });

  test("keep_state: a session's globals carry over from one run_code call to the next", async () => {
    const run_code = await createRunCodeTool({ client, tools: {}, session: `ai-${Date.now()}` });
    const first = await run_code.execute({ code: "globalThis.seen = 41; return seen" }, { toolCallId: "a", messages: [] });
    const second = await run_code.execute({ code: "return seen + 1" }, { toolCallId: "b", messages: [] });
    assert.deepEqual([first.ok, second.ok], [true, true]);
    assert.match(second.text, /42/);
  });

  test("tools it cannot run are refused when it is made", async () => {
    const noExecute = tool({ description: "x", inputSchema: z.object({}) });
    await assert.rejects(createRunCodeTool({ client, tools: { noExecute } }), /no execute/);
    const gated = tool({ description: "x", inputSchema: z.object({}), needsApproval: true, execute: async () => 1 });
    await assert.rejects(createRunCodeTool({ client, tools: { gated } }), /needs approval/);
  });
});
