// The web editor's autosave (issue 6): a few seconds after typing stops, the title and body
// go to the note's autosave endpoint; one request at a time, and the form's base_version
// follows the saved version so that an explicit Save does not conflict with our own autosave.
(function () {
  "use strict";
  var form = document.querySelector("form.editor-form[data-autosave-url]");
  if (!form) return;
  var url = form.getAttribute("data-autosave-url");
  var delay = 3000;
  var status = document.querySelector(".editor-autosave-status");
  var version = form.querySelector("input[name=base_version]");
  var title = form.querySelector("[name=title]");
  var body = form.querySelector("[name=body]");
  var timer = null;
  var inFlight = false;
  var pending = false;
  var stopped = false;

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function say(text) {
    if (status) status.textContent = text;
  }

  function send() {
    if (stopped) return;
    if (inFlight) {
      pending = true;
      return;
    }
    inFlight = true;
    pending = false;
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({
        title: title ? title.value : "",
        body: body.value,
        base_version: parseInt(version.value, 10),
      }),
    })
      .then(function (response) {
        return response.json().then(function (data) {
          if (response.status === 409) {
            stopped = true;
            say("Not autosaved: someone else saved this note. Save to see both versions.");
          } else if (response.ok) {
            version.value = data.version;
            say("Autosaved (revision " + data.revision + ").");
          } else {
            say("Autosave failed.");
          }
        });
      })
      .catch(function () {
        say("Autosave failed (offline?).");
      })
      .then(function () {
        inFlight = false;
        if (pending) schedule();
      });
  }

  function schedule() {
    if (timer) clearTimeout(timer);
    timer = setTimeout(send, delay);
  }

  [title, body].forEach(function (field) {
    if (field) field.addEventListener("input", schedule);
  });
  form.addEventListener("submit", function () {
    stopped = true;
    if (timer) clearTimeout(timer);
  });
})();
