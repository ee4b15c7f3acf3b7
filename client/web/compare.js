/* SPDX-License-Identifier: BSD-3-Clause */
// The page of `eventlog-socket report RUN_A RUN_B` (client/web/compare.html):
// the data that client/web/report_two.c inlined (script#es-data) drawn with
// dygraphs: both runs' heap size and live bytes, and the residency of the
// labels that differ most, on shared axes (x: seconds since each run's start,
// 0 to the end of the longer run; y: one byte scale for both runs), and the
// table of `compare`; with time profiles, their table and a differential
// flame graph (d3-flame-graph, client/web/flame.js). Each chart says what it drew in data-* attributes
// (range, yrange, area, series) for the tests; body's data-drawn counts the
// charts drawn.
(function () {
  'use strict';

  var D = JSON.parse(document.getElementById('es-data').textContent);
  // Heap chart: a blue pair for A (solid), a red-orange pair for B (dashed).
  var HEAP_COLOURS = ['#1f4e9c', '#5fa8e8', '#b8322a', '#f0a020'];
  // Label chart: one colour per label, the same in both runs.
  var LABEL_COLOURS = ['#2f7d4f', '#8e44ad', '#d35400', '#16a0b0', '#7f6a00'];
  var DASH = [7, 4];

  function el(id) { return document.getElementById(id); }

  function human(v, signed) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var a = Math.abs(v), u = 0;
    for (; a >= 1024 && u < units.length - 1; u++) a /= 1024;
    var shown = u ? a.toFixed(1) : a.toFixed(0);
    // What rounds to nothing has no sign: "0 B", never "-0 B".
    var s = +shown === 0 ? '' : v > 0 && signed ? '+' : v < 0 ? '-' : '';
    return s + shown + ' ' + units[u];
  }

  function escape(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c];
    });
  }

  function runName(r, short) {
    var name = short ? r.name.replace(/^.*\//, '') : r.name;
    // A run whose eventlog never named its program (started from Haskell on
    // GHC 9.0) is its file's name alone: "A: run-a.eventlog", not "A: (run-a.eventlog)".
    return r.program ? r.program + ' (' + name + ')' : name;
  }

  // One row per point of every series: [t, values...], null where a
  // series has no point at t. `parts` is a list of [points, width]: each
  // point is [t, v1 .. vwidth].
  function merge(parts) {
    var total = parts.reduce(function (n, p) { return n + p[1]; }, 0), at = 0, rows = [];
    parts.forEach(function (p) {
      p[0].forEach(function (pt) {
        var row = [pt[0]];
        for (var k = 0; k < total; k++) {
          var v = k >= at && k < at + p[1] ? pt[1 + k - at] : null;
          row.push(v === undefined ? null : v);
        }
        rows.push(row);
      });
      at += p[1];
    });
    rows.sort(function (a, b) { return a[0] - b[0]; });
    return rows;
  }

  function largest(rows) {
    var m = 0;
    rows.forEach(function (r) { for (var k = 1; k < r.length; k++) if (r[k] > m) m = r[k]; });
    return m;
  }

  var END = Math.max(D.runs[0].end, D.runs[1].end) || 1;
  var drawnCharts = 0;

  function plot(id, keyId, rows, labels, colours, dashedFrom, lift) {
    var box = el(id);
    box.setAttribute('data-rows', String(rows.length));
    box.setAttribute('data-series', labels.slice(1).join('|'));
    if (!rows.length) { box.textContent = 'nothing to draw'; return null; }
    var series = {};
    labels.slice(1).forEach(function (name, k) {
      series[name] = {strokePattern: dashedFrom(k) ? DASH : null};
    });
    var top = largest(rows) * 1.05 || 1;
    // `lift`: the axis a little below 0, so that a line at 0 (a label one
    // run hardly has) is drawn above the time axis, not hidden by it.
    var bottom = lift ? -0.03 * top : 0;
    var counted = false;
    return new Dygraph(box, rows, {
      labels: labels, colors: colours, series: series, strokeWidth: 2,
      connectSeparatedPoints: true, dateWindow: [0, END], valueRange: [bottom, top],
      legend: 'always', labelsDiv: el(keyId), labelsSeparateLines: true,
      xlabel: 'seconds since the run started (both runs)',
      axes: {y: {axisLabelWidth: 70, axisLabelFormatter: function (v) { return human(v); },
                 valueFormatter: function (v) { return human(v); }}},
      drawCallback: function (g) {
        var a = g.getArea(), fix = function (x) { return x.toFixed(3); };
        box.setAttribute('data-range', g.xAxisRange().map(fix).join(','));
        box.setAttribute('data-yrange', g.yAxisRange().map(fix).join(','));
        box.setAttribute('data-area', [a.x, a.y, a.w, a.h].map(Math.round).join(','));
        if (!counted) {
          counted = true;
          document.body.setAttribute('data-drawn', String(++drawnCharts));
        }
      }
    });
  }

  function drawHeap() {
    var rows = merge(D.runs.map(function (r) { return [r.heap, 2]; }));
    var labels = ['t'];
    D.runs.forEach(function (r) {
      labels.push(r.letter + ' heap size', r.letter + ' live bytes');
    });
    return plot('heap-chart', 'heap-key', rows, labels, HEAP_COLOURS,
                function (k) { return k >= 2; });
  }

  function drawLabels() {
    var parts = [], labels = ['t'], colours = [];
    ['a', 'b'].forEach(function (run) {
      var pts = [];
      D.top.forEach(function (lab, k) {
        labels.push(run.toUpperCase() + ': ' + lab.label);
        colours.push(LABEL_COLOURS[k % LABEL_COLOURS.length]);
        lab[run].forEach(function (pt, i) {
          if (!pts[i]) pts[i] = [pt[0]];
          pts[i][1 + k] = pt[1];
        });
      });
      parts.push([pts, D.top.length]);
    });
    return plot('label-chart', 'label-key', merge(parts), labels, colours,
                function (k) { return k >= D.top.length; }, true);
  }

  function drawTable() {
    var html = '';
    D.rows.forEach(function (w) {
      html += '<tr><td title="' + escape(w[0]) + '">' + escape(w[0]) + '</td>';
      for (var k = 1; k <= 6; k++) {
        var diff = k === 3 || k === 6;
        var cls = 'v' + (diff && w[k] > 0 ? ' grew' : diff && w[k] < 0 ? ' shrank' : '');
        html += '<td class="' + cls + '" data-value="' + w[k] + '">' + human(w[k], diff) + '</td>';
      }
      html += '<td>' + escape(w[7]) + '</td></tr>';
    });
    el('compare-table').tBodies[0].innerHTML = html;
    el('table-note').textContent = D.rows.length + ' labels; as `eventlog-socket compare` gives them. ' +
      'A label only one run has counts 0 in the other.';
  }

  function header() {
    var names = D.runs.map(function (r) { return runName(r, true); });
    document.title = names[0] + ' vs ' + names[1] + ': eventlog-socket';
    el('title').textContent = 'A: ' + names[0] + ' vs B: ' + names[1];
    el('runs').innerHTML = D.runs.map(function (r) {
      return '<li><strong>' + r.letter + '</strong>: ' + escape(runName(r, false)) + ', ' + r.censuses +
        ' censuses, ' + r.end.toFixed(2) + ' s' +
        (r.state === 'complete' ? '' : ' (' + escape(r.state) + ')') + '</li>';
    }).join('');
  }

  // ---- The time profiles (D.time, client/web/report_two.c): `compare
  // --time`'s table, and a differential flame graph: B's stacks (their
  // widths B's samples), each frame coloured by how its share of the
  // samples changed from A (red: a larger share in B, blue: a smaller;
  // pale: about the same), as Brendan Gregg's differential flame graphs do.
  // A frame only A has is in the table, not in the graph.

  // Each frame of B's tree gets `a`, A's samples on the same path.
  function annotate(b, a) {
    b.a = a ? a.value : 0;
    (b.children || []).forEach(function (c) {
      var match = a && (a.children || []).filter(function (x) { return x.name === c.name; })[0];
      annotate(c, match);
    });
  }

  function change(d) {
    var T = D.time;
    return d.value / (T.samples[1] || 1) - (d.data.a || 0) / (T.samples[0] || 1);
  }

  function drawTime() {
    var T = D.time;
    if (!T || typeof window.flamegraph !== 'function') return;
    el('time').hidden = false;
    el('time-note').textContent = T.samples[0] + ' samples in A, ' + T.samples[1] + ' in B; ' +
      T.rows.length + ' cost centres as `eventlog-socket compare --time` gives them, the largest ' +
      'change of self time first.';
    var html = '';
    T.rows.forEach(function (w) {
      html += '<tr><td title="' + escape(w[0]) + '">' + escape(w[0]) + '</td>';
      for (var k = 1; k <= 6; k++) {
        var diff = k === 3 || k === 6;
        var cls = 'v' + (diff && w[k] >= 0.05 ? ' grew' : diff && w[k] <= -0.05 ? ' shrank' : '');
        // What rounds to nothing has no sign: "0.0 %", never "-0.0 %".
        var shown = w[k].toFixed(1), sign = +shown === 0 ? '' : diff && w[k] > 0 ? '+' : '';
        html += '<td class="' + cls + '" data-value="' + w[k] + '">' + sign +
          (+shown === 0 ? '0.0' : shown) + ' %</td>';
      }
      html += '<td>' + escape(w[7]) + '</td></tr>';
    });
    el('time-table').tBodies[0].innerHTML = html;
    var tree = JSON.parse(JSON.stringify(T.b));
    annotate(tree, T.a);
    var most = 0;
    (function walk(n) {
      var c = Math.abs(n.value / (T.samples[1] || 1) - n.a / (T.samples[0] || 1));
      if (c > most) most = c;
      (n.children || []).forEach(walk);
    })(tree);
    var box = el('flame');
    var chart = window.flamegraph().width(Math.max(300, box.parentNode.clientWidth || 800))
      .cellHeight(18).minFrameSize(1).sort(true).transitionDuration(0)
      .setDetailsElement(el('flame-details'))
      .label(function (d) {
        var b = 100 * d.value / (T.samples[1] || 1), a = 100 * (d.data.a || 0) / (T.samples[0] || 1);
        return d.data.name + ': ' + b.toFixed(1) + ' % of B\'s samples, ' + a.toFixed(1) +
          ' % of A\'s (' + (b - a >= 0 ? '+' : '') + (b - a).toFixed(1) + ' points)';
      })
      .setColorMapper(function (d) {
        if (d.highlight) return '#e600e6';
        var c = change(d), k = most > 0 ? Math.min(1, Math.abs(c) / most) : 0;
        var pale = Math.round(225 - 165 * k);
        return Math.abs(c) < 0.0005 ? 'rgb(225, 225, 225)' :
          c > 0 ? 'rgb(230, ' + pale + ', ' + pale + ')' : 'rgb(' + pale + ', ' + pale + ', 230)';
      });
    chart(window.esFlame.select(box).datum(tree));
    el('flame-search').addEventListener('input', function (ev) {
      if (ev.target.value) chart.search(ev.target.value); else chart.clear();
    });
    el('flame-reset').addEventListener('click', function () { chart.resetZoom(); });
    box.setAttribute('data-drawn', '1');
    return chart;
  }

  // ---- The spans (D.spans, client/web/report_two.c): `compare --spans`'s
  // table, with p99's ratio B/A (red: slower in B by more than 5 %, blue:
  // faster).
  function ms(s) {
    if (s < 0) return '';
    return s < 0.001 ? (s * 1e6).toFixed(0) + 'us' : s < 10 ? (s * 1e3).toFixed(1) + 'ms' : s.toFixed(2) + 's';
  }

  function drawSpans() {
    var S = D.spans;
    if (!S) return;
    el('spans').hidden = false;
    el('spans-note').textContent = S.length + (S.length === 1 ? ' label' : ' labels') +
      ' as `eventlog-socket compare --spans` gives them; p50 and p99 within 1 %. A label only ' +
      'one run has is empty in the other.';
    var html = '';
    S.forEach(function (w) {
      var ratio = w[5] > 0 && w[6] >= 0 ? w[6] / w[5] : -1;
      var cls = 'v' + (ratio > 1.05 ? ' grew' : ratio >= 0 && ratio < 1 / 1.05 ? ' shrank' : '');
      html += '<tr><td title="' + escape(w[0]) + '">' + escape(w[0]) + '</td>' +
        '<td class="v" data-value="' + w[1] + '">' + w[1] + '</td>' +
        '<td class="v" data-value="' + w[2] + '">' + w[2] + '</td>';
      for (var k = 3; k <= 6; k++)
        html += '<td class="v" data-value="' + w[k] + '">' + ms(w[k]) + '</td>';
      html += '<td class="' + cls + '" data-value="' + ratio + '">' +
        (ratio >= 0 ? '\u00d7' + ratio.toFixed(2) : '') + '</td>' +
        '<td class="v" data-value="' + w[9] + '">' + w[9] + '</td>' +
        '<td class="v" data-value="' + w[10] + '">' + w[10] + '</td></tr>';
    });
    el('spans-table').tBodies[0].innerHTML = html;
  }

  header();
  var flame = drawTime();
  drawSpans();
  // Without heap profiles (two time profiles compared) the heap's sections
  // say so and draw nothing.
  if (D.heap) drawTable();
  ['heap', 'labels', 'table'].forEach(function (id) { el(id).hidden = !D.heap; });
  // For the tests (and the console): the charts.
  window.esCompare = D.heap ? {heap: drawHeap(), labels: drawLabels(), flame: flame} : {flame: flame};
})();
