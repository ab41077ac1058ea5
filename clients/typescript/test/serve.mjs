// serve.mjs starts a real `ptcx serve` for a test file: loopback, a port
// the kernel picks, a config in a temporary directory with two tenants.
// The binary is $PTCX_BIN, else the repository's bin/ptcx (`make test-ts`
// builds it); a missing binary fails the test, it never skips.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, "../../..");
export const packageRoot = resolve(here, "..");

const sha256 = (s) => createHash("sha256").update(s).digest("hex");

/** The tenants: `main` with room, `tight` with one pending execution and two event streams at most. */
export const keys = { main: "main-key-0123456789", tight: "tight-key-0123456789" };

/**
 * startServe starts the server and returns {url, keys, logs(), stop()}.
 * Call stop in an after() hook: it sends SIGTERM (the server drains) and
 * kills the process if it is not gone within 10 s.
 */
export async function startServe(opts = {}) {
  const bin = process.env.PTCX_BIN || join(repoRoot, "bin/ptcx");
  if (!existsSync(bin)) {
    throw new Error(`${bin} is missing: build it with \`go build -o bin/ptcx ./cmd/ptcx\` (make test-ts does), or set PTCX_BIN`);
  }
  const dir = mkdtempSync(join(tmpdir(), "ptcx-ts-"));
  mkdirSync(join(dir, "work"));
  const config = {
    listen: "127.0.0.1:0",
    workspace: join(dir, "work"),
    spill_dir: join(dir, "spill"),
    server: { max_wait_ms: 20000, drain_timeout_ms: 2000 },
    tenants: [
      { name: "main", key_sha256: sha256(keys.main), mode: "ptc", quotas: { max_concurrent: 8, max_pending: 16 } },
      { name: "tight", key_sha256: sha256(keys.tight), mode: "ptc", quotas: { max_concurrent: 4, max_pending: 1, max_streams: 2 } },
    ],
  };
  if (opts.tools) {
    // A tools file of server-side tools (as for `ptcx call --tools`).
    writeFileSync(join(dir, "tools.json"), JSON.stringify({ tools: opts.tools }));
    config.tools = join(dir, "tools.json");
  }
  writeFileSync(join(dir, "serve.json"), JSON.stringify(config));
  const proc = spawn(bin, ["serve", "--config", join(dir, "serve.json")], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  const addr = await new Promise((resolveAddr, reject) => {
    const timer = setTimeout(() => reject(new Error(`ptcx serve did not say it serves within 15 s:\n${log}`)), 15000);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`ptcx serve exited (${code}) before serving:\n${log}`));
    });
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (chunk) => {
      log += chunk;
      for (const line of log.split("\n")) {
        try {
          const rec = JSON.parse(line);
          if (rec.msg === "serving" && rec.addr) {
            clearTimeout(timer);
            resolveAddr(rec.addr);
          }
        } catch {
          // a partial line, or not JSON
        }
      }
    });
  });
  proc.removeAllListeners("exit");
  const exited = new Promise((r) => proc.on("exit", (code, sig) => r({ code, sig })));
  return {
    url: `http://${addr}`,
    keys,
    logs: () => log,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The README's demo: a program asking the client-side tool ask for a name. */
export const demo = {
  code: 'const name = await tools.ask({q: "Your name?"}); return "hello, " + name',
  client_tools: [
    {
      name: "ask",
      description: "Ask the user a question.",
      input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    },
  ],
};
