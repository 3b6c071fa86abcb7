// Draws every plotly figure embedded on the page as <script type="application/json" id="..."> next to a
// <div data-figure="id">. Loaded only on pages that show charts (with the vendored plotly.js before it).
(function () {
  "use strict";
  function draw() {
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.dataset.figure);
      if (!source || !window.Plotly) { return; }
      var figure = JSON.parse(source.textContent);
      window.Plotly.newPlot(el, figure.data, figure.layout, {
        responsive: true, displaylogo: false
      }).then(function () { el.classList.add("drawn"); });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
