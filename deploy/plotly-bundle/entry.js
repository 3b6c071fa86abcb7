// plotly.js 3.1.1 with only what this site draws: the core (scatter traces, axes, hover, modebar) plus box traces.
var Plotly = require('plotly.js/lib/core');
Plotly.register([require('plotly.js/lib/box')]);
module.exports = Plotly;
