// The oracle: MathJax v4 (the npm package the theme loads from its CDN, mathjax@4/tex-chtml.js),
// run in Node. It says, for each formula, whether MathJax accepts it and what text it shows.
// The formulas are typeset in order, as on one page: a \newcommand in one applies to the later
// ones. Input (stdin): JSON [{"tex": "...", "display": bool}, ...]. Output (stdout): JSON
// [{"ok": bool, "error": message|null, "text": "..."}, ...]; `text` is the characters of the
// MathML's token elements (mi, mo, mn, mtext, ms), in order, entities decoded. A formula is
// refused when MathJax writes an merror or shows an undefined command in red (noundefined).
"use strict";
const fs = require("fs");
const path = require("path");

const root = path.resolve(__dirname, "..", "..", "..");
const MathJax = require(path.join(root, "node_modules", "mathjax", "node-main.cjs"));

const formulas = JSON.parse(fs.readFileSync(0, "utf8"));

function decode(text) {
  return text.replace(/&#x([0-9A-Fa-f]+);/g, (_, hex) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
}

MathJax.init({
  // The theme's tex-chtml component has these packages; mhchem is one autoload fetches on the
  // first \ce, loaded here up front since Node has no page to fetch it from.
  loader: {load: ["input/tex", "[tex]/mhchem", "adaptors/liteDOM"]},
  tex: {packages: {"[+]": ["mhchem"]}},
  startup: {typeset: false},
}).then(async (MJ) => {
  const out = [];
  for (const formula of formulas) {
    try {
      const mml = await MJ.tex2mmlPromise(formula.tex, {display: !!formula.display});
      const error = /<merror[^>]*data-mjx-error="([^"]*)"/.exec(mml) ||
        /<mtext[^>]*mathcolor="red"[^>]*>([^<]*)</.exec(mml) || /<merror/.exec(mml);
      // Phantoms only reserve space (mhchem aligns with them): not text.
      const shown = mml.replace(/<mphantom>[\s\S]*?<\/mphantom>/g, "");
      const parts = [];
      const tokens = /<(mi|mo|mn|mtext|ms)\b[^>]*>([^<]*)<\/\1>/g;
      let match;
      while ((match = tokens.exec(shown))) parts.push(decode(match[2]));
      out.push({ok: !error, error: error ? decode(error[1] || "merror") : null,
                text: parts.join("")});
    } catch (err) {
      out.push({ok: false, error: String(err.message || err), text: ""});
    }
  }
  process.stdout.write(JSON.stringify(out));
}).catch((err) => {
  process.stderr.write(String((err && err.stack) || err));
  process.exit(1);
});
