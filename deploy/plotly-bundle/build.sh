#!/bin/sh
# Rebuilds static/vendor/plotly-box-3.1.1.min.js: plotly.js 3.1.1's core (scatter, axes, hover, modebar) plus box
# traces, the only ones the site's figures use (web/charts.py). Same esbuild options as plotly.js's own
# esbuild-config.js, minus its GL shader and CSS plugins (no GL trace is included; the CSS is vendored as
# plotly-3.1.1.css) and its calendars component (no non-Gregorian dates). Needs node and the npm registry; run by
# hand when updating plotly, never by the site or the tests.
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --ignore-scripts
out=../../static/vendor/plotly-box-3.1.1.min.js
./node_modules/.bin/esbuild entry.js --bundle --minify --format=iife --global-name=Plotly --target=es2016 \
  --define:global=window --define:define.amd=false --alias:stream=stream-browserify --log-level=warning \
  --banner:js="/* plotly.js (core + box, custom bundle) v3.1.1 | Copyright 2012-2025, Plotly, Inc. | MIT license */" \
  --outfile="$out"
rm -f "${out%.js}.css"  # maplibre's stylesheet, required by plotly's registry, unused here
ls -l "$out"
