// The note syntax for CodeMirror's Markdown parser: math in its four delimiters and the amsmath
// environments (the TeX inside highlighted by the stex mode), `:::kind[Title]{#label}` fences,
// Hugo shortcodes and LaTeX commands in prose; and the languages of fenced code (mermaid,
// pseudo-algorithm, and every language of @codemirror/language-data, named as Hugo names them).
// The rules follow scidraft/markup (code_spans.py, protect_math.py, environments.py, shortcodes.py,
// commands.py) closely enough to colour what the engine will read; the engine stays the judge.
import { parseMixed } from "@lezer/common";
import { Tag, styleTags, tags as t } from "@lezer/highlight";
import { LanguageDescription, LanguageSupport, StreamLanguage } from "@codemirror/language";
import { languages } from "@codemirror/language-data";
import { stex, stexMath } from "@codemirror/legacy-modes/mode/stex";

export const mathTag = Tag.define();
export const environmentTag = Tag.define();
export const shortcodeTag = Tag.define();

const texMath = StreamLanguage.define(stexMath);
const tex = StreamLanguage.define(stex);

// The environments protect_math.py reads as display math without dollars.
export const MATH_ENVIRONMENTS = [
  "equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*",
  "flalign", "flalign*", "alignat", "alignat*", "eqnarray", "eqnarray*", "displaymath", "math",
];

const DOLLAR = 36;
const BACKSLASH = 92;
const BRACE_OPEN = 123;

function isSpace(code) {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

// --- Inline: $…$, $$…$$, \(…\), \[…\], \command{…}, {{< shortcode >}} -----------------------

function closeOf(cx, from, closer) {
  for (let pos = from; pos + closer.length <= cx.end; pos++) {
    const code = cx.char(pos);
    if (code === BACKSLASH && closer[0] !== "\\") {
      pos++; // \$ inside math is a dollar, not the end
      continue;
    }
    if (cx.slice(pos, pos + closer.length) === closer) return pos;
  }
  return -1;
}

function mathElement(cx, from, openLength, close, closeLength) {
  return cx.addElement(
    cx.elt("InlineMath", from, close + closeLength, [
      cx.elt("MathMark", from, from + openLength),
      cx.elt("MathContent", from + openLength, close),
      cx.elt("MathMark", close, close + closeLength),
    ])
  );
}

const InlineMath = {
  name: "InlineMath",
  before: "Escape", // \( would otherwise be an escaped parenthesis
  parse(cx, next, pos) {
    if (next === DOLLAR) {
      if (pos > cx.offset && cx.char(pos - 1) === BACKSLASH) return -1;
      if (cx.char(pos + 1) === DOLLAR) {
        const close = closeOf(cx, pos + 2, "$$");
        return close < 0 ? -1 : mathElement(cx, pos, 2, close, 2);
      }
      // As protect_math.py: no space after the opening dollar or before the closing one, and no
      // digit right after it ("$5 and $6" is money).
      if (isSpace(cx.char(pos + 1))) return -1;
      for (let end = pos + 1; end < cx.end; end++) {
        const code = cx.char(end);
        if (code === BACKSLASH) {
          end++;
          continue;
        }
        if (code === DOLLAR) {
          if (isSpace(cx.char(end - 1))) return -1;
          const after = cx.char(end + 1);
          if (after >= 48 && after <= 57) return -1;
          return mathElement(cx, pos, 1, end, 1);
        }
      }
      return -1;
    }
    if (next === BACKSLASH) {
      const second = cx.char(pos + 1);
      if (second === 40 /* ( */ || second === 91 /* [ */) {
        const close = closeOf(cx, pos + 2, second === 40 ? "\\)" : "\\]");
        return close < 0 ? -1 : mathElement(cx, pos, 2, close, 2);
      }
    }
    return -1;
  },
};

const COMMAND = /^\\([A-Za-z]+\*?)/;
const LatexCommand = {
  name: "LatexCommand",
  before: "Escape",
  parse(cx, next, pos) {
    if (next !== BACKSLASH) return -1;
    const match = COMMAND.exec(cx.slice(pos, Math.min(cx.end, pos + 40)));
    if (!match) return -1;
    const nameEnd = pos + match[0].length;
    const children = [cx.elt("LatexCommandName", pos, nameEnd)];
    let end = nameEnd;
    if (cx.char(nameEnd) === BRACE_OPEN) {
      let depth = 0;
      for (let index = nameEnd; index < cx.end; index++) {
        const code = cx.char(index);
        if (code === BRACE_OPEN) depth++;
        else if (code === 125 /* } */ && --depth === 0) {
          children.push(cx.elt("LatexArgument", nameEnd + 1, index));
          end = index + 1;
          break;
        }
      }
    }
    return cx.addElement(cx.elt("LatexCommand", pos, end, children));
  },
};

const SHORTCODE_ARG = /([\w-]+)(\s*=\s*)?("(?:[^"\\]|\\.)*"|`[^`]*`|'[^']*'|[^\s"'`]+)?/g;
const Shortcode = {
  name: "Shortcode",
  before: "Emphasis",
  parse(cx, next, pos) {
    if (next !== BRACE_OPEN || cx.char(pos + 1) !== BRACE_OPEN) return -1;
    const kind = cx.char(pos + 2);
    if (kind !== 60 /* < */ && kind !== 37 /* % */) return -1;
    const closer = kind === 60 ? ">}}" : "%}}";
    const close = cx.slice(pos, cx.end).indexOf(closer);
    if (close < 0) return -1;
    const end = pos + close + 3;
    const inner = cx.slice(pos + 3, end - 3);
    const children = [cx.elt("ShortcodeMark", pos, pos + 3)];
    const head = /^\s*(\/?)\s*([A-Za-z][\w-]*)/.exec(inner);
    if (head) {
      const nameFrom = pos + 3 + head[0].length - head[2].length;
      children.push(cx.elt("ShortcodeName", nameFrom, nameFrom + head[2].length));
      const args = inner.slice(head[0].length);
      const base = pos + 3 + head[0].length;
      SHORTCODE_ARG.lastIndex = 0;
      let match;
      while ((match = SHORTCODE_ARG.exec(args))) {
        const at = base + match.index;
        if (match[2] !== undefined) {
          children.push(cx.elt("ShortcodeParameter", at, at + match[1].length));
          if (match[3]) {
            const valueAt = at + match[1].length + match[2].length;
            children.push(cx.elt("ShortcodeValue", valueAt, valueAt + match[3].length));
          }
        } else {
          children.push(cx.elt("ShortcodeValue", at, at + match[0].length));
        }
      }
    }
    children.push(cx.elt("ShortcodeMark", end - 3, end));
    return cx.addElement(cx.elt("Shortcode", pos, end, children));
  },
};

