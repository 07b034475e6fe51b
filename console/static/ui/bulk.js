// The bulk edit list: "Tick all on this page" / "Tick none" (the page works without them:
// "every matching provider" chooses across pages).
(function () {
  "use strict";
  var form = document.getElementById("change-form");
  if (!form) { return; }
  var buttons = form.querySelector(".tick-buttons");
  buttons.hidden = false;
  buttons.addEventListener("click", function (event) {
    var which = event.target.getAttribute("data-tick");
    if (!which) { return; }
    form.querySelectorAll("input[name=provider]").forEach(function (box) {
      box.checked = which === "all";
    });
    form.querySelector("input[name=scope][value=ticked]").checked = true;
  });
}());
