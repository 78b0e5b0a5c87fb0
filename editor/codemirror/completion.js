// Completion from the site's own data:
// - \cite{…}: entries of the bibliographies usable in the note (the cite search endpoint);
// - \ref{…}, \eqref{…}: this note's labels (from the live preview) and other notes'
//   slug:label (the labels endpoint);
// - ::: : the environment kinds of the site; {{< : the shortcodes, then their parameters;
// - \ : LaTeX commands, math ones inside math and the text ones outside.
// Every answer from the server is read defensively: a missing field is left out, never shown
// as "undefined", and text is only ever put in the page as text.
import { snippetCompletion } from "@codemirror/autocomplete";
import { syntaxTree } from "@codemirror/language";

const MATH_COMMANDS = [
  ["frac", "\\frac{${numerator}}{${denominator}}", "fraction"],
  ["dfrac", "\\dfrac{${numerator}}{${denominator}}", "display fraction"],
  ["sqrt", "\\sqrt{${x}}", "square root"],
  ["sum", "\\sum_{${i=1}}^{${n}}", "sum"],
  ["prod", "\\prod_{${i=1}}^{${n}}", "product"],
  ["int", "\\int_{${a}}^{${b}}", "integral"],
  ["iint", "\\iint", "double integral"],
  ["oint", "\\oint", "contour integral"],
  ["lim", "\\lim_{${x \\to \\infty}}", "limit"],
  ["partial", "\\partial", "∂"],
  ["nabla", "\\nabla", "∇"],
  ["infty", "\\infty", "∞"],
  ["mathbb", "\\mathbb{${R}}", "blackboard bold"],
  ["mathbf", "\\mathbf{${x}}", "bold"],
  ["mathrm", "\\mathrm{${d}}", "upright"],
  ["mathcal", "\\mathcal{${L}}", "calligraphic"],
  ["operatorname", "\\operatorname{${name}}", "operator name"],
  ["text", "\\text{${words}}", "text in math"],
  ["left", "\\left( ${} \\right)", "sized delimiters"],
  ["begin", "\\begin{${pmatrix}}\n${}\n\\end{${pmatrix}}", "environment"],
  ["cases", "\\begin{cases} ${a} & ${x \\ge 0} \\\\ ${b} & ${x \\lt 0} \\end{cases}", "cases"],
  ["pmatrix", "\\begin{pmatrix} ${a} & ${b} \\\\ ${c} & ${d} \\end{pmatrix}", "matrix"],
  ["label", "\\label{${eq:name}}", "number this equation"],
  ["tag", "\\tag{${1}}", "equation tag"],
  ["hat", "\\hat{${x}}", "hat"],
  ["bar", "\\bar{${x}}", "bar"],
  ["tilde", "\\tilde{${x}}", "tilde"],
  ["vec", "\\vec{${x}}", "vector"],
  ["dot", "\\dot{${x}}", "time derivative"],
  ["overline", "\\overline{${x}}", "overline"],
  ["underbrace", "\\underbrace{${x}}_{${label}}", "brace below"],
  ["lt", "\\lt", "< (safe in Hugo too)"],
  ["gt", "\\gt", "> (safe in Hugo too)"],
].concat(
  [
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta",
    "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi",
    "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma",
    "Phi", "Psi", "Omega", "cdot", "cdots", "ldots", "times", "div", "pm", "mp", "le", "ge",
    "leq", "geq", "neq", "approx", "equiv", "sim", "propto", "in", "notin", "subset",
    "subseteq", "cup", "cap", "emptyset", "forall", "exists", "to", "mapsto", "rightarrow",
    "Rightarrow", "leftarrow", "iff", "implies", "langle", "rangle", "lVert", "rVert",
    "top", "ell", "log", "ln", "exp", "sin", "cos", "tan", "max", "min", "arg", "det",
    "quad", "qquad",
  ].map((name) => [name, "\\" + name, ""])
);

const TEXT_COMMANDS = [
  ["cite", "\\cite{${key}}", "citation"],
  ["ref", "\\ref{${label}}", "reference"],
  ["eqref", "\\eqref{${eq:label}}", "equation reference"],
  ["textbf", "\\textbf{${text}}", "bold"],
  ["textit", "\\textit{${text}}", "italic"],
  ["emph", "\\emph{${text}}", "emphasis"],
  ["texttt", "\\texttt{${text}}", "monospace"],
  ["begin", "\\begin{${align}}\n${}\n\\end{${align}}", "display math environment"],
];

