// Bundle the note editor (editor/codemirror/, CodeMirror 6 from the locked npm packages) into
// static/vendor/editor/ with esbuild: an ES module, minified, with the languages of fenced code
// split into chunks that load when a fence first names them. Run by scripts/vendor-assets.sh
// at set-up (make setup, the Dockerfile's assets stage); the output is never committed.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

import { writeLicences } from "./licences.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const result = await build({
  absWorkingDir: root,
  entryPoints: { editor: "editor/codemirror/main.js" },
  outdir: "static/vendor/editor",
  bundle: true,
  format: "esm",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  minify: true,
  target: ["es2020"],
  metafile: true,
  logLevel: "warning",
});

// The licences of the bundled packages, in one file beside the bundle.
writeLicences(root, result.metafile, path.join(root, "static/vendor/editor/LICENSES.txt"));
