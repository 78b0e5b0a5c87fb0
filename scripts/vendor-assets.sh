#!/bin/sh
# Copy the files SciDraft serves, and the scripts its server-side renderer loads, from the
# locked npm packages into static/vendor/, and bundle the note editor (CodeMirror 6) there.
# Run after `npm ci`; nothing comes from a CDN.
set -eu
cd "$(dirname "$0")/.."
out=static/vendor
rm -rf "$out"
mkdir -p "$out/katex" "$out/pseudocode" "$out/mermaid"
cp node_modules/katex/dist/katex.min.js node_modules/katex/dist/katex.min.css \
   node_modules/katex/LICENSE "$out/katex/"
cp -r node_modules/katex/dist/fonts "$out/katex/fonts"
# KaTeX's mhchem extension (\ce, \pu), loaded by the server beside katex.min.js (jsengine.py);
# the unminified file, which keeps its Apache-2.0 notice (© The MathJax Consortium, Martin Hensel).
mkdir -p "$out/katex/contrib"
cp node_modules/katex/dist/contrib/mhchem.js "$out/katex/contrib/"
cp node_modules/pseudocode/build/pseudocode.min.js node_modules/pseudocode/LICENSE "$out/pseudocode/"
# pseudocode.js's stylesheet @imports KaTeX's from a CDN; SciDraft links its own copy of KaTeX's
# CSS, and nothing may be fetched from a CDN: drop the @import.
sed -E 's/@import[[:space:]]+url\([^)]*\)[[:space:]]*;?//g' node_modules/pseudocode/build/pseudocode.min.css \
  > "$out/pseudocode/pseudocode.min.css"
cp node_modules/mermaid/dist/mermaid.min.js node_modules/mermaid/LICENSE "$out/mermaid/"
# The note editor: CodeMirror 6 bundled with esbuild (scripts/build-editor.mjs).
node scripts/build-editor.mjs
# The server's citation bundle: citation-js's packages (the theme's version, its BibTeX mapping
# and Vancouver style), citeproc-js and bibliography/js/, bundled with esbuild for V8
# (scripts/build-citations.mjs); the server formats references with it (bibliography/csl.py).
node scripts/build-citations.mjs
# Versions, so the renderer can key its caches on them.
node -e '
const v = (p) => require("./node_modules/" + p + "/package.json").version;
process.stdout.write(JSON.stringify({katex: v("katex"), pseudocode: v("pseudocode"), mermaid: v("mermaid"), "citation-js": v("citation-js")}, null, 2) + "\n");
' > "$out/versions.json"
touch "$out/.copied"
