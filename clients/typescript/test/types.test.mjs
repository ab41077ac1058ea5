// The built declarations as a TypeScript user gets them: test/consumer/
// imports @ptcx/client and @ptcx/client/ai by name (the package's
// "exports") and must type-check, its misuses marked @ts-expect-error.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { packageRoot } from "./serve.mjs";

const tsc = (config) =>
  promisify(execFile)(process.execPath, [join(packageRoot, "node_modules/typescript/bin/tsc"), "-p", join(packageRoot, "test/consumer", config)]).catch((e) => e);

test("@ptcx/client's declarations type-check a consumer, theirs checked too (skipLibCheck off)", async () => {
  const r = await tsc("tsconfig.json");
  assert.equal(r.code ?? 0, 0, `${r.stdout}${r.stderr}`);
});

test("@ptcx/client/ai's declarations type-check a consumer", async () => {
  const r = await tsc("tsconfig.ai.json");
  assert.equal(r.code ?? 0, 0, `${r.stdout}${r.stderr}`);
});
