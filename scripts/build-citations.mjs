// Bundle the server's citation formatting (bibliography/js/server.js: citation-js's core,
// BibTeX, CSL and RIS plugins and citeproc-js from the locked npm packages, and SciDraft's own
// functions) into static/vendor/citations/ with esbuild: one script a mini-racer context
// evaluates, for the V8 it embeds (ES2022, nothing down-levelled, no polyfill). Run by
// scripts/vendor-assets.sh; the output is never committed.
import { build } from "esbuild";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "static/vendor/citations");

const result = await build({
  absWorkingDir: root,
  entryPoints: ["bibliography/js/server.js"],
  outfile: path.join(outdir, "citations.js"),
  bundle: true,
  format: "iife",
  // The packages' browser builds (no Node built-ins); their network fetchers are never called.
  platform: "browser",
  target: ["es2022"],
  // citation-js names Node's version in the User-Agent of fetches it never makes here; V8
  // alone has no `process`.
  define: { "process.version": JSON.stringify("none") },
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});

// The licences of the bundled packages, in one file beside the bundle.
const packages = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (match) packages.add(match[1]);
}
const notices = [...packages].sort().map((name) => {
  const dir = path.join(root, "node_modules", name);
  const file = fs.readdirSync(dir).find((entry) => /^licen[cs]e/i.test(entry));
  const version = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
  const text = file ? fs.readFileSync(path.join(dir, file), "utf8").trim() : "(no licence file)";
  return `${name}@${version}\n\n${text}\n`;
});
fs.writeFileSync(path.join(outdir, "LICENSES.txt"), notices.join("\n" + "-".repeat(72) + "\n\n"));
