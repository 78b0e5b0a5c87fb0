// The editor's live preview, problems panel and split view (issue 6).
//
// markdownx's own preview timer is switched off (forms.py sets its latency to the longest
// setTimeout delay); this script drives the preview instead, so that typing stays fluid on a
// 5,000-word note:
// - debounced: a request goes out after a pause, longer when the server was slow last time;
// - never more than one request in flight: edits made meanwhile go in the next one;
// - every request carries a sequence number, and a response older than the last one shown
//   is dropped;
// - only the top-level blocks that changed are replaced, so the pane keeps its scroll position
//   and Mermaid diagrams whose source did not change keep their drawing;
// - Mermaid's script loads only once a preview contains a diagram.
// The response starts with the problems list (editor/views.py problems_html), which goes to
// the problems panel; clicking a problem selects its line in the source.
(function () {
  "use strict";
  var form = document.querySelector("form.editor-form");
  if (!form) return;
  var source = form.querySelector("textarea.markdownx-editor");
  var preview = form.querySelector(".editor-preview");
  if (!source || !preview) return;
  var workspace = form.querySelector(".editor-workspace");
  var panes = form.querySelector(".editor-panes");
  var divider = form.querySelector(".editor-divider");
  var toolbar = form.querySelector(".editor-toolbar");
  var status = form.querySelector(".editor-preview-status");
  var problemList = form.querySelector(".editor-problem-list");
  var problemCount = form.querySelector(".editor-problem-count");
  var url = source.getAttribute("data-markdownx-urls-path");

  var MIN_DELAY = 250;
  var MAX_DELAY = 1200;
  var TIMEOUT = 20000;
  var delay = MIN_DELAY;
  var timer = null;
  var inFlight = null; // {seq, controller}
  var sentSeq = 0;
  var shownSeq = 0;
  var lastSent = null; // the text of the latest request (or of the page's stored render)
  var failures = 0; // failed requests in a row: the next attempt waits longer

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
  // the server's new output even after Mermaid replaced its contents with a drawing.
  function sourceOf(node) {
    if (node.__previewSource === undefined) {
      node.__previewSource = node.nodeType === 1 ? node.outerHTML : node.textContent;
    }
    return node.__previewSource;
  }

  function patch(fragment) {
    var fresh = Array.prototype.slice.call(fragment.childNodes);
    fresh.forEach(function (node) {
      sourceOf(node);
    });
    var old = Array.prototype.slice.call(preview.childNodes);
    var start = 0;
    while (start < old.length && start < fresh.length && sourceOf(old[start]) === sourceOf(fresh[start])) {
      start++;
    }
    var endOld = old.length;
    var endFresh = fresh.length;
    while (endOld > start && endFresh > start && sourceOf(old[endOld - 1]) === sourceOf(fresh[endFresh - 1])) {
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

  function showProblems(box) {
    if (!problemList) return;
    var items = box ? box.querySelectorAll("li") : [];
    problemList.textContent = "";
    Array.prototype.forEach.call(items, function (item) {
      var li = document.createElement("li");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "editor-problem";
      button.setAttribute("data-line", item.getAttribute("data-line") || "0");
      // Moved, not re-parsed: the server escaped the message.
      while (item.firstChild) button.appendChild(item.firstChild);
      li.appendChild(button);
      problemList.appendChild(li);
    });
    if (problemCount) problemCount.textContent = String(items.length);
    form.setAttribute("data-problems", String(items.length));
  }

  function apply(html) {
    var template = document.createElement("template");
    template.innerHTML = html;
    var fragment = template.content;
    var box = fragment.firstElementChild;
    if (box && box.classList.contains("editor-problems")) {
      fragment.removeChild(box);
      showProblems(box);
    }
    var pane = preview.parentNode;
    var top = pane.scrollTop;
    var added = patch(fragment);
    pane.scrollTop = top;
    drawDiagrams(added);
  }

  // --- Requests ---------------------------------------------------------------------------

  function send() {
    timer = null;
    if (inFlight || markdownxPending) return; // the response handler sends again
    var text = source.value;
    if (text === lastSent) return;
    lastSent = text;
    var seq = ++sentSeq;
    var controller = window.AbortController ? new AbortController() : null;
    var started = Date.now();
    var body = new FormData();
    body.append("content", text);
    inFlight = { seq: seq, controller: controller };
    var watchdog = setTimeout(function () {
      if (controller) controller.abort();
    }, TIMEOUT);
    say("Updating preview…");
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), "X-Requested-With": "XMLHttpRequest" },
      body: body,
      signal: controller ? controller.signal : undefined,
    })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        // Slow server, longer pause before the next request (within bounds).
        delay = Math.min(MAX_DELAY, Math.max(MIN_DELAY, Date.now() - started));
        if (seq < shownSeq || seq !== sentSeq) return; // stale
        failures = 0;
        shownSeq = seq;
        apply(html);
        form.setAttribute("data-preview-seq", String(seq));
        say("");
      })
      .catch(function (error) {
        lastSent = null; // the text was not previewed: try it again, later each time
        failures += 1;
        say("Preview not updated (" + (error && error.name === "AbortError" ? "timed out" : "server unreachable") + ").");
      })
      .then(function () {
        clearTimeout(watchdog);
        if (inFlight && inFlight.seq === seq) inFlight = null;
        if (source.value !== lastSent) schedule(failures ? Math.min(30000, 1000 * Math.pow(2, failures)) : delay);
      });
  }

  function schedule(wait) {
    if (timer) clearTimeout(timer);
    timer = setTimeout(send, typeof wait === "number" ? wait : delay);
  }

  // markdownx changes the text without an input event for its hotkeys (Tab, Ctrl+D) and
  // announces uploads with keyup; both end up here, and unchanged text sends nothing.
  ["input", "keyup", "change"].forEach(function (type) {
    source.addEventListener(type, function () {
      if (source.value !== lastSent && !(failures && timer)) schedule();
    });
  });

  // The page came with the stored render of the saved text. When the textarea holds
  // something else (a refused form), the text still needs a preview.
  lastSent = preview.getAttribute("data-current") === "true" ? source.value : null;

  // markdownx posts one preview of the text when it starts (this deferred script runs
  // before it does). That request counts as the one in flight, and its response is shown;
  // markdownx's own hidden box is emptied so the page does not hold the note twice.
  var sink = form.querySelector(".markdownx-preview");
  var markdownxPending = Boolean(sink) && !source.hasAttribute("data-markdownx-init");
  var initialText = source.value;
  function markdownxDone(html) {
    if (!markdownxPending) return;
    markdownxPending = false;
    if (sink) sink.textContent = "";
    if (typeof html === "string" && html.indexOf('<div class="editor-problems"') === 0 && sentSeq === 0) {
      apply(html);
      lastSent = initialText;
    }
    if (source.value !== lastSent) schedule();
  }
  if (sink) {
    sink.parentNode.addEventListener("markdownx.update", function (event) {
      markdownxDone(event.detail && event.detail[0]);
    });
    sink.parentNode.addEventListener("markdownx.updateError", function () {
      markdownxDone(null);
    });
    // Should markdownx never start, do not wait for it.
    setTimeout(function () {
      markdownxDone(null);
    }, 5000);
  }
  if (lastSent === null) schedule();

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

  // Remember the server's HTML of the page's own preview before Mermaid draws into it.
  Array.prototype.forEach.call(preview.childNodes, sourceOf);
  drawDiagrams(Array.prototype.slice.call(preview.childNodes));

  // --- Problems: clicking one selects its line in the source ------------------------------

  function selectLine(number) {
    var lines = source.value.split("\n");
    var line = Math.min(Math.max(number, 1), lines.length);
    var start = 0;
    for (var i = 0; i < line - 1; i++) start += lines[i].length + 1;
    var end = start + lines[line - 1].length;
    source.focus();
    source.setSelectionRange(start, end);
    // Scroll the line into view: measure the text above it in a mirror of the textarea.
    var style = window.getComputedStyle(source);
    var lineHeight = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
    var mirror = document.createElement("div");
    ["fontFamily", "fontSize", "fontWeight", "lineHeight", "letterSpacing", "padding", "border", "boxSizing", "whiteSpace", "wordWrap", "tabSize"].forEach(function (name) {
      mirror.style[name] = style[name];
    });
    mirror.style.position = "absolute";
    mirror.style.visibility = "hidden";
    mirror.style.whiteSpace = "pre-wrap";
    mirror.style.overflowWrap = "break-word";
    mirror.style.width = source.clientWidth + "px";
    mirror.textContent = source.value.slice(0, start) + "\u200b";
    document.body.appendChild(mirror);
    var offset = mirror.scrollHeight;
    document.body.removeChild(mirror);
    source.scrollTop = Math.max(0, offset - source.clientHeight / 2 - lineHeight);
    source.scrollIntoView({ block: "nearest" });
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

  function setView(view) {
    workspace.setAttribute("data-view", view);
    Array.prototype.forEach.call(toolbar.querySelectorAll("[data-view-button]"), function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-view-button") === view));
    });
    remember({ view: view });
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
    if (saved.view === "source" || saved.view === "preview") setView(saved.view);
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
