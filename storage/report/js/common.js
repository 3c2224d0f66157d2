/* Hearth report pages: what the run page and the comparison page share. The page's data is the
 * JSON block #hearth-data; when the page has drawn everything, <body data-render="done"> holds the
 * time since navigation started (data-render-ms), so tests and benchmarks can read what happened. */
(function () {
  'use strict';
  var body = document.body;
  var H = {violations: 0};
  // When the scripts started: the file's parsing and the libraries' set-up are behind this.
  body.setAttribute('data-scripts-ms', performance.now().toFixed(1));
  function fail(message) {
    body.setAttribute('data-render', 'error');
    body.setAttribute('data-render-error', String(message));
  }
  window.addEventListener('error', function (e) { fail(e.message || 'script error'); });
  // Anything the page tried to load from elsewhere would break its policy: count it.
  document.addEventListener('securitypolicyviolation', function (e) {
    H.violations += 1;
    body.setAttribute('data-csp-violations', String(H.violations));
    body.setAttribute('data-csp-blocked', String(e.blockedURI || e.violatedDirective));
  });
  body.setAttribute('data-csp-violations', '0');
  try {
    H.data = JSON.parse(document.getElementById('hearth-data').textContent);
  } catch (e) {
    fail('the data block cannot be read: ' + e.message);
    H.data = {};
  }
  H.fail = fail;
  H.done = function () {
    if (body.getAttribute('data-render') === 'error') return;
    body.setAttribute('data-render', 'done');
    body.setAttribute('data-render-ms', performance.now().toFixed(1));
  };
  // Runs each step, turning an exception into the page's error marker and a note in `el`.
  H.guard = function (el, draw) {
    try {
      draw();
    } catch (e) {
      fail(e.message);
      if (el) { el.classList.add('empty'); el.textContent = 'This chart could not be drawn: ' + e.message; }
    }
  };
  H.empty = function (el, text) {
    el.classList.add('empty');
    el.textContent = text;
    el.setAttribute('data-points', '0');
  };

  var tableau = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
  // Run i of n: ten distinct colours, beyond that hues spread by the golden angle.
  H.color = function (i, n) {
    if (n <= tableau.length) return tableau[i % tableau.length];
    var hue = (i * 137.508) % 360;
    return 'hsl(' + hue.toFixed(1) + ',62%,' + (i % 2 ? 38 : 50) + '%)';
  };
  H.partColors = {
    data_wait: '#e15759', host_to_device: '#f28e2b', forward: '#4e79a7', backward: '#76b7b2',
    comm_wait: '#b07aa1', optimizer: '#59a14f', sync: '#edc948', other: '#bab0ac',
    parameters: '#4e79a7', gradients: '#f28e2b', optimizer_state: '#59a14f', activations: '#e15759',
    reserved_unused: '#bab0ac', cuda_graph: '#d37295', other_memory: '#9c755f'
  };
  H.bytes = function (b) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(b) >= 1024 && i < units.length - 1) { b /= 1024; i += 1; }
    return (i === 0 ? b.toFixed(0) : b.toFixed(1)) + ' ' + units[i];
  };
  H.number = function (v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    return Number(v).toLocaleString('en-US', {maximumFractionDigits: digits === undefined ? 4 : digits});
  };
  // Chart.js defaults for a page that prints: no animation, sizes from the boxes.
  H.chartDefaults = function () {
    if (!window.Chart) return;
    Chart.defaults.animation = false;
    Chart.defaults.responsive = true;
    Chart.defaults.maintainAspectRatio = false;
    Chart.defaults.font.family = getComputedStyle(body).fontFamily;
    Chart.defaults.color = '#5d6678';
  };

  // Tables with class "sortable": a click on a header sorts by that column (numbers as numbers,
  // a cell's data-sort when it has one), again to reverse.
  H.sortableTables = function () {
    Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
      var heads = table.querySelectorAll('thead th');
      Array.prototype.forEach.call(heads, function (th, column) {
        th.addEventListener('click', function () {
          var down = th.getAttribute('data-sorted') === '▲';
          Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('data-sorted'); });
          th.setAttribute('data-sorted', down ? '▼' : '▲');
          var tbody = table.tBodies[0];
          var rows = Array.prototype.slice.call(tbody.rows);
          var key = function (row) {
            var cell = row.cells[column];
            var v = cell.getAttribute('data-sort');
            if (v === null) v = cell.textContent;
            var n = parseFloat(String(v).replace(/[^0-9.eE+-]/g, ''));
            return isNaN(n) ? String(v) : n;
          };
          rows.sort(function (a, b) {
            var x = key(a), y = key(b);
            var c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
            return down ? -c : c;
          });
          rows.forEach(function (r) { tbody.appendChild(r); });
        });
      });
    });
  };
  window.HearthReport = H;
})();
