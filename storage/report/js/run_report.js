/* Hearth's run report: the curves (dygraphs, every stored step), the step-time and memory
 * breakdowns (Chart.js). Each chart box records what it drew: data-points (step values plotted)
 * and data-epoch-points. */
(function () {
  'use strict';
  var H = window.HearthReport, d = H.data;
  var S = d.steps || {n: 0, step: []}, E = d.epochs || {step: []};
  var graphs = [];
  var syncing = false;

  // Rows of [step, step series..., epoch series...]: an epoch's values join the row of the step
  // it ended at, or get a row of their own.
  function rows(stepCols, epochCols) {
    var out = [], n = S.step.length, m = E.step.length, e = 0;
    function epochRow(k) {
      var row = [E.step[k]];
      stepCols.forEach(function () { row.push(null); });
      epochCols.forEach(function (c) { row.push(c[k]); });
      return row;
    }
    for (var i = 0; i < n; i++) {
      var x = S.step[i];
      while (e < m && E.step[e] < x) out.push(epochRow(e++));
      var row = [x];
      for (var a = 0; a < stepCols.length; a++) row.push(stepCols[a][i]);
      var joins = e < m && E.step[e] === x;
      for (var b = 0; b < epochCols.length; b++) row.push(joins ? epochCols[b][e] : null);
      if (joins) e += 1;
      out.push(row);
    }
    while (e < m) out.push(epochRow(e++));
    return out;
  }

  function countColumn(g, column) {
    var n = 0;
    for (var r = 0; r < g.numRows(); r++) {
      var v = g.getValue(r, column);
      if (v !== null && v !== undefined && !isNaN(v)) n += 1;
    }
    return n;
  }

  // Zooming or panning one chart moves the others to the same steps.
  function follow(source) {
    if (syncing) return;
    syncing = true;
    var range = source.xAxisRange();
    graphs.forEach(function (g) { if (g !== source) g.updateOptions({dateWindow: range}); });
    syncing = false;
  }

  function draw(key, ylabel, stepSeries, epochSeries, options) {
    var el = document.getElementById('chart-' + key);
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
      var data = rows(stepSeries.map(function (s) { return s.values; }), epochSeries.map(function (s) { return s.values; }));
      var opts = {
        labels: labels, colors: colors, series: series, xlabel: 'optimizer step', ylabel: ylabel,
        labelsDiv: document.getElementById('legend-' + key), legend: 'always', axes: {x: {labelsKMB: true}},
        connectSeparatedPoints: true, strokeWidth: 1.2, digitsAfterDecimal: 4, animatedZooms: false,
        axisLabelFontSize: 11, xLabelHeight: 14, yLabelWidth: 14,
        drawCallback: function (g, initial) { if (!initial) follow(g); }
      };
      for (var k in (options || {})) opts[k] = k === 'axes' ? {x: opts.axes.x, y: options.axes.y} : options[k];
      var g = new Dygraph(el, data, opts);
      graphs.push(g);
      el.setAttribute('data-points', String(stepSeries.length ? countColumn(g, 1) : 0));
      el.setAttribute('data-epoch-points', String(epochSeries.length ? countColumn(g, stepSeries.length + 1) : 0));
      el.setAttribute('data-rows', String(g.numRows()));
    });
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
        labels: [m.device + ', peak ' + H.bytes(m.peak_bytes)],
        datasets: m.parts.map(function (p) {
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