function commandOptions(list, type) {
  return list.map(([name, template, detail]) =>
    template.indexOf("${") >= 0
      ? snippetCompletion(template, { label: "\\" + name, detail: detail, type: type })
      : { label: "\\" + name, apply: template, detail: detail, type: type }
  );
}

const mathOptions = commandOptions(MATH_COMMANDS, "function");
const textOptions = commandOptions(TEXT_COMMANDS, "keyword");

// In closed math (the syntax tree says so), or after an opening $ or \( on the line that is
// not closed yet: math being typed.
function inMath(state, pos) {
  for (let node = syntaxTree(state).resolveInner(pos, -1); node; node = node.parent) {
    if (node.name === "InlineMath" || node.name === "BlockMath") return true;
  }
  const line = state.doc.lineAt(pos);
  const before = line.text.slice(0, pos - line.from).replace(/\\\$/g, "");
  const dollars = (before.match(/\$/g) || []).length;
  return dollars % 2 === 1 || before.lastIndexOf("\\(") > before.lastIndexOf("\\)");
}

function text(value) {
  return typeof value === "string" ? value : value == null ? "" : String(value);
}

function fetchJSON(url, context) {
  const controller = typeof AbortController === "function" ? new AbortController() : null;
  if (controller) context.addEventListener("abort", () => controller.abort());
  return fetch(url, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
    signal: controller ? controller.signal : undefined,
  }).then((response) => {
    if (!response.ok) throw new Error("HTTP " + response.status);
    return response.json();
  });
}

function infoNode(lines) {
  return () => {
    const box = document.createElement("div");
    box.className = "cm-scidraft-info";
    lines.filter(Boolean).forEach((line) => {
      const row = document.createElement("div");
      row.textContent = line;
      box.appendChild(row);
    });
    return box;
  };
}

// The key being typed inside \cite{a, b|} or \ref{…}: from after the brace or the last comma.
function argumentAt(context, commands) {
  const match = context.matchBefore(new RegExp("\\\\(" + commands + ")\\{[^{}\\n]*$"));
  if (!match) return null;
  const inside = match.text.slice(match.text.indexOf("{") + 1);
  const comma = inside.lastIndexOf(",");
  const typed = inside.slice(comma + 1).replace(/^\s+/, "");
  return { command: match.text.slice(1, match.text.indexOf("{")), typed, from: context.pos - typed.length };
}

// A key found only in a file the author may not use: shown (with where it is and whom to ask),
// and choosing it changes nothing.
function unusableKey(typed, data) {
  const message = text(data && data.message);
  if (!message || (Array.isArray(data.results) && data.results.length)) return [];
  return [{ label: typed, detail: "not usable here", info: infoNode([message]), type: "text", apply: () => {} }];
}

export function citeSource(url) {
  return (context) => {
    const at = argumentAt(context, "cite|citep|citet");
    if (!at || !url) return null;
    return fetchJSON(url + "?q=" + encodeURIComponent(at.typed), context)
      .then((data) => ({
        from: at.from,
        filter: false,
        options: (Array.isArray(data && data.results) ? data.results : [])
          .filter((entry) => entry && text(entry.key))
          .map((entry, index) => ({
            label: text(entry.key),
            detail: [text(entry.authors), text(entry.year)].filter(Boolean).join(" · "),
            info: infoNode([text(entry.title), text(entry.authors), [text(entry.year), text(entry.file)].filter(Boolean).join(" · ")]),
            type: "text",
            boost: -index,
          }))
          .concat(unusableKey(at.typed, data)),
      }))
      .catch(() => null);
  };
}

export function referenceSource(url, localLabels) {
  return (context) => {
    const at = argumentAt(context, "ref|eqref|autoref|cref|Cref");
    if (!at) return null;
    const equationsFirst = at.command === "eqref";
    const local = localLabels().map((entry) => ({
      label: entry.label,
      detail: text(entry.text),
      type: entry.kind === "equation" ? "constant" : "variable",
      boost: equationsFirst && entry.kind === "equation" ? 2 : 1,
    }));
    const typed = at.typed;
    const others = url
      ? fetchJSON(url + "?q=" + encodeURIComponent(typed), context)
          .then((data) =>
            (Array.isArray(data && data.results) ? data.results : [])
              .filter((entry) => entry && text(entry.ref))
              .map((entry) => ({
                label: text(entry.ref),
                detail: text(entry.text),
                info: infoNode([text(entry.title)]),
                type: "variable",
                boost: 0,
              }))
          )
          .catch(() => [])
      : Promise.resolve([]);
    // CodeMirror filters the labels as typing goes on (validFor), without asking again.
    return others.then((remote) => ({
      from: at.from,
      options: local.concat(remote),
      validFor: /^[\w:.-]*$/,
    }));
  };
}

