// The editor's live preview, problems panel and split view.
//
// The preview is asked for in the background, so that typing never waits for it, even on a
// 5,000-word note:
// - debounced: a request goes out after a pause, longer when the server was slow last time;
// - never more than one request in flight: edits made meanwhile go in the next one;
// - every request carries a sequence number, and a response older than the last one shown
//   is dropped;
// - only the top-level blocks that changed are replaced, so the pane keeps its scroll position
//   and Mermaid diagrams whose source did not change keep their drawing;
// - Mermaid's script loads only once a preview contains a diagram.
// The answer is JSON (editor/views.py preview_json): the HTML, whose blocks carry their source
// lines (for scrolling together), the problems, which fill the problems panel and mark their
// lines in the editor's gutter, and the note's labels, which \ref{ completes. Clicking a
// problem selects its line in the source. The text is read through SciDraftBody
// (editor-body.js): CodeMirror's, or the textarea's without it.
(function () {
  "use strict";
  var form = document.querySelector("form.editor-form");
  if (!form) return;
  var source = form.querySelector("textarea[name=body]");
  var preview = form.querySelector(".editor-preview");
  if (!source || !preview || !window.SciDraftBody) return;
  var body = window.SciDraftBody.of(source);
  var workspace = form.querySelector(".editor-workspace");
  var panes = form.querySelector(".editor-panes");
  var divider = form.querySelector(".editor-divider");
  var toolbar = form.querySelector(".editor-toolbar");
  var status = form.querySelector(".editor-preview-status");
  var problemList = form.querySelector(".editor-problem-list");
  var problemCount = form.querySelector(".editor-problem-count");
  var url = source.getAttribute("data-preview-url");
  // The side panel's macros: the preview renders with them as they are typed, before a save.
  var macros = form.querySelector("textarea[name=math_macros]");

  var MIN_DELAY = 250;
  var MAX_DELAY = 1200;
  var TIMEOUT = 20000;
  var delay = MIN_DELAY;
  var timer = null;
  var inFlight = null; // {seq, controller}
  var sentSeq = 0;
  var shownSeq = 0;
  var lastSent = null; // the text (and macros) of the latest request
  var failures = 0; // failed requests in a row: the next attempt waits longer
  var paused = 0; // seconds the server asked to wait (429, Retry-After)
  var pausedUntil = 0; // Date.now() before which typing does not ask for a preview

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function say(text) {
    if (status) status.textContent = text;
  }

  // --- Applying a response ----------------------------------------------------------------

  // Each top-level node remembers the HTML it was made from, so a block is compared with
  // the server's new output even after Mermaid replaced its contents with a drawing. Source
  // lines are left out of the comparison: a line typed above a block moves its line, not its
  // content, and the kept block only takes the new numbers.
  var LINES = / data-source-line="\d+"/g;
  function sourceOf(node) {
    if (node.__previewSource === undefined) {
      node.__previewSource = node.nodeType === 1 ? node.outerHTML.replace(LINES, "") : node.textContent;
    }
    return node.__previewSource;
  }

  // The kept block takes the fresh one's source lines, element by element: their HTML is the
  // same but for the lines, so an element is found in both by its path of child indexes.
  function takeLines(kept, fresh) {
    if (kept.nodeType !== 1 || fresh.nodeType !== 1) return;
    var marked = Array.prototype.slice.call(fresh.querySelectorAll("[data-source-line]"));
    if (fresh.hasAttribute("data-source-line")) marked.unshift(fresh);
    marked.forEach(function (element) {
      var path = [];
      for (var node = element; node !== fresh; node = node.parentNode) {
        path.unshift(Array.prototype.indexOf.call(node.parentNode.children, node));
      }
      var target = kept;
      for (var i = 0; target && i < path.length; i++) target = target.children[path[i]];
      if (target) target.setAttribute("data-source-line", element.getAttribute("data-source-line"));
    });
  }

  function patch(fragment) {
    var fresh = Array.prototype.slice.call(fragment.childNodes);
    fresh.forEach(function (node) {
      sourceOf(node);
    });
    var old = Array.prototype.slice.call(preview.childNodes);
    var start = 0;
    while (start < old.length && start < fresh.length && sourceOf(old[start]) === sourceOf(fresh[start])) {
      takeLines(old[start], fresh[start]);
      start++;
    }
    var endOld = old.length;
    var endFresh = fresh.length;
    while (endOld > start && endFresh > start && sourceOf(old[endOld - 1]) === sourceOf(fresh[endFresh - 1])) {
      takeLines(old[endOld - 1], fresh[endFresh - 1]);
      endOld--;
      endFresh--;
    }
    var anchor = endOld < old.length ? old[endOld] : null;
    for (var i = start; i < endOld; i++) preview.removeChild(old[i]);
    var added = [];
    for (var j = start; j < endFresh; j++) {
      preview.insertBefore(fresh[j], anchor);
      added.push(fresh[j]);
    }
    return added;
  }

  // The problems panel and the gutter, from one list: [{line, code, message, blocking}].
  function showProblems(problems) {
    if (problemList) {
      problemList.textContent = "";
      problems.forEach(function (problem) {
        var li = document.createElement("li");
        var button = document.createElement("button");
        button.type = "button";
        button.className = "editor-problem";
        button.setAttribute("data-line", String(problem.line || 0));
        var where = document.createElement("span");
        where.className = "editor-problem-line";
        where.textContent = "line " + (problem.line || "?");
        button.appendChild(where);
        button.appendChild(document.createTextNode(" " + problem.message));
        li.appendChild(button);
        problemList.appendChild(li);
      });
    }
    if (problemCount) problemCount.textContent = String(problems.length);
    form.setAttribute("data-problems", String(problems.length));
    body.setProblems(problems);
  }

  function problemsOf(data) {
    return (Array.isArray(data.problems) ? data.problems : [])
      .filter(function (problem) {
        return problem && typeof problem.message === "string";
      })
      .map(function (problem) {
        return {
          line: parseInt(problem.line, 10) || 0,
          code: typeof problem.code === "string" ? problem.code : "",
          message: problem.message,
          blocking: Boolean(problem.blocking),
        };
      });
  }

  function apply(data) {
    var template = document.createElement("template");
    template.innerHTML = typeof data.html === "string" ? data.html : "";
    showProblems(problemsOf(data));
    body.setLabels(Array.isArray(data.labels) ? data.labels : []);
    var pane = preview.parentNode;
    var top = pane.scrollTop;
    var added = patch(template.content);
    pane.scrollTop = top;
    drawDiagrams(added);
  }

  // --- Requests ---------------------------------------------------------------------------

  function send() {
    timer = null;
    if (inFlight) return; // the response handler sends again
    var text = body.text();
    var own = macros ? macros.value : null;
    var sent = own === null ? text : text + "\u0000" + own;
    if (sent === lastSent) return;
    lastSent = sent;
    var seq = ++sentSeq;
    var controller = window.AbortController ? new AbortController() : null;
    var started = Date.now();
    var payload = new FormData();
    payload.append("content", text);
    if (own !== null) payload.append("math_macros", own);
    inFlight = { seq: seq, controller: controller };
    var watchdog = setTimeout(function () {
      if (controller) controller.abort();
    }, TIMEOUT);
    say("Updating preview…");
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "X-CSRFToken": csrfToken(),
        "X-Requested-With": "XMLHttpRequest",
        Accept: "application/json",
      },
      body: payload,
      signal: controller ? controller.signal : undefined,
    })
      .then(function (response) {
        if (response.status === 429 || response.status === 503) {
          // Too many previews for now (editor/previews.py): wait as long as the server says.
          paused = Math.max(1, parseInt(response.headers.get("Retry-After"), 10) || 5);
          return response.json().then(
            function (data) {
              throw { paused: paused, message: data && data.error };
            },
            function () {
              throw { paused: paused };
            }
          );
        }
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (data) {
        // Slow server, longer pause before the next request (within bounds).
        delay = Math.min(MAX_DELAY, Math.max(MIN_DELAY, Date.now() - started));
        if (seq < shownSeq || seq !== sentSeq) return; // stale
        failures = 0;
        shownSeq = seq;
        apply(data || {});
        form.setAttribute("data-preview-seq", String(seq));
        say("");
      })
      .catch(function (error) {
        lastSent = null; // the text was not previewed: try it again, later each time
        if (error && error.paused) {
          say(error.message || "Preview paused, retrying in " + error.paused + " s…");
          return;
        }
        failures += 1;
        say("Preview not updated (" + (error && error.name === "AbortError" ? "timed out" : "server unreachable") + ").");
      })
      .then(function () {
        clearTimeout(watchdog);
        if (inFlight && inFlight.seq === seq) inFlight = null;
        if (paused) {
          // Asked again once the pause is over, whether or not the text changed meanwhile.
          changedSince = false;
          pausedUntil = Date.now() + paused * 1000;
          schedule(paused * 1000);
          paused = 0;
        } else if (changedSince) {
          changedSince = false;
          schedule(failures ? Math.min(30000, 1000 * Math.pow(2, failures)) : delay);
        }
      });
  }

  function schedule(wait) {
    if (timer) clearTimeout(timer);
    timer = setTimeout(send, typeof wait === "number" ? wait : delay);
  }

  // A change while a request is out is sent once it has answered (changedSince): the text is
  // read then, never on each keystroke.
  var changedSince = false;
  function changed() {
    if (inFlight) changedSince = true;
    if (!((failures || Date.now() < pausedUntil) && timer)) schedule();
  }
  body.onChange(changed);
  if (macros) macros.addEventListener("input", changed);

  // The page came with the stored render of the saved text and its problems: they show at
  // once, and the first answer (right away) adds the source lines, the gutter and the labels.
  lastSent = null;
  var stored = [];
  Array.prototype.forEach.call(form.querySelectorAll(".editor-problem-list .editor-problem"), function (button) {
    var text = button.textContent.replace(/^\s*line \S+\s*/, "");
    stored.push({ line: parseInt(button.getAttribute("data-line"), 10) || 0, message: text });
  });
  body.setProblems(stored);
  schedule(0);

  // --- Mermaid: loaded on first need, drawn only for diagrams whose source is new ---------

  var mermaidLoading = null;
  var drawings = {}; // diagram source → SVG markup (Mermaid's own output, strict mode)
  var drawnTheme = null;

  function themeName() {
    return document.documentElement.getAttribute("data-theme") === "dark" ? "dark" : "neutral";
  }

  function loadMermaid() {
    if (window.mermaid) return Promise.resolve(window.mermaid);
    if (mermaidLoading) return mermaidLoading;
    mermaidLoading = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = preview.getAttribute("data-mermaid-script");
      script.onload = function () {
        resolve(window.mermaid);
      };
      script.onerror = reject;
      document.head.appendChild(script);
    });
    return mermaidLoading;
  }

  var drawQueue = Promise.resolve();

  function drawDiagrams(added) {
    var nodes = [];
    added.forEach(function (node) {
      if (node.nodeType !== 1) return;
      if (node.matches("pre.mermaid")) nodes.push(node);
      Array.prototype.push.apply(nodes, node.querySelectorAll("pre.mermaid"));
    });
    if (!nodes.length) return;
    drawQueue = drawQueue.then(function () {
      return draw(nodes);
    });
  }

  function draw(nodes) {
    var theme = themeName();
    if (theme !== drawnTheme) drawings = {};
    var todo = [];
    nodes.forEach(function (node) {
      if (!node.isConnected) return;
      var text = node.getAttribute("data-mermaid-src") || node.textContent;
      node.setAttribute("data-mermaid-src", text);
      if (Object.prototype.hasOwnProperty.call(drawings, text)) {
        // The same diagram moved or its neighbours changed: reuse the drawing.
        node.innerHTML = drawings[text];
        node.setAttribute("data-processed", "true");
      } else {
        todo.push(node);
      }
    });
    if (!todo.length) return Promise.resolve();
    return loadMermaid()
      .then(function (mermaid) {
        if (drawnTheme !== theme) {
          mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: theme });
          drawnTheme = theme;
        }
        return Promise.resolve(mermaid.run({ nodes: todo, suppressErrors: true })).then(function () {
          todo.forEach(function (node) {
            if (node.querySelector("svg")) drawings[node.getAttribute("data-mermaid-src")] = node.innerHTML;
          });
          form.setAttribute("data-mermaid-runs", String(parseInt(form.getAttribute("data-mermaid-runs") || "0", 10) + 1));
        });
      })
      .catch(function (error) {
        if (window.console) window.console.warn("mermaid:", error);
      });
  }

  // The help panel's examples are drawn the same way (editor-help.js).
  window.SciDraftDiagrams = { draw: drawDiagrams };

  // Remember the server's HTML of the page's own preview before Mermaid draws into it.
  Array.prototype.forEach.call(preview.childNodes, sourceOf);
  drawDiagrams(Array.prototype.slice.call(preview.childNodes));

  // --- Problems: clicking one selects its line in the source ------------------------------

  function selectLine(number) {
    if (workspace && effectiveView(workspace.getAttribute("data-view")) === "preview") setView("source");
    body.selectLine(number);
  }

  if (problemList) {
    problemList.addEventListener("click", function (event) {
      var button = event.target.closest ? event.target.closest(".editor-problem") : null;
      if (!button) return;
      var line = parseInt(button.getAttribute("data-line"), 10);
      if (line > 0) selectLine(line);
    });
  }
  var confirmList = form.querySelector(".editor-confirm-list");
  if (confirmList) {
    confirmList.addEventListener("click", function (event) {
      var item = event.target.closest ? event.target.closest("li[data-line]") : null;
      if (item && parseInt(item.getAttribute("data-line"), 10) > 0) selectLine(parseInt(item.getAttribute("data-line"), 10));
    });
  }

  // --- Views: split (resizable), source only, full-width preview ----------------------------

  var STORE = "scidraft:editor-view";
  function remembered() {
    try {
      return JSON.parse(window.localStorage.getItem(STORE) || "{}") || {};
    } catch (error) {
      return {};
    }
  }
  function remember(values) {
    try {
      var current = remembered();
      Object.keys(values).forEach(function (key) {
        current[key] = values[key];
      });
      window.localStorage.setItem(STORE, JSON.stringify(current));
    } catch (error) {
      // Private mode or full storage: the view just is not remembered.
    }
  }

  // On a narrow screen (the phone layout of scidraft.css) source and preview are tabs: the
  // split view shows as the source tab.
  var narrow = window.matchMedia ? window.matchMedia("(max-width: 720px)") : { matches: false };
  function effectiveView(view) {
    return narrow.matches && view === "split" ? "source" : view;
  }

  function setView(view, keep) {
    var shown = effectiveView(view);
    workspace.setAttribute("data-view", shown);
    Array.prototype.forEach.call(toolbar.querySelectorAll("[data-view-button]"), function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-view-button") === shown));
    });
    if (!keep) remember({ view: view });
  }

  function setSplit(percent) {
    percent = Math.min(80, Math.max(20, percent));
    panes.style.setProperty("--editor-split", percent + "%");
    divider.setAttribute("aria-valuenow", String(Math.round(percent)));
    return percent;
  }

  if (workspace && toolbar && panes && divider) {
    toolbar.hidden = false;
    divider.hidden = false;
    var saved = remembered();
    if (saved.split) setSplit(saved.split);
    setView(saved.view === "source" || saved.view === "preview" ? saved.view : "split", true);
    var onResize = function () {
      var view = remembered().view;
      if (narrow.matches && workspace.getAttribute("data-view") === "split") setView("source", true);
      else if (!narrow.matches && !view) setView("split", true);
    };
    if (narrow.addEventListener) narrow.addEventListener("change", onResize);
    toolbar.addEventListener("click", function (event) {
      var button = event.target.closest ? event.target.closest("[data-view-button]") : null;
      if (button) setView(button.getAttribute("data-view-button"));
    });
    divider.addEventListener("pointerdown", function (event) {
      event.preventDefault();
      divider.setPointerCapture(event.pointerId);
      workspace.classList.add("editor-resizing");
      function move(moveEvent) {
        var box = panes.getBoundingClientRect();
        setSplit(((moveEvent.clientX - box.left) / box.width) * 100);
      }
      function up() {
        divider.removeEventListener("pointermove", move);
        divider.removeEventListener("pointerup", up);
        divider.removeEventListener("pointercancel", up);
        workspace.classList.remove("editor-resizing");
        remember({ split: parseFloat(divider.getAttribute("aria-valuenow")) });
      }
      divider.addEventListener("pointermove", move);
      divider.addEventListener("pointerup", up);
      divider.addEventListener("pointercancel", up);
    });
    divider.addEventListener("keydown", function (event) {
      var now = parseFloat(divider.getAttribute("aria-valuenow")) || 50;
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        event.preventDefault();
        remember({ split: setSplit(now + (event.key === "ArrowLeft" ? -5 : 5)) });
      }
    });
  }
})();
