// The admin's note body (notes.admin.AdminNotePreviewWidget): a short pause after typing, the
// text is posted to SciDraft's own preview endpoint (behind login and permissions) and the
// sanitised HTML it answers is shown under the textarea. Images dropped on or pasted into the
// textarea are posted to the note's upload endpoint (the file in `image`, the Markdown back in
// `image_code`) and their Markdown is inserted where the cursor was. A static file: the site's
// Content Security Policy allows no inline script.
(function () {
  "use strict";
  var TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function post(url, form) {
    return fetch(url, {
      method: "POST",
      body: form,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), "X-Requested-With": "XMLHttpRequest" },
    });
  }

  function setUp(field) {
    var preview = document.getElementById(field.id + "_preview");
    var status = document.getElementById(field.id + "_upload_status");
    var previewUrl = field.getAttribute("data-preview-url");
    var uploadUrl = field.getAttribute("data-upload-url");
    var delay = parseInt(field.getAttribute("data-preview-delay"), 10) || 400;
    var timer = null;
    var shown = null; // the text whose preview is shown or on its way
    var latest = 0; // answers that arrive after a newer request's are dropped

    function refresh() {
      timer = null;
      var text = field.value;
      if (text === shown) return;
      shown = text;
      var request = ++latest;
      var form = new FormData();
      form.append("content", text);
      post(previewUrl, form)
        .then(function (response) {
          return response.text();
        })
        .then(function (html) {
          // The endpoint's own output: rendered and sanitised by scidraft.markup, problems
          // escaped; a refusal (too many previews) is its own escaped message.
          if (request === latest) preview.innerHTML = html;
        })
        .catch(function () {
          if (request !== latest) return;
          shown = null;
          preview.textContent = "The preview could not be loaded; it is tried again as you type.";
        });
    }

    function schedule() {
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(refresh, delay);
    }

    function insert(text) {
      var start = field.selectionStart;
      field.setRangeText(text, start, field.selectionEnd, "end");
      field.dispatchEvent(new Event("input", { bubbles: true }));
    }

    function upload(file) {
      var form = new FormData();
      form.append("image", file);
      status.textContent = "Uploading " + file.name + "…";
      post(uploadUrl, form)
        .then(function (response) {
          return response.json();
        })
        .then(function (data) {
          if (data && data.image_code) {
            insert(data.image_code + "\n");
            status.textContent = "";
          } else {
            status.textContent =
              data && data.image && data.image.join ? data.image.join(" ") : "The upload failed.";
          }
        })
        .catch(function () {
          status.textContent = "The upload failed; try again.";
        });
    }

    function images(list) {
      return Array.prototype.filter.call(list || [], function (file) {
        return TYPES.indexOf(file.type) >= 0;
      });
    }

    function take(event, files) {
      if (!uploadUrl || !files.length) return;
      event.preventDefault();
      files.forEach(upload);
    }

    field.addEventListener("input", schedule);
    field.addEventListener("dragover", function (event) {
      if (uploadUrl) event.preventDefault();
    });
    field.addEventListener("drop", function (event) {
      take(event, images(event.dataTransfer && event.dataTransfer.files));
    });
    field.addEventListener("paste", function (event) {
      take(event, images(event.clipboardData && event.clipboardData.files));
    });
    refresh();
  }

  function start() {
    document.querySelectorAll("textarea[data-preview-url]").forEach(setUp);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
