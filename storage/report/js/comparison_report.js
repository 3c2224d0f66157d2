/* Hearth's comparison report: the speedup and accuracy bars, the overlaid curves with a run list
 * that scales to hundreds of runs, and each run's step-time and memory breakdown (Chart.js).
 * Each chart box records what it drew (data-bars, data-points, data-curves). */
(function () {
  'use strict';
  var H = window.HearthReport, d = H.data;
  var runs = d.runs || [], n = runs.length;
  H.chartDefaults();
  var colors = runs.map(function (r, i) { return H.color(i, n); });

  // Writes each bar's value at its end (Chart.js plugin API).
  var barValues = {
    id: 'barValues',
    afterDatasetsDraw: function (chart, args, options) {
      var ctx = chart.ctx;
      ctx.save();
      ctx.font = '11px ' + Chart.defaults.font.family;
      ctx.fillStyle = '#1c2230';
      ctx.textBaseline = 'middle';
      chart.data.datasets.forEach(function (ds, k) {
        chart.getDatasetMeta(k).data.forEach(function (bar, i) {
          var v = ds.data[i];
          if (v === null || v === undefined) return;
          ctx.fillText(options.format(v), bar.x + 4, bar.y);
        });
      });
      ctx.restore();
    }
  };

  function bars(boxId, canvasId, values, label, format, highlight) {
    var box = document.getElementById(boxId);
    H.guard(box, function () {
      var max = Math.max.apply(null, values.filter(function (v) { return v !== null; }).concat([0]));
      new Chart(document.getElementById(canvasId), {
        type: 'bar',
        data: {
          labels: runs.map(function (r) { return r.label; }),
          datasets: [{label: label, data: values,
                      backgroundColor: runs.map(function (r, i) { return i === highlight ? '#bab0ac' : colors[i]; })}]
        },
        options: {
          indexAxis: 'y',
          layout: {padding: {right: 56}},
          scales: {x: {beginAtZero: true, suggestedMax: max * 1.05},
                   y: {ticks: {autoSkip: false, font: {size: n > 40 ? 9 : 11}}}},
          plugins: {legend: {display: false}, barValues: {format: format},
                    tooltip: {callbacks: {label: function (c) { return label + ': ' + format(c.parsed.x); }}}}
        },
        plugins: [barValues]
      });
      box.setAttribute('data-bars', String(values.filter(function (v) { return v !== null; }).length));
      box.setAttribute('data-values', values.map(function (v) { return v === null ? '' : v.toFixed(4); }).join(' '));
    });
  }
  bars('speedup-box', 'chart-speedup', runs.map(function (r) { return r.speedup; }), 'speedup',
       function (v) { return v.toFixed(2) + '×'; }, d.baseline);
  bars('accuracy-box', 'chart-accuracy', runs.map(function (r) { return r.accuracy === null ? null : 100 * r.accuracy; }),
       'accuracy', function (v) { return v.toFixed(2) + ' %'; }, -1);

  // Curves: one dataset per run; the metric and the x axis are chosen above the chart.
  var curveBox = document.getElementById('curves-box');
  var metricSel = document.getElementById('curve-metric'), xSel = document.getElementById('curve-x');
  var logBox = document.getElementById('curve-log'), filter = document.getElementById('curve-filter');
  var legend = document.getElementById('curve-legend');
  var chart = null, zoom = null;
  function points(r, metric, x) {
    var fromEpochs = metric === 'val_loss' || metric === 'val_acc';
    var src = fromEpochs ? r.epochs : r.steps, ys = src[metric], xs = src[x];
    var out = [];
    for (var i = 0; i < ys.length; i++) if (ys[i] !== null && xs[i] !== null) out.push({x: xs[i], y: ys[i]});
    return out;
  }
  function highlight(index) {
    if (!chart) return;
    chart.data.datasets.forEach(function (ds, i) {
      ds.borderColor = index < 0 || i === index ? colors[i] : 'rgba(160,166,178,0.25)';
      ds.borderWidth = i === index ? 3 : (i === d.baseline ? 2.2 : 1.4);
      ds.order = i === index ? 0 : 1;
    });
    chart.update('none');
    Array.prototype.forEach.call(legend.children, function (el, i) { el.classList.toggle('hl', i === index); });
  }
  function drawCurves() {
    var metric = metricSel.value, x = xSel.value;
    var datasets = runs.map(function (r, i) {
      return {label: r.label, data: points(r, metric, x), borderColor: colors[i], backgroundColor: colors[i],
              borderWidth: i === d.baseline ? 2.2 : 1.4, pointRadius: metric.indexOf('val_') === 0 ? 2 : 0,
              pointHoverRadius: 4, tension: 0, spanGaps: true, parsing: false, normalized: true};
    });
    var total = 0, drawn = 0;
    datasets.forEach(function (ds) { drawn += ds.data.length > 0 ? 1 : 0; total += ds.data.length; });
    var xTitle = {step: 'optimizer step', epoch: 'epoch', wall: 'wall time (s)'}[x];
    var yTitle = metricSel.options[metricSel.selectedIndex].text;
    if (chart) chart.destroy();
    chart = new Chart(document.getElementById('chart-curves'), {
      type: 'line',
      data: {datasets: datasets},
      options: {
        interaction: {mode: 'nearest', intersect: false},
        scales: {x: {type: 'linear', title: {display: true, text: xTitle}, min: zoom ? zoom[0] : undefined,
                     max: zoom ? zoom[1] : undefined},
                 y: {type: logBox.checked ? 'logarithmic' : 'linear', title: {display: true, text: yTitle}}},
        plugins: {legend: {display: false},
                  tooltip: {callbacks: {label: function (c) { return c.dataset.label + ': ' + H.number(c.parsed.y, 5); }}}},
        onHover: function (e, items) { highlight(items.length ? items[0].datasetIndex : -1); }
      }
    });
    curveBox.setAttribute('data-curves', String(drawn));
    curveBox.setAttribute('data-points', String(total));
    curveBox.setAttribute('data-metric', metric);
  }
  H.guard(curveBox, function () {
    runs.forEach(function (r, i) {
      var item = document.createElement('div');
      var sw = document.createElement('span');
      sw.className = 'sw';
      sw.style.background = colors[i];
      item.appendChild(sw);
      item.appendChild(document.createTextNode(r.label + (i === d.baseline ? ' (baseline)' : '')));
      item.title = r.label + ': ' + r.stored_steps + ' steps stored' +
                   (r.kept_steps < r.stored_steps ? ', ' + r.kept_steps + ' drawn (each stretch\'s extremes kept)' : '');
      item.addEventListener('mouseenter', function () { highlight(i); });
      item.addEventListener('mouseleave', function () { highlight(-1); });
      legend.appendChild(item);
    });
    // The points per run each curve holds, for tests and the hint: stored vs drawn.
    curveBox.setAttribute('data-run-points', runs.map(function (r) { return r.steps.step.length; }).join(' '));
    curveBox.setAttribute('data-run-stored', runs.map(function (r) { return r.stored_steps; }).join(' '));
    var thinned = runs.filter(function (r) { return r.kept_steps < r.stored_steps; }).length;
    if (thinned) {
      document.getElementById('curves-hint').textContent += ' ' + thinned + ' run(s) have more logged steps than a ' +
        'comparison draws (' + d.point_cap + ' per metric): each stretch keeps its lowest and highest values; the ' +
        'run\'s own report has every step.';
    }
    drawCurves();
    [metricSel, xSel, logBox].forEach(function (el) { el.addEventListener('change', function () { zoom = null; drawCurves(); }); });
    filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      Array.prototype.forEach.call(legend.children, function (el, i) {
        var hit = !q || runs[i].label.toLowerCase().indexOf(q) >= 0;
        el.style.display = hit ? '' : 'none';
        chart.setDatasetVisibility(i, hit);
      });
      chart.update('none');
    });
    // Drag to zoom on x, double-click to zoom out.
    var canvas = document.getElementById('chart-curves'), from = null;
    canvas.addEventListener('mousedown', function (e) { from = e.offsetX; });
    canvas.addEventListener('mouseup', function (e) {
      if (from === null || Math.abs(e.offsetX - from) < 6) { from = null; return; }
      var s = chart.scales.x, a = s.getValueForPixel(Math.min(from, e.offsetX)), b = s.getValueForPixel(Math.max(from, e.offsetX));
      from = null;
      zoom = [a, b];
      chart.options.scales.x.min = a;
      chart.options.scales.x.max = b;
      chart.update('none');
    });
    canvas.addEventListener('dblclick', function () {
      zoom = null;
      chart.options.scales.x.min = undefined;
      chart.options.scales.x.max = undefined;
      chart.update('none');
    });
  });

  function stacked(boxId, canvasId, parts, pick, unit, scale) {
    var box = document.getElementById(boxId);
    H.guard(box, function () {
      var withData = runs.filter(function (r) { return pick(r); });
      if (!withData.length) { H.empty(box, 'None of the runs stored this.'); return; }
      new Chart(document.getElementById(canvasId), {
        type: 'bar',
        data: {
          labels: runs.map(function (r) { return r.label; }),
          datasets: parts.map(function (p, k) {
            var key = unit === 'MiB' && p.key === 'other' ? 'other_memory' : p.key;
            return {label: p.label, backgroundColor: H.partColors[key] || '#999',
                    data: runs.map(function (r) { var v = pick(r); return v ? v[k] / scale : null; })};
          }).filter(function (ds) {   // a part no run has (a CUDA graph pool on the CPU): no legend entry
            return ds.data.some(function (v) { return v > 0; });
          })
        },
        options: {
          indexAxis: 'y',
          scales: {x: {stacked: true, title: {display: true, text: unit}},
                   y: {stacked: true, ticks: {autoSkip: false, font: {size: n > 40 ? 9 : 11}}}},
          plugins: {legend: {position: 'bottom', labels: {boxWidth: 12}},
                    tooltip: {callbacks: {label: function (c) { return c.dataset.label + ': ' + H.number(c.parsed.x, 2) + ' ' + unit; }}}}
        }
      });
      box.setAttribute('data-bars', String(withData.length));
    });
  }
  stacked('breakdown-box', 'chart-breakdown', d.parts, function (r) { return r.breakdown; }, 'ms', 1);
  stacked('memory-box', 'chart-memory', d.memory_parts, function (r) { return r.memory; }, 'MiB', 1048576);
  H.sortableTables();
  H.done();
})();
