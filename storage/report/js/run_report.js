/* Hearth's run report: the curves (dygraphs) and the step-time and memory breakdowns (Chart.js).
 * The page holds every stored step. A chart draws at most about two points per pixel column of
 * its width: past that, each column keeps its lowest and highest value (what a full drawing would
 * show); zooming in redraws the window from the stored steps, down to every single one. The page
 * opens zoomed when its address ends in #steps=FROM-TO. Each chart box records what it holds and
 * draws: data-points (stored step values), data-drawn (step values drawn now) and
 * data-epoch-points (epoch values drawn). */
(function () {
  'use strict';
  var H = window.HearthReport, d = H.data;
  var S = d.steps || {n: 0, step: []}, E = d.epochs || {step: []};
  var charts = [];
  var syncing = false, pending = null, shownRange = null;

  function finite(v) { return v !== null && v !== undefined && !isNaN(v); }
  function firstIndex(after) {   // the first step index whose step passes `after` (a test)
    var lo = 0, hi = S.step.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (after(S.step[mid])) hi = mid; else lo = mid + 1; }
    return lo;
  }

  // The step indices to draw in [from, to) for `columns`: all of them when they fit `budget`,
  // else each bucket's lowest and highest value of every column, and the first and last index.
  function indicesFor(columns, from, to, budget) {
    var n = to - from, out = [], i, c;
    if (n <= budget) { for (i = from; i < to; i++) out.push(i); return out; }
    var buckets = Math.max(1, Math.floor(budget / (2 * columns.length)));
    var keep = new Uint8Array(n);
    keep[0] = 1;
    keep[n - 1] = 1;
    for (var b = 0; b < buckets; b++) {
      var start = from + Math.floor(b * n / buckets), end = from + Math.floor((b + 1) * n / buckets);
      for (c = 0; c < columns.length; c++) {
        var col = columns[c], lo = -1, hi = -1;
        for (i = start; i < end; i++) {
          var v = col[i];
          if (!finite(v)) continue;
          if (lo < 0 || v < col[lo]) lo = i;
          if (hi < 0 || v > col[hi]) hi = i;
        }
        if (lo >= 0) { keep[lo - from] = 1; keep[hi - from] = 1; }
      }
    }
    for (i = 0; i < n; i++) if (keep[i]) out.push(from + i);
    return out;
  }

  // Rows of [step, step series..., epoch series...] for the steps in `range` (null: all): an
  // epoch's values join the row of the step it ended at, or get a row of their own.
  function rows(chart, range) {
    var stepCols = chart.stepCols, epochCols = chart.epochCols;
    var from = 0, to = S.step.length, m = E.step.length, e = 0, endStep = Infinity;
    if (range) {
      // One step beyond each edge, so that the lines run to the chart's sides.
      from = Math.max(0, firstIndex(function (x) { return x >= range[0]; }) - 1);
      to = Math.min(S.step.length, firstIndex(function (x) { return x > range[1]; }) + 1);
      while (e < m && S.step.length && E.step[e] < S.step[from]) e++;
      endStep = to < S.step.length ? S.step[to] : Infinity;
    }
    var keep = indicesFor(stepCols, from, to, chart.budget);
    var out = [], drawn = 0, epochs = 0;
    function epochRow(k) {
      var row = [E.step[k]];
      stepCols.forEach(function () { row.push(null); });
      epochCols.forEach(function (col) { row.push(col[k]); });
      epochs += 1;
      return row;
    }
    keep.forEach(function (i) {
      var x = S.step[i];
      while (e < m && E.step[e] < x) out.push(epochRow(e++));
      var row = [x];
      for (var a = 0; a < stepCols.length; a++) row.push(stepCols[a][i]);
      var joins = e < m && E.step[e] === x;
      for (var b = 0; b < epochCols.length; b++) row.push(joins ? epochCols[b][e] : null);
      if (joins) { e += 1; epochs += 1; }
      if (stepCols.length && finite(stepCols[0][i])) drawn += 1;
      out.push(row);
    });
    while (e < m && E.step[e] < endStep) out.push(epochRow(e++));
    chart.el.setAttribute('data-drawn', String(drawn));
    chart.el.setAttribute('data-epoch-points', String(epochCols.length ? epochs : 0));
    return out;
  }

  // After a zoom or pan of any chart (and its reset), every chart shows the same steps, drawn
  // from the stored ones at the new resolution. Mouse moves while dragging are coalesced.
  function rangeChanged(g) {
    if (syncing) return;
    var r = g.xAxisRange();
    var full = S.step.length && r[0] <= S.step[0] && r[1] >= S.step[S.step.length - 1];
    var range = full ? null : [r[0], r[1]];
    if (JSON.stringify(range) === JSON.stringify(shownRange)) return;
    clearTimeout(pending);
    pending = setTimeout(function () { show(range); }, 60);
  }
  function show(range) {
    shownRange = range;
    syncing = true;
    charts.forEach(function (c) { c.g.updateOptions({file: rows(c, range), dateWindow: range}); });
    syncing = false;
  }

  function draw(key, ylabel, stepSeries, epochSeries, options) {
    var el = document.getElementById('chart-' + key), started = performance.now();
    H.guard(el, function () {
      stepSeries = stepSeries.filter(function (s) { return s.values && s.values.length; });
      epochSeries = epochSeries.filter(function (s) { return s.values && s.values.length; });
      if (!stepSeries.length && !epochSeries.length) {
        H.empty(el, 'No logged steps or epochs to draw.');
        return;
      }
      var labels = ['step'], colors = [], series = {};
      stepSeries.forEach(function (s) { labels.push(s.label); colors.push(s.color); });
      epochSeries.forEach(function (s) {
        labels.push(s.label);
        colors.push(s.color);
        series[s.label] = {drawPoints: true, pointSize: 3, strokeWidth: 2};
      });
      var chart = {el: el, stepCols: stepSeries.map(function (s) { return s.values; }),
                   epochCols: epochSeries.map(function (s) { return s.values; }),
                   budget: Math.max(400, 2 * (el.clientWidth || 1000))};
      var opts = {
        labels: labels, colors: colors, series: series, xlabel: 'optimizer step', ylabel: ylabel,
        labelsDiv: document.getElementById('legend-' + key), legend: 'always', axes: {x: {labelsKMB: true}},
        connectSeparatedPoints: true, strokeWidth: 1.2, digitsAfterDecimal: 4, animatedZooms: false,
        axisLabelFontSize: 11, xLabelHeight: 14, yLabelWidth: 14,
        drawCallback: function (g, initial) { if (!initial) rangeChanged(g); }
      };
      for (var k in (options || {})) opts[k] = k === 'axes' ? {x: opts.axes.x, y: options.axes.y} : options[k];
      chart.g = new Dygraph(el, rows(chart, null), opts);
      charts.push(chart);
      var stored = 0;
      if (stepSeries.length) stepSeries[0].values.forEach(function (v) { if (finite(v)) stored += 1; });
      el.setAttribute('data-points', String(stored));
    });
    el.setAttribute('data-draw-ms', (performance.now() - started).toFixed(1));
  }

  var blue = '#4e79a7', orange = '#f28e2b', red = '#e15759', green = '#59a14f';
  var val = E.has_val;
  draw('loss', 'loss', [{label: 'train loss', values: S.loss, color: blue}],
       [{label: 'val loss (epoch)', values: val ? E.val_loss : null, color: orange}],
       {showRangeSelector: S.n > 1, rangeSelectorHeight: 28});
  draw('accuracy', 'accuracy', [{label: 'train acc', values: S.acc, color: blue}],
       [{label: 'val acc (epoch)', values: val ? E.val_acc : null, color: orange}]);
  draw('lr', 'learning rate', [{label: 'lr', values: S.lr, color: green}], [],
       {digitsAfterDecimal: 6, axes: {y: {axisLabelWidth: 66}}});
  draw('throughput', 'samples/s', [{label: 'samples/s', values: S.sps, color: blue}], []);
  draw('steptime', 'ms', [{label: 'step', values: S.step_ms, color: blue}, {label: 'data wait', values: S.wait_ms, color: red}], []);

  // A link may open the page zoomed: #steps=FROM-TO.
  var zoom = /#steps=(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(location.hash);
  if (zoom && charts.length) show([Number(zoom[1]), Number(zoom[2])]);

  H.chartDefaults();
  var breakdownBox = document.getElementById('breakdown-box');
  H.guard(breakdownBox, function () {
    var b = d.breakdown;
    if (!b || !window.Chart) { H.empty(breakdownBox, 'No step-time breakdown was stored.'); return; }
    breakdownBox.style.height = (70 + 30 * b.rows.length) + 'px';
    new Chart(document.getElementById('chart-breakdown'), {
      type: 'bar',
      data: {
        labels: b.rows.map(function (r) { return r.label; }),
        datasets: b.parts.map(function (p, i) {
          return {label: p.label, backgroundColor: H.partColors[p.key] || '#999',
                  data: b.rows.map(function (r) { return r.values[i]; })};
        }).filter(function (ds) {   // a part this run never had (communication wait on one device): no legend entry
          return ds.data.some(function (v) { return v > 0; });
        })
      },
      options: {
        indexAxis: 'y',
        scales: {x: {stacked: true, title: {display: true, text: 'ms per micro-batch'}}, y: {stacked: true, ticks: {autoSkip: false}}},
        plugins: {legend: {position: 'bottom', labels: {boxWidth: 12}},
                  tooltip: {callbacks: {label: function (c) { return c.dataset.label + ': ' + c.parsed.x.toFixed(2) + ' ms'; }}}}
      }
    });
    breakdownBox.setAttribute('data-bars', String(b.rows.length));
  });
  var memoryBox = document.getElementById('memory-box');
  H.guard(memoryBox, function () {
    var m = d.memory;
    if (!m || !window.Chart) { H.empty(memoryBox, 'No memory breakdown was stored.'); return; }
    memoryBox.style.height = '150px';
    new Chart(document.getElementById('chart-memory'), {
      type: 'bar',
      data: {
        labels: [m.device + ', peak ' + H.bytes(m.peak_bytes) +
                 (m.offloaded_bytes > 0 ? ' (+ ' + H.bytes(m.offloaded_bytes) + ' optimizer offloaded to host)' : '')],
        datasets: m.parts.filter(function (p) { return p.bytes > 0; }).map(function (p) {
          return {label: p.label, data: [p.bytes / 1048576],
                  backgroundColor: H.partColors[p.key === 'other' ? 'other_memory' : p.key] || '#999'};
        })
      },
      options: {
        indexAxis: 'y',
        scales: {x: {stacked: true, title: {display: true, text: 'MiB'}}, y: {stacked: true}},
        plugins: {legend: {position: 'bottom', labels: {boxWidth: 12}},
                  tooltip: {callbacks: {label: function (c) { return c.dataset.label + ': ' + H.bytes(c.parsed.x * 1048576); }}}}
      }
    });
    memoryBox.setAttribute('data-bars', '1');
  });
  H.done();
})();
