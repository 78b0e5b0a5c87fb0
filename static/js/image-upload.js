// Images in the editor (issue 6): "Insert image" posts the chosen files to the note's upload
// endpoint (the one markdownx's drag-and-drop and paste use) and inserts the Markdown it
// returns at the body's cursor; the note's images are listed with their Markdown. Messages and
// list items are built with textContent only: file names come from the uploader.
(function () {
  "use strict";
  var root = document.querySelector(".image-upload[data-upload-url]");
  if (!root) return;
  var body = document.getElementById(root.getAttribute("data-upload-target"));
  if (!body) return;
  var url = root.getAttribute("data-upload-url");
  var controls = root.querySelector(".image-upload-controls");
  var button = root.querySelector(".image-upload-button");
  var input = root.querySelector(".image-upload-file");
  var status = root.querySelector(".image-upload-status");
  var panel = root.querySelector(".image-upload-panel");
  var list = root.querySelector(".image-upload-list");
  var count = root.querySelector(".image-upload-count");
  // markdownx writes this at the cursor when an upload fails; it is taken out again below.
  var MARKDOWNX_FAILURE = "Invalid response";
  var selection = { start: 0, end: 0 };

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    var field = document.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function say(text) {
    status.textContent = text;
  }

  // The endpoint answers {"image": ["message", …]} on refusal, as markdownx's own view does.
  function refusal(data) {
    if (data && data.image && data.image.join) return data.image.join(" ");
    return "The upload failed; try again.";
  }

  function changed() {
    // The preview and autosave listen for input; a script's change fires none on its own.
    body.dispatchEvent(new Event("input", { bubbles: true }));
  }

  // A textarea keeps its selection when focus leaves it: that is where images go.
  function remember() {
    selection = { start: body.selectionStart, end: body.selectionEnd };
  }

  function insertAt(text) {
    var length = body.value.length;
    var start = Math.min(selection.start, length);
    var end = Math.min(Math.max(selection.end, start), length);
    body.focus();
    body.setRangeText(text, start, end, "end");
    selection = { start: body.selectionEnd, end: body.selectionEnd };
    changed();
  }

  function insertButton(markdown) {
    var insert = document.createElement("button");
    insert.type = "button";
    insert.className = "editor-button image-upload-insert";
    insert.textContent = "Insert";
    insert.addEventListener("click", function () {
      remember();
      insertAt(markdown);
    });
    return insert;
  }

  function listed(data) {
    if (!data || !data.image_code || !data.created) return;
    var item = document.createElement("li");
    item.className = "image-upload-item";
    var picture = document.createElement("img");
    picture.src = data.url;
    picture.alt = "";
    picture.width = 64;
    var code = document.createElement("code");
    code.textContent = data.image_code;
    item.appendChild(picture);
    item.appendChild(document.createTextNode(" "));
    item.appendChild(code);
    item.appendChild(document.createTextNode(" "));
    item.appendChild(insertButton(data.image_code));
    list.insertBefore(item, list.firstChild);
    count.textContent = String(list.children.length);
    panel.hidden = false;
  }

  function send(file) {
    var form = new FormData();
    form.append("image", file);
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), "X-Requested-With": "XMLHttpRequest" },
      body: form,
    }).then(function (response) {
      return response.json().then(
        function (data) {
          return { ok: response.ok && !!data.image_code, data: data };
        },
        function () {
          // Not JSON: a login page after the session ended, or a proxy's error page.
          return { ok: false, data: { image: ["The upload failed (HTTP " + response.status + ")."] } };
        }
      );
    });
  }

  function uploadAll(files) {
    var problems = [];
    var inserted = 0;
    var chain = Promise.resolve();
    files.forEach(function (file) {
      chain = chain.then(function () {
        say("Uploading " + file.name + "…");
        return send(file)
          .then(function (result) {
            if (result.ok) {
              insertAt((inserted ? "\n" : "") + result.data.image_code);
              inserted += 1;
              listed(result.data);
            } else {
              problems.push(file.name + ": " + refusal(result.data));
            }
          })
          .catch(function () {
            problems.push(file.name + ": the upload failed (offline?).");
          });
      });
    });
    return chain.then(function () {
      if (problems.length) say(problems.join(" "));
      else say(inserted === 1 ? "Image inserted." : inserted + " images inserted.");
    });
  }

  Array.prototype.forEach.call(list.querySelectorAll(".image-upload-item"), function (item) {
    item.appendChild(document.createTextNode(" "));
    item.appendChild(insertButton(item.getAttribute("data-markdown")));
  });

  button.addEventListener("click", function () {
    remember();
    input.click();
  });
  input.addEventListener("change", function () {
    var files = Array.prototype.slice.call(input.files || []);
    input.value = "";
    if (files.length) uploadAll(files);
  });
  controls.hidden = false;

  // markdownx's own drag-and-drop and paste: it inserts the Markdown itself, but fires no
  // input event (so autosave would not notice) and writes "Invalid response" on a refusal.
  var widget = body.closest(".markdownx");
  if (!widget) return;
  widget.addEventListener("markdownx.fileUploadEnd", function (event) {
    listed(event.detail && event.detail[0]);
    say("Image inserted.");
    changed();
  });
  function failed(event) {
    var data = event.detail && event.detail[0];
    say(refusal(typeof data === "object" ? data : null));
    // markdownx writes its marker right after this event, in the same task.
    setTimeout(function () {
      var end = body.selectionEnd;
      var start = end - MARKDOWNX_FAILURE.length;
      if (start >= 0 && body.value.slice(start, end) === MARKDOWNX_FAILURE) {
        body.setRangeText("", start, end, "end");
        changed();
      }
    }, 0);
  }
  widget.addEventListener("markdownx.fileUploadError", failed);
  widget.addEventListener("fileUploadError", failed); // its network-error path omits the prefix
})();
