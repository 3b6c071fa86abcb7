// Small behaviour of every page (ours, no framework): the phone navigation's menu button, and on the offers page the
// filters panel that phones open on demand, focus and scrolling after htmx swaps the results.
(function () {
  "use strict";
  var phone = window.matchMedia("(max-width: 760px)");
  var tableLabel = (document.currentScript && document.currentScript.dataset.tableLabel) || "table";

  function navigation() {
    var button = document.querySelector(".nav-toggle");
    var nav = document.getElementById("site-nav");
    if (!button || !nav) { return; }
    button.hidden = false;
    document.documentElement.classList.add("nav-collapsible");
    button.addEventListener("click", function () {
      var open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", String(open));
      nav.classList.toggle("open", open);
    });
  }

  function filtersPanel() {
    // Phones see the results first: the panel starts closed there (its summary says how many filters are set).
    var panel = document.getElementById("filters-panel");
    if (!panel) { return; }
    // ... unless a filter is wrong: then it opens on the field to correct.
    function fit() { panel.open = !phone.matches || Boolean(panel.querySelector(".invalid")); }
    fit();
    phone.addEventListener("change", fit);
  }

  function introduction() {
    // Phones with filters set: the page's introduction folds to its summary line (the filters and the first offers
    // take the first screen); it opens with a tap, and stays open on wider screens and without filters.
    var about = document.getElementById("intro");
    if (!about) { return; }
    function fit() { about.open = !(phone.matches && about.hasAttribute("data-filtered")); }
    fit();
    phone.addEventListener("change", fit);
  }

  // What the user activated before a swap of #results: a sort link (found again by its column), or another link
  // of the results (pager, filter chip), whose place is taken by the results heading.
  var activated = null;

  function resultsSwaps() {
    var results = document.getElementById("results");
    if (!results) { return; }
    document.body.addEventListener("htmx:beforeRequest", function (event) {
      var el = event.detail.elt;
      if (!el || !results.contains(el)) { activated = null; return; }
      var th = el.closest("thead th");
      activated = th ? {column: Array.prototype.indexOf.call(th.parentNode.children, th)} : {heading: true};
    });
    document.body.addEventListener("htmx:afterSettle", function (event) {
      if (event.detail.target !== results || !activated) { return; }
      var target = null;
      if (activated.column !== undefined) {
        var th = results.querySelectorAll("table.offers thead th")[activated.column];
        target = th && th.querySelector("a");
      }
      target = target || document.getElementById("results-title");
      activated = null;
      var top = document.getElementById("results-title").getBoundingClientRect().top;
      if (top < 0 || top > window.innerHeight) {
        document.getElementById("results-title").scrollIntoView({block: "start"});
      }
      target.focus({preventScroll: true});
    });
  }

  // A table wider than the screen scrolls sideways inside its wrapper: make that wrapper a named, focusable region
  // so keyboard users can scroll it too (arrow keys), as only such wrappers need a Tab stop.
  function scrollableTables() {
    document.querySelectorAll(".table-wrap").forEach(function (wrap) {
      var scrolls = wrap.scrollWidth > wrap.clientWidth + 1 || wrap.scrollHeight > wrap.clientHeight + 1;
      if (scrolls && !wrap.hasAttribute("tabindex")) {
        var table = wrap.querySelector("table");
        var caption = table && table.caption ? table.caption.textContent : "";
        var heading = wrap.closest("section") ? wrap.closest("section").querySelector("h2") : null;
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        var name = (caption || (heading && heading.textContent) || document.title).trim();
        wrap.setAttribute("aria-label", name + " (" + tableLabel + ")");
      } else if (!scrolls && wrap.getAttribute("tabindex") === "0") {
        ["tabindex", "role", "aria-label"].forEach(function (name) { wrap.removeAttribute(name); });
      }
    });
  }

  // The offers table's "Columns" chooser: unchecked columns are hidden (a class per column on the results area,
  // outside what htmx swaps) and remembered in this browser.
  var COLUMNS_KEY = "offers-hidden-columns";

  function columnChooser() {
    var chooser = document.getElementById("columns");
    var area = chooser && chooser.closest(".results-area");
    if (!area) { return; }
    var hidden = [];
    try { hidden = JSON.parse(window.localStorage.getItem(COLUMNS_KEY) || "[]"); } catch (error) { hidden = []; }
    if (!Array.isArray(hidden)) { hidden = []; }
    var boxes = chooser.querySelectorAll("input[name=column]");
    function apply() {
      boxes.forEach(function (box) { area.classList.toggle("hide-" + box.value, !box.checked); });
      scrollableTables();
    }
    boxes.forEach(function (box) {
      box.checked = hidden.indexOf(box.value) < 0;
      box.addEventListener("change", function () {
        hidden = Array.prototype.filter.call(boxes, function (b) { return !b.checked; }).map(function (b) { return b.value; });
        try { window.localStorage.setItem(COLUMNS_KEY, JSON.stringify(hidden)); } catch (error) { /* not kept */ }
        apply();
      });
    });
    chooser.hidden = false;
    apply();
  }

  // Matrix cells (details.cell): one open at a time (popovers() closes them on Escape or a tap elsewhere); near the
  // right edge of the table's wrapper its panel moves left to stay inside.
  function cellDisclosures() {
    var cells = document.querySelectorAll("details.cell");
    if (!cells.length) { return; }
    cells.forEach(function (cell) {
      cell.addEventListener("toggle", function () {
        if (!cell.open) { return; }
        cells.forEach(function (other) { if (other !== cell && other.open) { other.open = false; } });
        var pop = cell.querySelector(".cell-pop");
        if (!pop) { return; }
        // Shift the panel left just enough to end inside the table's wrapper, but never past its left edge.
        pop.style.left = "";
        var wrap = (cell.closest(".table-wrap") || document.documentElement).getBoundingClientRect();
        var box = pop.getBoundingClientRect();
        var over = box.right - wrap.right;
        if (over > 0) { pop.style.left = -Math.min(over, Math.max(0, box.left - wrap.left)) + "px"; }
      });
    });
  }

  // Popovers (a matrix cell's panel, an offer row's Kubernetes answers): Escape closes the open one and gives the
  // focus back to its summary; a tap or click elsewhere closes it.
  var POPOVERS = "details.cell[open], details.k8s[open]:not(.full)";

  function popovers() {
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape") { return; }
      var open = document.querySelectorAll(POPOVERS);
      if (!open.length) { return; }
      var focused = document.activeElement;
      open.forEach(function (details) {
        var hadFocus = details.contains(focused);
        details.open = false;
        if (hadFocus || open.length === 1) { details.querySelector("summary").focus(); }
      });
    });
    document.addEventListener("click", function (event) {
      document.querySelectorAll(POPOVERS).forEach(function (details) {
        if (!details.contains(event.target)) { details.open = false; }
      });
    });
  }

  // The advisor: its answer comes first, so the focus moves to it (screen readers hear the heading, keyboards start
  // there); "Change the inputs" opens the form's disclosure rather than jumping to a closed one.
  function advisorResult() {
    var result = document.getElementById("advice-result");
    if (result) { result.focus({preventScroll: true}); }
    document.querySelectorAll('a[href="#advisor-inputs"]').forEach(function (link) {
      link.addEventListener("click", function () {
        var inputs = document.getElementById("advisor-inputs");
        if (inputs) { inputs.open = true; }
      });
    });
  }

  function start() {
    navigation(); filtersPanel(); introduction(); resultsSwaps(); scrollableTables(); columnChooser(); cellDisclosures();
    popovers(); advisorResult();
    window.addEventListener("resize", scrollableTables);
    document.body.addEventListener("htmx:afterSettle", scrollableTables);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