// --- Blocks: $$ / \[ / \begin{align} display math, and ::: environment fences -------------

const BLOCK_OPENERS = [
  { open: "$$", close: "$$" },
  { open: "\\[", close: "\\]" },
];
const BEGIN = /^\\begin\{([A-Za-z]+\*?)\}/;

function displayMathBlock(cx, line) {
  const text = line.text.slice(line.pos);
  let spec = BLOCK_OPENERS.find((candidate) => text.startsWith(candidate.open));
  let environment = false;
  if (!spec) {
    const begin = BEGIN.exec(text);
    if (!begin || MATH_ENVIRONMENTS.indexOf(begin[1]) < 0) return false;
    spec = { open: "", close: "\\end{" + begin[1] + "}" };
    environment = true;
  }
  const from = cx.lineStart + line.pos;
  const contentFrom = from + spec.open.length;
  // Where the closer is: on this line after the opener, or on a later line.
  let searchFrom = line.pos + (environment ? 7 : spec.open.length);
  let closeAt = -1;
  let lineStart = cx.lineStart;
  for (;;) {
    const found = line.text.indexOf(spec.close, searchFrom);
    if (found >= 0) {
      closeAt = lineStart + found;
      break;
    }
    if (!cx.nextLine()) break;
    lineStart = cx.lineStart;
    searchFrom = 0;
    // LaTeX refuses a blank line in display math: there, unclosed math stops colouring.
    if (line.text.trim() === "") break;
  }
  const children = [];
  let to;
  if (closeAt < 0) {
    to = cx.prevLineEnd();
    if (spec.open) children.push(cx.elt("MathMark", from, contentFrom));
    children.push(cx.elt("MathContent", contentFrom, to));
  } else {
    const closeEnd = closeAt + spec.close.length;
    if (environment) {
      children.push(cx.elt("MathContent", from, closeEnd));
    } else {
      children.push(cx.elt("MathMark", from, contentFrom));
      if (closeAt > contentFrom) children.push(cx.elt("MathContent", contentFrom, closeAt));
      children.push(cx.elt("MathMark", closeAt, closeEnd));
    }
    to = closeEnd;
    cx.nextLine();
  }
  cx.addElement(cx.elt("BlockMath", from, to, children));
  return true;
}

const FENCE_OPEN = /^(\s*)(:{3,})\s*([A-Za-z][\w-]*)\s*(\[[^\]\n]*\])?\s*(\{[^}\n]*\})?\s*$/;
const FENCE_CLOSE = /^\s*:{3,}\s*$/;

