// The web editor's autosave. A few seconds after typing stops, the title and
// body go to the note's autosave endpoint, one request at a time; the form's base_version
// follows the saved version so that an explicit Save does not conflict with our own autosave.
//
// Nothing typed is lost: every change is first copied to localStorage under the note's id and
// the version it was typed on. A failed autosave (offline, a 5xx or 503 while the database is
// down, a login page instead of JSON) is retried with a growing delay while the page says
// "Not saved yet — retrying"; the copy is removed only once the server has the same text.
// A copy left behind (the tab closed before a retry succeeded) is offered for restoring on the
// next visit when it differs from the server's text.
//
// Writing together (editor/codemirror/live.js): once the note's shared document has
// synced, form[data-live] is "synced" (or "offline" while the socket reconnects) and the server
// saves the merged text; sending it here as well would write it twice, so nothing is sent or
// copied until the shared document gives up (form[data-live] = "fallback").
(function () {
  "use strict";
  var form = document.querySelector("form.editor-form[data-autosave-url]");
  if (!form) return;
  var url = form.getAttribute("data-autosave-url");
  var noteId = form.getAttribute("data-note-id") || url;
  var delay = 3000;
  var BACKOFF = [1000, 2000, 4000, 8000, 15000, 30000];
  var status = document.querySelector(".editor-autosave-status");
  var version = form.querySelector("input[name=base_version]");
  var title = form.querySelector("[name=title]");
  var bodyField = form.querySelector("textarea[name=body]");
  if (!bodyField || !window.SciDraftBody) return;
  // CodeMirror's text, or the textarea's (editor-body.js).
  var body = window.SciDraftBody.of(bodyField);
  var restoreBox = form.querySelector(".editor-restore");
  var PREFIX = "scidraft:unsaved:" + noteId + ":";
  var timer = null;
  var inFlight = false;
  var pending = false;
  var stopped = false;
  var failures = 0;
  var submitting = false;
  var saved = { title: title ? title.value : "", body: body.text() };

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function say(text, state) {
    if (!status) return;
    status.textContent = text;
    status.setAttribute("data-state", state || "");
  }

  // The header's revision number follows every save: this page's autosaves and the merged
  // saves of writing together (live.js announces them on the form).
  var revisionShown = document.querySelector(".editor-revision");
  function showRevision(number) {
    if (revisionShown && Number.isInteger(number) && number > parseInt(revisionShown.textContent, 10)) {
      revisionShown.textContent = String(number);
    }
  }
  form.addEventListener("scidraft:live-saved", function (event) {
    showRevision(event.detail && event.detail.revision);
  });

  function live() {
    var mode = form.getAttribute("data-live");
    return mode === "synced" || mode === "offline";
  }

  function current() {
    return { title: title ? title.value : "", body: body.text() };
  }

  function dirty() {
    var now = current();
    return now.title !== saved.title || now.body !== saved.body;
  }

  // --- The local copy -----------------------------------------------------------------------

  function storage() {
    try {
      return window.localStorage;
    } catch (error) {
      return null;
    }
  }

  function localKeys() {
    var store = storage();
    var keys = [];
    if (!store) return keys;
    for (var i = 0; i < store.length; i++) {
      var key = store.key(i);
      if (key && key.indexOf(PREFIX) === 0) keys.push(key);
    }
    return keys;
  }

  function forget() {
    var store = storage();
    localKeys().forEach(function (key) {
      store.removeItem(key);
    });
  }

  function keep() {
    var store = storage();
    if (!store) return;
    var base = parseInt(version.value, 10);
    var copy = current();
    copy.base_version = base;
    copy.saved_at = Date.now();
    try {
      localKeys().forEach(function (key) {
        if (key !== PREFIX + base) store.removeItem(key);
      });
      store.setItem(PREFIX + base, JSON.stringify(copy));
    } catch (error) {
      // Storage full or disabled: the server copy is the only one; say so while unsaved.
    }
  }

  function newestCopy() {
    var store = storage();
    var best = null;
    localKeys().forEach(function (key) {
      try {
        var copy = JSON.parse(store.getItem(key));
        if (copy && typeof copy.body === "string" && (!best || copy.saved_at > best.saved_at)) best = copy;
      } catch (error) {
        store.removeItem(key);
      }
    });
    return best;
  }

  function offerRestore() {
    var copy = newestCopy();
    if (!copy) return;
    var server = current();
    if (copy.body === server.body && copy.title === server.title) {
      forget(); // the server has it: a retry or a Save got through
      return;
    }
    if (!restoreBox) return;
    var base = parseInt(version.value, 10);
    var when = new Date(copy.saved_at).toLocaleString();
    var text = restoreBox.querySelector(".editor-restore-text");
    text.textContent =
      copy.base_version >= base
        ? "This browser has text you typed at " + when + " that was not saved yet. It is newer than the saved note."
        : "This browser has text you typed at " + when + " on version " + copy.base_version +
          " that was not saved; the note has been saved since (version " + base + "). Restoring puts your text in the editor; the saved version stays in the revisions.";
    restoreBox.hidden = false;
    restoreBox.querySelector("[data-restore]").addEventListener("click", function () {
      if (title) title.value = copy.title;
      body.setText(copy.body); // one step: Ctrl+Z brings the server's text back
      restoreBox.hidden = true;
      if (title) title.dispatchEvent(new Event("input", { bubbles: true }));
    });
    restoreBox.querySelector("[data-discard]").addEventListener("click", function () {
      forget();
      restoreBox.hidden = true;
    });
  }

  // --- Sending --------------------------------------------------------------------------------

  function retry(reason) {
    var wait = BACKOFF[Math.min(failures, BACKOFF.length - 1)];
    failures += 1;
    say("Not saved yet — retrying in " + Math.round(wait / 1000) + " s (" + reason + "). Your text is kept in this browser.", "retrying");
    form.setAttribute("data-autosave", "retrying");
    schedule(wait);
  }

  function send() {
    timer = null;
    if (stopped || live()) return;
    if (inFlight) {
      pending = true;
      return;
    }
    if (!dirty()) return;
    inFlight = true;
    pending = false;
    var sent = current();
    form.setAttribute("data-autosave", "saving");
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({
        title: sent.title,
        body: sent.body,
        base_version: parseInt(version.value, 10),
      }),
    })
      .then(function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (type.indexOf("application/json") === -1) {
          // A login page after the session ended, or a proxy's error page.
          retry(response.redirected ? "signed out? sign in in another tab" : "HTTP " + response.status);
          return;
        }
        return response.json().then(function (data) {
          if (response.status === 409) {
            stopped = true;
            form.setAttribute("data-autosave", "conflict");
            say("Not autosaved: someone else saved this note. Save to see both versions; your text is kept in this browser.", "conflict");
          } else if (response.ok) {
            failures = 0;
            version.value = data.version;
            saved = sent;
            if (dirty()) keep();
            else forget();
            form.setAttribute("data-autosave", "saved");
            showRevision(data.revision);
            say("Autosaved (revision " + data.revision + ").", "saved");
          } else if (response.status >= 500 || response.status === 429) {
            retry("HTTP " + response.status);
          } else {
            stopped = true;
            form.setAttribute("data-autosave", "failed");
            say("Not autosaved: " + (data.error || "HTTP " + response.status) + " Your text is kept in this browser.", "failed");
          }
        });
      })
      .catch(function () {
        retry("offline?");
      })
      .then(function () {
        inFlight = false;
        if (submitWaiting()) return;
        if (pending && !timer) schedule(delay);
      });
  }

  function schedule(wait) {
    if (timer) clearTimeout(timer);
    timer = setTimeout(send, wait);
  }

  var keepTimer = null;
  function keepSoon() {
    // Copying a long note on every keystroke would cost more than typing it.
    if (keepTimer) return;
    keepTimer = setTimeout(function () {
      keepTimer = null;
      keep();
    }, 400);
  }

  function changed() {
    if (live()) return;
    keepSoon();
    if (failures) return; // the retry timer is running; it sends the latest text
    schedule(delay);
  }

  if (title) title.addEventListener("input", changed);
  body.onChange(changed);
  form.addEventListener("scidraft:live", function (event) {
    if (event.detail.mode === "synced" && timer) {
      clearTimeout(timer);
      timer = null;
    } else if (event.detail.mode === "fallback" && dirty()) {
      keep();
      schedule(0);
    }
  });
  window.addEventListener("online", function () {
    if (failures && !inFlight) schedule(0);
  });
  var submitPending = false;
  var submitter = null;
  form.addEventListener("submit", function (event) {
    if (inFlight) {
      // An autosave is on its way: submitting now would carry the version it replaces and be
      // refused as a conflict with ourselves. Submit once it has answered.
      event.preventDefault();
      submitPending = true;
      submitter = event.submitter || null;
      stopped = true;
      return;
    }
    submitting = true;
    stopped = true;
    if (timer) clearTimeout(timer);
    if (dirty()) keep(); // removed on the next visit once the server has this text
  });
  function submitWaiting() {
    if (!submitPending) return false;
    submitPending = false;
    if (form.requestSubmit) form.requestSubmit(submitter || undefined);
    else form.submit();
    return true;
  }
  window.addEventListener("beforeunload", function (event) {
    if (submitting || live() || !dirty()) return;
    keep();
    event.preventDefault();
    event.returnValue = "";
  });
  // Phones close and discard tabs in the background without a beforeunload: the copy is
  // made as the page is hidden, not 400 ms after the last key, which may never come.
  function keepNow() {
    if (submitting || live() || !dirty()) return;
    keep();
  }
  window.addEventListener("pagehide", keepNow);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") keepNow();
  });

  offerRestore();
})();
