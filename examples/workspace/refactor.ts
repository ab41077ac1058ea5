// Rename a method across the code base: find every file that mentions it,
// read each one (the read-before-write rule), then edit it. Edits are
// exclusive tools, so they run one at a time even inside Promise.all.
const from = "compute_total";
const to = "cart_total";

const hits = await tools.grep({ pattern: `\\b${from}\\b` });
const paths = [...new Set(hits.matches.map((m) => m.path))];

await Promise.all(paths.map((path) => tools.read({ path })));
const edits = await Promise.all(
  paths.map((path) => tools.edit({ path, old_string: from, new_string: to, replace_all: true })),
);

const left = await tools.grep({ pattern: `\\b${from}\\b` });
return {
  renamed: `${from} -> ${to}`,
  files: edits.map((e) => `${e.path} (${e.replacements})`),
  remaining: left.matches.length,
};