function environmentFence(cx, line) {
  const text = line.text;
  const from = cx.lineStart;
  const open = FENCE_OPEN.exec(text);
  const children = [];
  if (open) {
    let at = from + open[1].length;
    children.push(cx.elt("EnvironmentMark", at, at + open[2].length));
    at = from + text.indexOf(open[3], open[1].length + open[2].length);
    children.push(cx.elt("EnvironmentKind", at, at + open[3].length));
    let cursor = at + open[3].length - from;
    if (open[4]) {
      const titleAt = text.indexOf(open[4], cursor);
      children.push(cx.elt("EnvironmentTitle", from + titleAt, from + titleAt + open[4].length));
      cursor = titleAt + open[4].length;
    }
    if (open[5]) {
      const labelAt = text.indexOf(open[5], cursor);
      children.push(cx.elt("EnvironmentLabel", from + labelAt, from + labelAt + open[5].length));
    }
  } else if (FENCE_CLOSE.test(text)) {
    const start = text.indexOf(":");
    children.push(cx.elt("EnvironmentMark", from + start, from + text.trimEnd().length));
  } else {
    return false;
  }
  cx.addElement(cx.elt("EnvironmentFence", from, from + text.length, children));
  cx.nextLine();
  return true;
}

function endsParagraph(cx, line) {
  const text = line.text.slice(line.pos);
  return FENCE_OPEN.test(line.text) || FENCE_CLOSE.test(line.text) || text.startsWith("$$") || text.startsWith("\\[");
}

const mathParsers = parseMixed((node) =>
  node.name === "MathContent" ? { parser: texMath.parser } : null
);

export const noteSyntax = {
  defineNodes: [
    { name: "InlineMath" },
    { name: "BlockMath", block: true },
    { name: "MathMark" },
    { name: "MathContent" },
    { name: "EnvironmentFence", block: true },
    { name: "EnvironmentMark" },
    { name: "EnvironmentKind" },
    { name: "EnvironmentTitle" },
    { name: "EnvironmentLabel" },
    { name: "Shortcode" },
    { name: "ShortcodeMark" },
    { name: "ShortcodeName" },
    { name: "ShortcodeParameter" },
    { name: "ShortcodeValue" },
    { name: "LatexCommand" },
    { name: "LatexCommandName" },
    { name: "LatexArgument" },
  ],
  parseInline: [InlineMath, LatexCommand, Shortcode],
  parseBlock: [
    { name: "BlockMath", before: "FencedCode", parse: displayMathBlock, endLeaf: endsParagraph },
    { name: "EnvironmentFence", before: "FencedCode", parse: environmentFence, endLeaf: endsParagraph },
  ],
  wrap: mathParsers,
  props: [
    styleTags({
      "InlineMath/... BlockMath/...": mathTag,
      MathMark: t.processingInstruction,
      "EnvironmentFence/...": environmentTag,
      EnvironmentMark: t.processingInstruction,
      EnvironmentKind: t.keyword,
      EnvironmentTitle: t.heading,
      EnvironmentLabel: t.labelName,
      "Shortcode/...": shortcodeTag,
      ShortcodeMark: t.bracket,
      ShortcodeName: t.macroName,
      ShortcodeParameter: t.attributeName,
      ShortcodeValue: t.attributeValue,
      LatexCommandName: t.function(t.variableName),
      LatexArgument: t.labelName,
    }),
  ],
};

// --- Fenced code ------------------------------------------------------------------------------

const mermaid = StreamLanguage.define({
  name: "mermaid",
  token(stream) {
    if (stream.match(/^%%.*/)) return "comment";
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
    if (
      stream.match(
        /^(?:flowchart|graph|sequenceDiagram|classDiagram|stateDiagram(?:-v2)?|erDiagram|gantt|pie|mindmap|quadrantChart|journey|gitGraph|timeline|xychart-beta|sankey-beta|block-beta|requirementDiagram)\b/
      )
    )
      return "keyword";
    if (
      stream.match(
        /^(?:subgraph|end|participant|actor|loop|alt|else|opt|par|and|critical|break|rect|note|over|section|title|dateFormat|axisFormat|autonumber|direction|class|state|click|style|linkStyle|classDef|root|x-axis|y-axis|quadrant-[1-4])\b/
      )
    )
      return "keyword";
    if (stream.match(/^(?:<-->|-->>|->>|-\.->|==>|-->|---|--x|-x|--|->|\.->)/)) return "operator";
    if (stream.match(/^[[\](){}]/)) return "bracket";
    if (stream.match(/^\d+(?:\.\d+)?/)) return "number";
    if (stream.match(/^[A-Za-z_][\w-]*/)) return "variableName";
    stream.next();
    return null;
  },
});

const OWN = [
  LanguageDescription.of({ name: "mermaid", support: new LanguageSupport(mermaid) }),
  LanguageDescription.of({
    name: "pseudo-algorithm",
    alias: ["algorithm", "latex", "tex"],
    support: new LanguageSupport(tex),
  }),
];

// Hugo's info strings: "python {linenos=true}" and "{.python}" name the language by their
// first word, as scidraft/markup/code.py reads them.
export function fenceLanguage(info) {
  const word = (info.trim().split(/\s+/)[0] || "").replace(/^[{.]+|[{}.]+$/g, "").toLowerCase();
  if (!word) return null;
  return (
    LanguageDescription.matchLanguageName(OWN, word, false) ||
    LanguageDescription.matchLanguageName(languages, word, false)
  );
}