export function environmentSource(kinds) {
  return (context) => {
    const match = context.matchBefore(/^\s*:{3,}[A-Za-z][\w-]*$|^\s*:{3,}$/);
    if (!match) return null;
    // A bare ::: is usually a closing fence: only offer kinds once a letter is typed, or when
    // asked (Ctrl+Space), so Enter after a closing fence still starts a new line.
    if (/:$/.test(match.text) && !context.explicit) return null;
    const colons = /:{3,}/.exec(match.text)[0];
    const from = match.from + match.text.indexOf(colons);
    return {
      from: from,
      options: kinds
        .filter((kind) => kind && text(kind.key))
        .map((kind) =>
          snippetCompletion(colons + kind.key + "[${Title}]{#${" + kind.key.slice(0, 3) + "-label}}\n${}\n" + colons, {
            label: colons + kind.key,
            detail: text(kind.label) + (kind.numbered ? ", numbered" : ""),
            type: "class",
          })
        ),
      validFor: /^:{3,}[\w-]*$/,
    };
  };
}

const FIRST_SHORTCODE = "references";

export function shortcodeSource(shortcodes) {
  const byName = {};
  shortcodes.forEach((code) => {
    if (code && text(code.name)) byName[code.name] = code;
  });
  return (context) => {
    const name = context.matchBefore(/\{\{[<%]\s*\/?[\w-]*$/);
    if (name) {
      const opener = name.text.slice(0, 3);
      const closer = opener === "{{<" ? " >}}" : " %}}";
      const closing = /\//.test(name.text);
      return {
        from: name.from,
        options: Object.keys(byName).map((key) => {
          const code = byName[key];
          const params = Array.isArray(code.params) ? code.params : [];
          let template = opener + " " + (closing ? "/" : "") + key;
          if (!closing && params.length) template += " " + params[0] + '="${}"';
          template += closer;
          if (!closing && code.paired) template += "\n${}\n" + opener + " /" + key + closer;
          return snippetCompletion(template, {
            label: opener + " " + (closing ? "/" : "") + key,
            detail: text(code.summary),
            info: params.length ? infoNode(["Parameters: " + params.join(", ")]) : undefined,
            type: "type",
            // The one authors reach for first: a note's reference list.
            boost: key === FIRST_SHORTCODE ? 1 : 0,
          });
        }),
        validFor: /^\{\{[<%]\s*\/?[\w-]*$/,
      };
    }
    // A parameter inside an open shortcode: {{< references bi|
    const inside = context.matchBefore(/\{\{[<%]\s*([\w-]+)(?:\s+[\w-]+\s*=\s*(?:"[^"]*"|\S+))*\s+[\w-]*$/);
    if (!inside) return null;
    const head = /\{\{[<%]\s*([\w-]+)/.exec(inside.text);
    const code = head && byName[head[1]];
    if (!code || !Array.isArray(code.params)) return null;
    const typed = /[\w-]*$/.exec(inside.text)[0];
    const used = inside.text.match(/([\w-]+)\s*=/g) || [];
    return {
      from: context.pos - typed.length,
      options: code.params
        .filter((param) => used.indexOf(param + "=") < 0 && used.join(" ").indexOf(param) < 0)
        .map((param) => snippetCompletion(param + '="${}"', { label: param, type: "property", detail: head[1] })),
      validFor: /^[\w-]*$/,
    };
  };
}

export function commandSource() {
  return (context) => {
    const match = context.matchBefore(/\\[A-Za-z]*$/);
    if (!match) return null;
    // Inside math, its commands; in prose, the text commands first, then the math ones (for
    // math about to be opened).
    const math = inMath(context.state, context.pos);
    return {
      from: match.from,
      options: math ? mathOptions : textOptions.map((option) => ({ ...option, boost: 1 })).concat(mathOptions),
      validFor: /^\\[A-Za-z]*$/,
    };
  };
}
