// The oracle: the Hugo theme's reference formatting, run in Node on a whole .bib file.
// It loads citation-js 0.6.9's browser bundle (node_modules/citation-js/build/citation.js,
// the file the theme's page loads), strips %-comment lines as the theme's loader does, parses
// the file with citation-js and formats every entry on its own, as the theme does:
//   new Cite([entry]).format("bibliography", {format: "html", template, lang})
// Usage: node citation_js.js FILE.bib STYLE LANG [STYLE_XML] [LOCALE_XML]
// Prints JSON: {"entries": {key: html}, "errors": {key: message}, "broken": message|null}.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [file, style, lang, styleXml, localeXml] = process.argv.slice(2);
const root = path.resolve(__dirname, "..", "..", "..");
const bundle = path.join(root, "node_modules", "citation-js", "build", "citation.js");
const sandbox = {};
sandbox.window = sandbox;
sandbox.self = sandbox;
vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(bundle, "utf8"), sandbox, {filename: bundle});
vm.runInContext('var Cite = require("citation-js");', sandbox);
let template = style;
if (styleXml) {
  sandbox.xml = fs.readFileSync(styleXml, "utf8");
  sandbox.name = "oracle-" + style;
  vm.runInContext('Cite.plugins.config.get("@csl").templates.add(name, xml);', sandbox);
  template = sandbox.name;
}
if (localeXml) {
  sandbox.xml = fs.readFileSync(localeXml, "utf8");
  sandbox.lang = lang;
  vm.runInContext('Cite.plugins.config.get("@csl").locales.add(lang, xml);', sandbox);
}
const text = fs.readFileSync(file, "utf8").split("\n")
  .filter((line) => line.replace(/^\s+/, "").charAt(0) !== "%").join("\n");
sandbox.text = text;
sandbox.options = {format: "html", template, lang};
const out = {entries: {}, errors: {}, broken: null};
try {
  vm.runInContext("var all = new Cite(text);", sandbox);
} catch (error) {
  out.broken = String(error && error.message || error);
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}
const count = vm.runInContext("all.data.length", sandbox);
for (let i = 0; i < count; i++) {
  sandbox.i = i;
  const id = vm.runInContext("all.data[i].id", sandbox);
  // The theme looks a key up with data.find: the first entry of a repeated key wins.
  if (id in out.entries || id in out.errors) continue;
  try {
    out.entries[id] = vm.runInContext("new Cite([all.data[i]]).format('bibliography', options)", sandbox);
  } catch (error) {
    out.errors[id] = String(error && error.message || error).split("\n")[0];
  }
}
process.stdout.write(JSON.stringify(out));
