// Autocomplete for the editor's comma-separated fields (tags, authors, bibliographies).
// A <datalist> completes a whole value, so each field gets its own list whose options are
// "what is typed up to the last comma" + each known name that fits the last item and is not
// chosen yet. Without JavaScript the fields are plain text and the server validates them.
(function () {
  "use strict";
  var MAX_OPTIONS = 50;
  var fields = document.querySelectorAll("form.editor-form input[list]");
  Array.prototype.forEach.call(fields, function (input) {
    var shared = document.getElementById(input.getAttribute("list"));
    if (!shared) return;
    var known = Array.prototype.map.call(shared.options, function (option) {
      return { value: option.value, label: option.label && option.label !== option.value ? option.label : "" };
    });
    var own = document.createElement("datalist");
    own.id = input.id + "-completions";
    input.parentNode.appendChild(own);
    input.setAttribute("list", own.id);

    function update() {
      var text = input.value;
      var cut = text.lastIndexOf(",");
      var head = cut === -1 ? "" : text.slice(0, cut + 1) + " ";
      var last = text.slice(cut + 1).trim().replace(/^@/, "").toLowerCase();
      var chosen = {};
      text.slice(0, cut + 1).split(",").forEach(function (item) {
        chosen[item.trim().replace(/^@/, "").toLowerCase()] = true;
      });
      own.textContent = "";
      var count = 0;
      for (var i = 0; i < known.length && count < MAX_OPTIONS; i++) {
        var item = known[i];
        var value = item.value.toLowerCase();
        if (chosen[value]) continue;
        if (last && value.indexOf(last) === -1 && item.label.toLowerCase().indexOf(last) === -1) continue;
        var option = document.createElement("option");
        option.value = head + item.value;
        if (item.label) option.label = item.label;
        own.appendChild(option);
        count++;
      }
    }
    input.addEventListener("input", update);
    input.addEventListener("focus", update);
    update();
  });
})();
