// The note editor: CodeMirror 6 over the body's textarea. The textarea stays the
// form's field (the page works and posts without JavaScript); this module hides it, edits its
// text in CodeMirror, writes the text back whenever the form is submitted, and registers the
// editor with static/js/editor-body.js, the one interface through which the editor's other
// scripts (autosave, preview, cite picker, images, help) read and change the text.
//
// Built by scripts/build-editor.mjs (esbuild) into static/vendor/editor/ at set-up; the
// languages of fenced code are separate chunks, loaded when a fence first names them.
import { EditorState, EditorSelection, Compartment } from "@codemirror/state";
import {
  EditorView,
  keymap,
  lineNumbers,
  highlightActiveLineGutter,
  highlightSpecialChars,
  drawSelection,
  dropCursor,
  rectangularSelection,
  crosshairCursor,
  highlightActiveLine,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab, isolateHistory } from "@codemirror/commands";
import { bracketMatching, indentOnInput, syntaxHighlighting, HighlightStyle } from "@codemirror/language";
import { search, searchKeymap, highlightSelectionMatches } from "@codemirror/search";
import { autocompletion, completionKeymap, closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import { lintGutter, lintKeymap, setDiagnostics } from "@codemirror/lint";
import { markdown, markdownLanguage } from "@codemirror/lang-markdown";
import { tags as t } from "@lezer/highlight";

import { noteSyntax, fenceLanguage, mathTag, environmentTag, shortcodeTag } from "./syntax.js";
import {
  citeSource,
  referenceSource,
  environmentSource,
  shortcodeSource,
  commandSource,
} from "./completion.js";
import { scrollSync } from "./scrollsync.js";
import { formattingKeymap } from "./formatting.js";

const highlighting = HighlightStyle.define([
  { tag: t.heading1, class: "cm-sd-heading cm-sd-heading1" },
  { tag: [t.heading2, t.heading3, t.heading4, t.heading5, t.heading6, t.heading], class: "cm-sd-heading" },
  { tag: t.strong, class: "cm-sd-strong" },
  { tag: t.emphasis, class: "cm-sd-emphasis" },
  { tag: t.strikethrough, class: "cm-sd-strike" },
  { tag: [t.link, t.url], class: "cm-sd-link" },
  { tag: t.monospace, class: "cm-sd-code" },
  { tag: t.quote, class: "cm-sd-quote" },
  { tag: [t.processingInstruction, t.contentSeparator, t.list], class: "cm-sd-mark" },
  { tag: t.meta, class: "cm-sd-meta" },
  { tag: mathTag, class: "cm-sd-math" },
  { tag: environmentTag, class: "cm-sd-environment" },
  { tag: shortcodeTag, class: "cm-sd-shortcode" },
  { tag: [t.keyword, t.tagName], class: "cm-sd-keyword" },
  { tag: [t.macroName, t.function(t.variableName)], class: "cm-sd-command" },
  { tag: [t.labelName, t.attributeName], class: "cm-sd-label" },
  { tag: [t.string, t.attributeValue, t.special(t.string)], class: "cm-sd-string" },
  { tag: [t.number, t.atom, t.bool], class: "cm-sd-number" },
  { tag: [t.comment, t.lineComment, t.blockComment], class: "cm-sd-comment" },
  { tag: [t.bracket, t.brace, t.paren, t.squareBracket], class: "cm-sd-bracket" },
  { tag: [t.operator, t.derefOperator], class: "cm-sd-operator" },
  { tag: [t.variableName, t.propertyName], class: "cm-sd-variable" },
  { tag: [t.typeName, t.className, t.namespace, t.standard(t.variableName)], class: "cm-sd-type" },
  { tag: t.definition(t.variableName), class: "cm-sd-definition" },
  { tag: t.invalid, class: "cm-sd-invalid" },
]);

// Sizes and layout here; every colour is a CSS variable of static/css/scidraft.css, so the
// site's light and dark themes apply to the editor as to the rest of the page.
const layout = EditorView.theme({
  "&": { height: "100%", fontSize: "14px", color: "var(--cm-text)", backgroundColor: "var(--cm-bg)" },
  ".cm-scroller": { fontFamily: "var(--cm-font)", lineHeight: "1.55" },
  ".cm-content": { caretColor: "var(--cm-caret)", padding: "6px 0" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--cm-caret)" },
  ".cm-gutters": {
    backgroundColor: "var(--cm-gutter-bg)",
    color: "var(--cm-gutter-text)",
    borderRight: "1px solid var(--cm-border)",
  },
  ".cm-activeLine": { backgroundColor: "var(--cm-active-line)" },
  ".cm-activeLineGutter": { backgroundColor: "var(--cm-active-line)", color: "var(--cm-text)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "var(--cm-selection) !important",
  },
  ".cm-matchingBracket, &.cm-focused .cm-matchingBracket": {
    backgroundColor: "var(--cm-bracket-match)",
    outline: "1px solid var(--cm-border)",
  },
  ".cm-tooltip": {
    backgroundColor: "var(--cm-tooltip-bg)",
    color: "var(--cm-text)",
    border: "1px solid var(--cm-border)",
  },
  ".cm-tooltip-autocomplete > ul > li[aria-selected]": {
    backgroundColor: "var(--cm-selection)",
    color: "var(--cm-text)",
  },
  ".cm-panels": { backgroundColor: "var(--cm-gutter-bg)", color: "var(--cm-text)" },
  ".cm-panels input, .cm-panels button": { color: "var(--cm-text)" },
  ".cm-searchMatch": { backgroundColor: "var(--cm-search-match)" },
  ".cm-searchMatch-selected": { backgroundColor: "var(--cm-search-current)" },
});

function isDark() {
  return document.documentElement.getAttribute("data-theme") === "dark";
}

function mount(textarea) {
  const form = textarea.form;
  const noteId = form ? form.getAttribute("data-note-id") || "" : "";
  const data = readData(textarea);
  const listeners = [];
  let labels = []; // this note's labels, from the latest preview
  const darkness = new Compartment();
  // CodeMirror's own undo history, until writing together replaces it with Yjs's (live.js).
  const historyCompartment = new Compartment();
  const ownHistory = [history(), keymap.of(historyKeymap)];

  function save() {
    const button = form && form.querySelector("button[name=action][value=save]");
    if (!button) return false;
    if (form.requestSubmit) form.requestSubmit(button);
    else button.click();
    return true;
  }

  const extensions = [
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    historyCompartment.of(ownHistory),
    drawSelection(),
    dropCursor(),
    EditorState.allowMultipleSelections.of(true),
    indentOnInput(),
    syntaxHighlighting(highlighting),
    bracketMatching(),
    closeBrackets(),
    autocompletion({
      override: [
        citeSource(textarea.getAttribute("data-cite-url")),
        referenceSource(textarea.getAttribute("data-labels-url"), () => labels),
        environmentSource(data.environments || []),
        shortcodeSource(data.shortcodes || []),
        commandSource(),
      ],
      icons: false,
    }),
    rectangularSelection(),
    crosshairCursor(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    search({ top: true }),
    lintGutter(),
    EditorView.lineWrapping,
    markdown({ base: markdownLanguage, codeLanguages: fenceLanguage, extensions: [noteSyntax] }),
    keymap.of([
      { key: "Mod-s", preventDefault: true, run: save },
      ...formattingKeymap,
      ...closeBracketsKeymap,
      ...defaultKeymap,
      ...searchKeymap,
      ...completionKeymap,
      ...lintKeymap,
      indentWithTab,
    ]),
    layout,
    darkness.of(EditorView.darkTheme.of(isDark())),
    EditorView.contentAttributes.of({
      "aria-label": "Body of the note (Markdown with LaTeX)",
      "aria-describedby": "editor-body-keys",
      // Editable text is in the tab order anyway; said outright, checkers that do not count
      // contenteditable (axe) see that the scroller around it has focusable content (its own
      // tabindex is -1, CodeMirror's, so Tab does not stop twice).
      tabindex: "0",
      spellcheck: "true",
      autocapitalize: "sentences",
    }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged) listeners.forEach((listener) => listener(update));
    }),
  ];

  // An author who started typing in the plain textarea before the script ran goes on where
  // they were: the text is the textarea's, and so are the caret, the selection and the focus.
  const typing = document.activeElement === textarea;
  const length = textarea.value.length;
  const start = Math.min(textarea.selectionStart || 0, length);
  const end = Math.min(textarea.selectionEnd || 0, length);
  const backward = textarea.selectionDirection === "backward";
  const view = new EditorView({
    state: EditorState.create({
      doc: textarea.value,
      selection: typing ? EditorSelection.single(backward ? end : start, backward ? start : end) : undefined,
      extensions,
    }),
  });
  textarea.parentNode.insertBefore(view.dom, textarea.nextSibling);
  textarea.hidden = true;
  textarea.setAttribute("aria-hidden", "true");
  textarea.tabIndex = -1;
  view.dom.classList.add("editor-codemirror");
  if (typing) {
    view.focus();
    view.dispatch({ effects: EditorView.scrollIntoView(view.state.selection.main.head, { y: "center" }) });
  }

  // The label of the textarea now names the editor: a click on it focuses the text.
  const label = textarea.id && document.querySelector('label[for="' + textarea.id + '"]');
  if (label) label.addEventListener("click", () => view.focus());

  // Follow the site's theme toggle.
  new MutationObserver(() => {
    view.dispatch({ effects: darkness.reconfigure(EditorView.darkTheme.of(isDark())) });
  }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });

  // The form posts the textarea: it gets the text whenever the form is submitted.
  function sync() {
    const text = view.state.doc.toString();
    if (textarea.value !== text) textarea.value = text;
  }
  if (form) {
    form.addEventListener("submit", () => {
      sync();
      remember();
    }, true);
    form.addEventListener("formdata", sync);
    // Ctrl/Cmd+S anywhere on the page (a side-panel field has focus): the same save.
    document.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && (event.key === "s" || event.key === "S")) {
        if (view.hasFocus) return; // the editor's own keymap answered
        event.preventDefault();
        save();
      }
    });
  }

  // Saving reloads the page: the cursor and scroll position come back when the text is the
  // one that was saved.
  const PLACE = "scidraft:editor-place:" + noteId;
  function remember() {
    try {
      const main = view.state.selection.main;
      window.sessionStorage.setItem(
        PLACE,
        JSON.stringify({ anchor: main.anchor, head: main.head, top: view.scrollDOM.scrollTop, length: view.state.doc.length })
      );
    } catch (error) {
      // Storage blocked: the editor opens at the top, as before.
    }
  }
  try {
    const place = JSON.parse(window.sessionStorage.getItem(PLACE) || "null");
    window.sessionStorage.removeItem(PLACE);
    if (place && place.length === view.state.doc.length && place.head <= place.length) {
      view.dispatch({ selection: { anchor: Math.min(place.anchor, place.length), head: place.head } });
      requestAnimationFrame(() => {
        view.scrollDOM.scrollTop = place.top;
      });
      view.focus();
    }
  } catch (error) {
    // Nothing remembered.
  }

  function lineRange(number) {
    const doc = view.state.doc;
    return doc.line(Math.min(Math.max(1, number || 1), doc.lines));
  }

  function insert(text, options) {
    const state = view.state;
    const at = options && typeof options.at === "number" ? Math.min(options.at, state.doc.length) : state.selection.main.to;
    view.dispatch({
      changes: { from: at, insert: text },
      selection: { anchor: at + text.length },
      scrollIntoView: true,
      userEvent: "input",
      // One step of its own in the undo history, never merged with the typing around it.
      annotations: isolateHistory.of("full"),
    });
    if (!options || options.focus !== false) view.focus();
  }

  const body = {
    kind: "codemirror",
    view: view,
    element: view.dom,
    text: () => view.state.doc.toString(),
    onChange: (listener) => listeners.push(listener),
    insert: insert,
    setText(text) {
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: text },
        userEvent: "input",
        annotations: isolateHistory.of("full"),
      });
    },
    focus: () => view.focus(),
    hasFocus: () => view.hasFocus,
    selectLine(number) {
      const line = lineRange(number);
      view.dispatch({
        selection: { anchor: line.from, head: line.to },
        effects: EditorView.scrollIntoView(line.from, { y: "center" }),
      });
      view.focus();
    },
    posAtCoords: (x, y) => view.posAtCoords({ x: x, y: y }),
    setLabels(list) {
      labels = Array.isArray(list) ? list.filter((entry) => entry && typeof entry.label === "string") : [];
    },
    // Problems of the latest preview as diagnostics: a marker in the gutter on their line,
    // the message when hovering it or the underlined line.
    setProblems(problems) {
      const doc = view.state.doc;
      const diagnostics = (problems || []).map((problem) => {
        const line = lineRange(problem.line > 0 ? Math.min(problem.line, doc.lines) : 1);
        return {
          from: line.from,
          to: line.to,
          severity: problem.blocking ? "error" : "warning",
          message: "line " + (problem.line || "?") + ": " + problem.message,
          source: problem.code || undefined,
        };
      });
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    save: save,
  };
  window.SciDraftBody.register(textarea, body);
  scrollSync(view, document.querySelector(".editor-preview-pane"), document.querySelector(".editor-workspace"));
  form && form.setAttribute("data-editor", "codemirror");
  // Writing together: its own chunk, fetched only where the server offers it.
  if (form && form.getAttribute("data-live-url")) {
    import("./live.js").then((live) => {
      window.SciDraftLive = live.startLive({ view, form, historyCompartment, history: ownHistory });
    });
  }
  return body;
}

// The site's environment kinds and shortcodes (editor/views.py _completion_data).
function readData(textarea) {
  const holder = textarea.closest("[data-completion]");
  try {
    return (holder && JSON.parse(holder.getAttribute("data-completion"))) || {};
  } catch (error) {
    return {};
  }
}

const textarea = document.querySelector("form.editor-form textarea[name=body]");
if (textarea && window.SciDraftBody) mount(textarea);
