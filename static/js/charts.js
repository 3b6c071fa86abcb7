// Draws every plotly figure embedded on the page as <script type="application/json" id="..."> next to a
// <div data-figure="id">. plotly.js (our core + box bundle, 1.1 MB, 370 KB gzip) is fetched when the first chart
// is within 300 px of the viewport (wider screens preload it with the page: templates/_charts_head.html), so the
// page is usable at once on a slow link; Chinese pages load plotly's zh-CN locale after it.
(function () {
  "use strict";
  var me = document.currentScript;
  var loading = null;

  function script(src) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement("script");
      el.src = src;
      el.onload = resolve;
      el.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(el);
    });
  }

  function plotly() {
    if (!loading) {
      loading = script(me.dataset.plotly).then(function () {
        return me.dataset.plotlyLocale ? script(me.dataset.plotlyLocale) : null;
      });
    }
    return loading;
  }

  // On a phone the box plots' row names ("NVIDIA H100 80GB (form factor not stated)") took most of the width and
  // left the boxes a sliver: there the axis shows short names (no vendor, no qualifier); the hover and the table
  // below keep the full ones.
  function narrow(el, figure) {
    if (el.clientWidth >= 600) { return; }
    var names = [];
    figure.data.forEach(function (trace) {
      if (trace.type === "box" && trace.orientation === "h" && names.indexOf(trace.name) < 0) { names.push(trace.name); }
    });
    if (!names.length) { return; }
    figure.layout.yaxis = Object.assign({}, figure.layout.yaxis, {
      tickmode: "array", tickvals: names, tickfont: {size: 10},
      ticktext: names.map(function (name) {
        var short = name.replace(/^(NVIDIA|AMD|Intel) /, "").replace(/\s*[(\uff08].*$/, "");
        return short.length > 18 ? short.slice(0, 17) + "\u2026" : short;
      })
    });
  }

  function draw(el) {
    var source = document.getElementById(el.dataset.figure);
    if (!source) { return; }
    plotly().then(function () {
      var figure = JSON.parse(source.textContent);
      narrow(el, figure);
      var config = {responsive: true, displaylogo: false};
      if (me.dataset.locale) { config.locale = me.dataset.locale; }
      return window.Plotly.newPlot(el, figure.data, figure.layout, config);
    }).then(function () { el.classList.add("drawn"); });
  }

  function start() {
    var charts = document.querySelectorAll("[data-figure]");
    if (!("IntersectionObserver" in window)) { charts.forEach(draw); return; }
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) { observer.unobserve(entry.target); draw(entry.target); }
      });
    }, {rootMargin: "300px 0px"});
    charts.forEach(function (el) { observer.observe(el); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
