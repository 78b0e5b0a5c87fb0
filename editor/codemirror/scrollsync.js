// Source and preview scroll together. The preview's blocks carry the source
// line they start on (data-source-line, set by the renderer for the editor preview only); the
// line at the top of one side is found on the other by interpolating between the two blocks
// around it. Whichever side the reader scrolls leads; the other follows without echoing back.
// In the narrow layout (tabs), switching tab brings the other side to the same place.

function anchors(preview) {
  const list = [];
  const nodes = preview.querySelectorAll("[data-source-line]");
  let last = 0;
  for (let index = 0; index < nodes.length; index++) {
    const line = parseInt(nodes[index].getAttribute("data-source-line"), 10);
    // Nested blocks (inside an environment) keep the order; a block listed out of order (a
    // footnote) is skipped.
    if (line > 0 && line >= last) {
      list.push({ line: line, node: nodes[index] });
      last = line;
    }
  }
  return list;
}

function topOf(node, pane) {
  return node.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop;
}

// Heights in CodeMirror's document coordinates; the scroller's scrollTop is offset from them
// by the space above the first line.
function documentOffset(view) {
  return view.documentTop - view.scrollDOM.getBoundingClientRect().top + view.scrollDOM.scrollTop;
}

// The fractional source line at the top of the editor.
function sourceLineAtTop(view) {
  const height = Math.max(0, view.scrollDOM.scrollTop - documentOffset(view));
  const block = view.lineBlockAtHeight(height);
  const line = view.state.doc.lineAt(block.from).number;
  const fraction = block.height ? Math.min(1, Math.max(0, (height - block.top) / block.height)) : 0;
  return line + fraction;
}

function scrollSourceTo(view, line) {
  const doc = view.state.doc;
  const whole = Math.min(Math.max(1, Math.floor(line)), doc.lines);
  const block = view.lineBlockAt(doc.line(whole).from);
  view.scrollDOM.scrollTop = block.top + (line - whole) * block.height + documentOffset(view);
}

export function scrollSync(view, pane, workspace) {
  const preview = pane && pane.querySelector(".editor-preview");
  if (!preview) return;
  let leader = null; // the side the reader scrolls
  let leaderUntil = 0;
  let lastSourceLine = 1; // where each side was when last seen, for the tabs
  let lastPreviewLine = 1;

  function lead(side) {
    const now = Date.now();
    if (leader && leader !== side && now < leaderUntil) return false;
    leader = side;
    leaderUntil = now + 150;
    return true;
  }

  function visible(element) {
    return element.offsetParent !== null && element.clientHeight > 0;
  }

  // The two anchors around `value` (a line, or a height in the pane with `byTop`).
  function around(list, value, byTop) {
    let before = null;
    let after = null;
    for (const anchor of list) {
      if ((byTop ? topOf(anchor.node, pane) : anchor.line) <= value) before = anchor;
      else {
        after = anchor;
        break;
      }
    }
    return [before, after];
  }

  function previewToLine(line) {
    const list = anchors(preview);
    if (!list.length || line <= 1) {
      pane.scrollTop = 0;
      return;
    }
    const [before, after] = around(list, line, false);
    if (!before) {
      pane.scrollTop = 0;
      return;
    }
    const from = topOf(before.node, pane);
    const to = after ? topOf(after.node, pane) : pane.scrollHeight;
    const span = (after ? after.line : view.state.doc.lines + 1) - before.line;
    pane.scrollTop = Math.max(0, from + ((line - before.line) / Math.max(1, span)) * (to - from) - 8);
  }

  function lineAtPreviewTop() {
    const list = anchors(preview);
    const top = pane.scrollTop + 8;
    if (!list.length || pane.scrollTop <= 0) return 1;
    const [before, after] = around(list, top, true);
    if (!before) return 1;
    const from = topOf(before.node, pane);
    const to = after ? topOf(after.node, pane) : pane.scrollHeight;
    const span = (after ? after.line : view.state.doc.lines + 1) - before.line;
    return before.line + (to > from ? Math.min(1, (top - from) / (to - from)) * span : 0);
  }

  let frame = 0;
  function soon(action) {
    if (frame) cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => {
      frame = 0;
      action();
    });
  }

  view.scrollDOM.addEventListener(
    "scroll",
    () => {
      if (!visible(view.scrollDOM)) return;
      lastSourceLine = view.scrollDOM.scrollTop <= 0 ? 1 : sourceLineAtTop(view);
      if (visible(pane) && lead("source")) soon(() => previewToLine(lastSourceLine));
    },
    { passive: true }
  );
  pane.addEventListener(
    "scroll",
    () => {
      if (!visible(pane)) return;
      lastPreviewLine = lineAtPreviewTop();
      if (visible(view.scrollDOM) && lead("preview")) {
        soon(() => (lastPreviewLine <= 1 ? (view.scrollDOM.scrollTop = 0) : scrollSourceTo(view, lastPreviewLine)));
      }
    },
    { passive: true }
  );

  // Tabs (narrow screens) and the view buttons: the side that appears shows the same place.
  if (workspace) {
    let shown = workspace.getAttribute("data-view");
    new MutationObserver(() => {
      const now = workspace.getAttribute("data-view");
      if (now === shown) return;
      shown = now;
      requestAnimationFrame(() => {
        leader = "switch";
        leaderUntil = Date.now() + 200;
        if (visible(pane) && !visible(view.scrollDOM)) previewToLine(lastSourceLine);
        else if (visible(view.scrollDOM) && !visible(pane)) {
          view.requestMeasure();
          scrollSourceTo(view, lastPreviewLine);
        }
      });
    }).observe(workspace, { attributes: true, attributeFilter: ["data-view"] });
  }

  view.dom.setAttribute("data-scroll-sync", "on");
}
