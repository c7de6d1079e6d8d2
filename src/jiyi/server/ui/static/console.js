// jiyi console: show what went wrong with a form (htmx leaves error answers unswapped), nothing else.
(function () {
  "use strict";
  function flash(text) {
    var box = document.getElementById("flash");
    if (!box) { return; }
    box.textContent = text;
    box.hidden = !text;
  }
  document.addEventListener("htmx:beforeRequest", function () { flash(""); });
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    flash(xhr.responseText || (xhr.status + " " + xhr.statusText));
  });
  document.addEventListener("htmx:sendError", function () {
    var box = document.getElementById("flash");
    flash(box ? box.getAttribute("data-unreachable") : "unreachable");
  });
})();
