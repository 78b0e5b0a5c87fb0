// Images in the editor: "Insert image", and images dropped on or pasted into
// the text, are posted to the note's upload endpoint (the file in `image`, the Markdown back
// in `image_code`) and the Markdown is inserted where the cursor (or
// the drop) was, one undoable step per image, through SciDraftBody (editor-body.js). The
// note's images are listed with their Markdown. Messages and list items are built with
// textContent only: file names come from the uploader.
(function () {
  "use strict";
  var root = document.querySelector(".image-upload[data-upload-url]");
  if (!root) return;
  var field = document.getElementById(root.getAttribute("data-upload-target"));
  if (!field || !window.SciDraftBody) return;
  var body = window.SciDraftBody.of(field);
  var url = root.getAttribute("data-upload-url");
  var controls = root.querySelector(".image-upload-controls");
  var button = root.querySelector(".image-upload-button");
  var input = root.querySelector(".image-upload-file");
  var status = root.querySelector(".image-upload-status");
  var panel = root.querySelector(".image-upload-panel");
  var list = root.querySelector(".image-upload-list");
  var count = root.querySelector(".image-upload-count");
  var TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
  var at = null; // where the next image goes: a drop's position, else the cursor

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    var field = document.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function say(text) {
    status.textContent = text;
  }

  // The endpoint answers {"image": ["message", …]} on refusal.
  function refusal(data) {
    if (data && data.image && data.image.join) return data.image.join(" ");
    return "The upload failed; try again.";
  }

  function insertAt(text) {
    body.insert(text, at === null ? undefined : { at: at });
    if (at !== null) at += text.length;
  }

  function insertButton(markdown) {
    var insert = document.createElement("button");
    insert.type = "button";
    insert.className = "editor-button image-upload-insert";
    insert.textContent = "Insert";
    insert.addEventListener("click", function () {
      at = null;
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
    at = null;
    input.click();
  });
  input.addEventListener("change", function () {
    var files = Array.prototype.slice.call(input.files || []);
    input.value = "";
    if (files.length) uploadAll(files);
  });
  controls.hidden = false;

  // Images dropped on or pasted into the text. Caught on the way down (capture), before the
  // editor would insert a dropped file's bytes as text.
  function images(transfer) {
    return Array.prototype.filter.call((transfer && transfer.files) || [], function (file) {
      return TYPES.indexOf(file.type) >= 0 || /^image\//.test(file.type);
    });
  }
  body.element.addEventListener(
    "drop",
    function (event) {
      var files = images(event.dataTransfer);
      if (!files.length) return;
      event.preventDefault();
      event.stopPropagation();
      var position = body.posAtCoords(event.clientX, event.clientY);
      at = typeof position === "number" ? position : null;
      uploadAll(files).then(function () {
        at = null;
      });
    },
    true
  );
  body.element.addEventListener(
    "dragover",
    function (event) {
      if (event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types || [], "Files") >= 0) {
        event.preventDefault();
      }
    },
    true
  );
  body.element.addEventListener(
    "paste",
    function (event) {
      var files = images(event.clipboardData);
      if (!files.length) return;
      event.preventDefault();
      event.stopPropagation();
      at = null;
      uploadAll(files);
    },
    true
  );
})();
