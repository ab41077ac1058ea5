// tsType: JSON Schema → the TypeScript type run_code's description shows.
import assert from "node:assert/strict";
import { test } from "node:test";
import { tsType } from "../dist/schema-ts.js";

test("the shapes tool schemas use", () => {
  for (const [schema, want] of [
    [{ type: "string" }, "string"],
    [{ type: "integer" }, "number"],
    [{ type: ["string", "null"] }, "string | null"],
    [{ enum: ["C", "F"] }, '"C" | "F"'],
    [{ const: 3 }, "3"],
    [{ anyOf: [{ type: "string" }, { type: "array", items: { type: "number" } }] }, "string | number[]"],
    [{ type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } }, "Array<string | number>"],
    [{ type: "object" }, "Record<string, unknown>"],
    [{ type: "object", properties: { a: { type: "string" }, "b-c": { type: "number" } }, required: ["a"] }, '{ a: string; "b-c"?: number }'],
    [{ type: "object", additionalProperties: { type: "boolean" } }, "{ [key: string]: boolean }"],
    [{ properties: { x: { type: "string", description: "ends */ early" } } }, "{ /** ends * / early */ x?: string }"],
  ]) {
    assert.equal(tsType(schema), want, JSON.stringify(schema));
  }
});

test("what it cannot say is unknown, and nothing it is given throws", () => {
  for (const bad of [undefined, null, 42, "string", [], true, { type: "weird" }, { $ref: "#/x" }, { enum: [] }, { anyOf: [] }]) {
    assert.doesNotThrow(() => tsType(bad), JSON.stringify(bad));
  }
  assert.equal(tsType({ $ref: "#/x" }), "unknown");
  let deep = { type: "string" };
  for (let i = 0; i < 10000; i++) deep = { type: "array", items: deep };
  assert.match(tsType(deep), /^unknown(\[\])+$/, "nesting past the depth bound is unknown, without a stack overflow");
});
