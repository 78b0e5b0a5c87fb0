// Bundle the note editor (editor/codemirror/, CodeMirror 6 from the locked npm packages) into
// static/vendor/editor/ with esbuild: an ES module, minified, with the languages of fenced code
// split into chunks that load when a fence first names them. Run by scripts/vendor-assets.sh
// at set-up (make setup, the Dockerfile's assets stage); the output is never committed.
import { build } from "esbuild";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

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

// The licences of the bundled packages (MIT), in one file beside the bundle.
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
fs.writeFileSync(path.join(root, "static/vendor/editor/LICENSES.txt"), notices.join("\n" + "-".repeat(72) + "\n\n"));
