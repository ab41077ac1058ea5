// build.mjs compiles src/ to dist/ (ESM and .d.ts) with the pinned
// TypeScript, then copies the generated src/openapi.d.ts beside the
// declarations that import it (tsc emits no .d.ts input).
import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
rmSync(join(root, "dist"), { recursive: true, force: true });
try {
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.json")], { stdio: "inherit" });
} catch {
  process.exit(1); // tsc has said why
}
copyFileSync(join(root, "src/openapi.d.ts"), join(root, "dist/openapi.d.ts"));
