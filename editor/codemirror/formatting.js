// Ctrl/Cmd+B, +I and +K as in every other editor a researcher writes in: bold, italic and a
// link, written as the Markdown the note keeps (**…**, *…*, [](url)). Each wraps every
// selection (or inserts the marks around the caret); bold and italic undo themselves when the
// selection is already wrapped. A link selects its placeholder "url", so typing replaces it.
import { EditorSelection } from "@codemirror/state";

function wrappedBy(state, range, mark) {
  const from = range.from - mark.length;
  const to = range.to + mark.length;
  if (from < 0 || to > state.doc.length) return false;
  if (state.sliceDoc(from, range.from) !== mark || state.sliceDoc(range.to, to) !== mark) return false;
  // *x* inside **x**: the star belongs to the bold marks, unless there are three (***x***).
  if (mark === "*") {
    const before = state.sliceDoc(Math.max(0, from - 2), from);
    const after = state.sliceDoc(to, Math.min(state.doc.length, to + 2));
    const stars = (text) => (text.match(/\*/g) || []).length;
    if (stars(before) === 1 || stars(after) === 1) return false;
  }
  return true;
}

export function toggleMark(mark) {
  return (view) => {
    const state = view.state;
    const update = state.changeByRange((range) => {
      if (wrappedBy(state, range, mark)) {
        return {
          changes: [
            { from: range.from - mark.length, to: range.from },
            { from: range.to, to: range.to + mark.length },
          ],
          range: EditorSelection.range(range.from - mark.length, range.to - mark.length),
        };
      }
      return {
        changes: [
          { from: range.from, insert: mark },
          { from: range.to, insert: mark },
        ],
        range: EditorSelection.range(range.from + mark.length, range.to + mark.length),
      };
    });
    view.dispatch(state.update(update, { scrollIntoView: true, userEvent: "input" }));
    return true;
  };
}

export function insertLink(view) {
  const state = view.state;
  const update = state.changeByRange((range) => {
    const text = state.sliceDoc(range.from, range.to);
    const insert = "[" + text + "](url)";
    const urlFrom = range.from + text.length + 3;
    return {
      changes: { from: range.from, to: range.to, insert: insert },
      range: EditorSelection.range(urlFrom, urlFrom + 3),
    };
  });
  view.dispatch(state.update(update, { scrollIntoView: true, userEvent: "input" }));
  return true;
}

// Before CodeMirror's default keymap, whose Mod-i selects the enclosing syntax node.
export const formattingKeymap = [
  { key: "Mod-b", preventDefault: true, run: toggleMark("**") },
  { key: "Mod-i", preventDefault: true, run: toggleMark("*") },
  { key: "Mod-k", preventDefault: true, run: insertLink },
];
