// The capacity page's heat map is one Tab stop (a roving tabindex): the arrow keys move
// to the next or previous cell (up and down by a row of the wrapped map), Home and End
// to the first and last; the cell reached takes the Tab stop.
(function () {
  "use strict";
  var map = document.querySelector(".heatmap");
  if (!map) { return; }
  var cells = Array.prototype.slice.call(map.querySelectorAll("a"));
  if (!cells.length) { return; }

  function perRow() {
    var top = cells[0].offsetTop, n = 0;
    while (n < cells.length && cells[n].offsetTop === top) { n += 1; }
    return Math.max(n, 1);
  }

  function go(from, to) {
    to = Math.max(0, Math.min(cells.length - 1, to));
    cells[from].tabIndex = -1;
    cells[to].tabIndex = 0;
    cells[to].focus();
  }

  map.addEventListener("keydown", function (event) {
    var at = cells.indexOf(document.activeElement);
    if (at < 0) { return; }
    var moves = {ArrowRight: 1, ArrowLeft: -1, ArrowDown: perRow(), ArrowUp: -perRow()};
    if (event.key in moves) {
      go(at, at + moves[event.key]);
    } else if (event.key === "Home") {
      go(at, 0);
    } else if (event.key === "End") {
      go(at, cells.length - 1);
    } else {
      return;
    }
    event.preventDefault();
  });
}());
