// Bundle the server's citation formatting (bibliography/js/server.js: citation-js's core,
// BibTeX, CSL and RIS plugins and citeproc-js from the locked npm packages, and SciDraft's own
// functions) into static/vendor/citations/ with esbuild: one script a mini-racer context
// evaluates, for the V8 it embeds (ES2022, nothing down-levelled, no polyfill). Run by
// scripts/vendor-assets.sh; the output is never committed.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

import { writeLicences } from "./licences.mjs";

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
writeLicences(root, result.metafile, path.join(outdir, "LICENSES.txt"));
