// tsType renders a JSON Schema as a TypeScript type, for the run_code
// tool's description: the model writes programs against these bindings.
// It covers what tool input schemas use (objects, arrays, scalars, enums,
// unions) and says `unknown` for the rest; it is documentation, the
// server checks the schema itself.

const maxDepth = 8;

export function tsType(schema: unknown, depth = 0): string {
  if (depth > maxDepth || schema === null || typeof schema !== "object") return "unknown";
  const s = schema as Record<string, unknown>;
  if ("const" in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" | ") || "never";
  for (const k of ["anyOf", "oneOf"]) {
    const alts = s[k];
    if (Array.isArray(alts) && alts.length > 0) return alts.map((a) => tsType(a, depth + 1)).join(" | ");
  }
  if (Array.isArray(s.type)) return s.type.map((t) => tsType({ ...s, type: t }, depth + 1)).join(" | ");
  switch (s.type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = s.items === undefined ? "unknown" : tsType(s.items, depth + 1);
      return /^[\w.]+(\[\])*$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case "object":
      return objectType(s, depth);
    default:
      return s.properties ? objectType(s, depth) : "unknown";
  }
}

function objectType(s: Record<string, unknown>, depth: number): string {
  const props = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  const fields = Object.entries(props).map(([k, v]) => {
    const key = /^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k);
    const desc = v && typeof v === "object" && typeof (v as { description?: unknown }).description === "string"
      ? `/** ${(v as { description: string }).description.replace(/\*\//g, "* /")} */ `
      : "";
    return `${desc}${key}${required.has(k) ? "" : "?"}: ${tsType(v, depth + 1)}`;
  });
  const extra = s.additionalProperties;
  if (extra && typeof extra === "object") fields.push(`[key: string]: ${tsType(extra, depth + 1)}`);
  if (fields.length === 0) return "Record<string, unknown>";
  return `{ ${fields.join("; ")} }`;
}
