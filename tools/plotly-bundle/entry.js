'use strict';
// The trace types lmdk's figures use (dashboard/charts.py LITE_TRACES); scatter is in core.
var Plotly = require('plotly.js/lib/core');
Plotly.register([
    require('plotly.js/lib/bar'),
    require('plotly.js/lib/heatmap'),
    require('plotly.js/lib/scattergl'),
]);
module.exports = Plotly;
