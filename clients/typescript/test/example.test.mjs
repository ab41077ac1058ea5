// example.mjs, run as a user would: plain Node, the built package, the
// server's address and key from the environment.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { packageRoot, startServe } from "./serve.mjs";

let srv;
before(async () => (srv = await startServe()));
after(async () => srv && (await srv.stop()));

const run = (env) => promisify(execFile)(process.execPath, [join(packageRoot, "example.mjs")], { env: { ...process.env, ...env }, timeout: 30000 });

test("example.mjs prints hello, Ada", async () => {
  const { stdout } = await run({ PTCX_URL: srv.url, PTCX_KEY: srv.keys.main });
  assert.equal(stdout, "hello, Ada\n");
});

test("example.mjs with a wrong key fails, saying 401", async () => {
  await assert.rejects(run({ PTCX_URL: srv.url, PTCX_KEY: "wrong" }), (e) => e.code === 1 && /401 UNAUTHORIZED/.test(e.stderr));
});
