// The licences of the npm packages an esbuild bundle holds, written in one file beside it.
import fs from "node:fs";
import path from "node:path";

export function writeLicences(root, metafile, file) {
  const packages = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) packages.add(match[1]);
  }
  const notices = [...packages].sort().map((name) => {
    const dir = path.join(root, "node_modules", name);
    const licence = fs.readdirSync(dir).find((entry) => /^licen[cs]e/i.test(entry));
    const version = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
    const text = licence
      ? fs.readFileSync(path.join(dir, licence), "utf8").trim()
      : "(no licence file)";
    return `${name}@${version}\n\n${text}\n`;
  });
  fs.writeFileSync(file, notices.join("\n" + "-".repeat(72) + "\n\n"));
}
