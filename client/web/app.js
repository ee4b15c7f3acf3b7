/* SPDX-License-Identifier: BSD-3-Clause */
// The page of `eventlog-socket serve` and `report`: it keeps the state that
// the server sends (a whole state, then deltas; see client/web/json.h) and
// draws it with dygraphs. In a report the state is inlined in the page
// (script#es-data) and nothing is fetched.
// One closure: the state, the charts (markers, zoom, legends), the heap,
// GC and capability views, sparks, notes, threads, the header and the
// loop. Embedded in the command as it is (scripts/embed-web.sh).
(function () {
  'use strict';

  var TOP_N = 10;
  var MAX_MARKS = 1024, MAX_DROPS = 256;
  var LIST_N = 20;
  // Ten fills told apart at a glance (Tableau 10 without its grey, and a
  // light blue); "other" is grey.
  var COLOURS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
                 '#ff9da7', '#9c755f', '#a0cbe8'];
  var OTHER = '#c7c7c7';
  var S = null;
  var charts = {};
  var drawPending = false;

  function $(id) { return document.getElementById(id); }

  function bytes(n) {
    if (n === null || n === undefined || isNaN(n)) return '?';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(Math.round(n))) + ' ' + u[i];
  }

  function duration(ns) {
    if (ns < 1e3) return ns + ' ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(1) + ' us';
    if (ns < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e9).toFixed(2) + ' s';
  }

  function uptime(ns) {
    var s = Math.floor(ns / 1e9), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60;
    return (h ? h + ' h ' : '') + (h || m ? m + ' min ' : '') + (s % 60) + ' s';
  }

  function text(id, t) { var e = $(id); if (e && e.textContent !== t) e.textContent = t; }

  // ---- State: a whole state replaces everything, a delta extends it.

  function apply(d) {
    if (d.full || S === null)
      S = {tl: [], caps: [], labels: [], label_ids: [], census: [], pauses: [], marks: [], drops: [], liveTl: []};
    S.info = d.info;
    if (d.sparks) S.sparks = d.sparks;  // whole when changed (client/web/sparks.h)
    if (d.flame) S.flame = d.flame;  // whole when changed (client/web/flame.h)
    if (d.spans) S.spans = d.spans;  // whole when changed (client/web/json.c)
    S.tl.length = Math.min(S.tl.length, d.tl_from);
    Array.prototype.push.apply(S.tl, d.tl);
    for (var c = 0; c < d.caps.length; c++) {
      var a = S.caps[c] || [];
      if (d.caps[c].length) {
        while (a.length < 2 * d.tl_from) a.push(0);
        a.length = 2 * d.tl_from;
        Array.prototype.push.apply(a, d.caps[c]);
      }
      S.caps[c] = a;
    }
    S.labels.length = Math.min(S.labels.length, d.labels_from);
    Array.prototype.push.apply(S.labels, d.labels);
    S.label_ids.length = Math.min(S.label_ids.length, d.labels_from);
    Array.prototype.push.apply(S.label_ids, d.label_ids || []);
    S.census.length = Math.min(S.census.length, d.census_from);
    Array.prototype.push.apply(S.census, d.census);
    S.pauses.length = Math.min(S.pauses.length, d.pause_from);
    Array.prototype.push.apply(S.pauses, d.pauses);
    Array.prototype.push.apply(S.marks, d.marks);
    if (S.marks.length > MAX_MARKS) S.marks.splice(0, S.marks.length - MAX_MARKS);
    Array.prototype.push.apply(S.drops, d.drops);
    if (S.drops.length > MAX_DROPS) S.drops.splice(0, S.drops.length - MAX_DROPS);
    if (d.threads) {
      S.threads = d.threads;
      S.liveTl.length = Math.min(S.liveTl.length, d.threads.live_from);
      Array.prototype.push.apply(S.liveTl, d.threads.live_tl);
    }
    schedule();
  }

  function schedule() {
    if (drawPending) return;
    drawPending = true;
    setTimeout(function () { drawPending = false; draw(); }, 200);
  }

  // ---- Drawing.

  // Markers on the charts: at most one tick per MARK_BIN pixels; while the
  // ticks are sparse each is a thin line, beyond MARK_SPARSE_PX pixels per
  // tick on average they become a rate strip (a bar per bin, its height the
  // bin's count) along the top of the plot. At most one label per
  // MARK_LABEL_PX pixels of width, never two overlapping. Drawn over the
  // series (dygraphs' drawCallback), so filled bands do not hide them.
  var MARK_BIN = 6, MARK_SPARSE_PX = 24, MARK_LABEL_PX = 180, MARK_STRIP = 12;
  var showMarks = true;
  // The time range every chart shows ([from, to] in seconds), or null for
  // the whole run: zoom or pan on one chart and the others follow.
  var view = null, syncing = false;

  // Visible markers grouped into bins of MARK_BIN pixels: [{x, n, first}].
  function markBins(g, area) {
    var bins = [], last = null;
    for (var j = 0; j < S.marks.length; j++) {
      var x = g.toDomXCoord(S.marks[j][0] / 1e9);
      if (x < area.x || x > area.x + area.w) continue;
      var b = Math.floor((x - area.x) / MARK_BIN);
      if (last && last.b === b) { last.n++; continue; }
      last = {b: b, x: area.x + (b + 0.5) * MARK_BIN, n: 1, first: j};
      bins.push(last);
    }
    return bins;
  }

  function drawMarks(ctx, area, g) {
    var el = g.maindiv_ || null;
    var bins = showMarks ? markBins(g, area) : [];
    var n = 0, labels = 0, max = 1, i;
    for (i = 0; i < bins.length; i++) { n += bins[i].n; if (bins[i].n > max) max = bins[i].n; }
    var dense = bins.length * MARK_SPARSE_PX > area.w;
    ctx.save();
    if (!dense) {
      ctx.fillStyle = 'rgba(70,70,70,0.45)';
      for (i = 0; i < bins.length; i++) ctx.fillRect(Math.round(bins[i].x), area.y, 1, area.h);
    } else {
      ctx.fillStyle = 'rgba(240,240,240,0.85)';
      ctx.fillRect(area.x, area.y, area.w, MARK_STRIP);
      ctx.fillStyle = 'rgba(70,70,70,0.8)';
      for (i = 0; i < bins.length; i++) {
        var h = Math.max(2, Math.round(MARK_STRIP * bins[i].n / max));
        ctx.fillRect(area.x + bins[i].b * MARK_BIN, area.y + MARK_STRIP - h, MARK_BIN - 1, h);
      }
    }
    // Labels: a single marker by its text, a group by its count; a dense
    // strip is labelled per segment of MARK_LABEL_PX pixels.
    ctx.font = '10px sans-serif';
    var cands = [];
    if (!dense) {
      for (i = 0; i < bins.length; i++)
        cands.push([bins[i].x + 2, bins[i].n === 1 ? S.marks[bins[i].first][1].slice(0, 24) : bins[i].n + ' markers']);
    } else {
      var seg = Math.max(1, Math.floor(area.w / MARK_LABEL_PX)), per = area.w / seg;
      for (var k = 0; k < seg; k++) {
        var c = 0, at = -1;
        for (i = 0; i < bins.length; i++) {
          var bx = bins[i].b * MARK_BIN;
          if (bx >= k * per && bx < (k + 1) * per) { c += bins[i].n; if (at < 0) at = bx; }
        }
        if (c) cands.push([area.x + at, c + (c === 1 ? ' marker' : ' markers')]);
      }
    }
    var room = Math.max(1, Math.floor(area.w / MARK_LABEL_PX)), end = -Infinity, boxes = [];
    var ty = area.y + (dense ? MARK_STRIP + 11 : 10);
    for (i = 0; i < cands.length && labels < room; i++) {
      var w = ctx.measureText(cands[i][1]).width;
      var x0 = Math.min(cands[i][0], area.x + area.w - w - 2);
      // Spread over the width: the k-th label starts in the k-th segment or later.
      if (x0 < end + 8 || x0 < area.x + labels * area.w / room - 4) continue;
      ctx.fillStyle = 'rgba(255,255,255,0.8)';
      ctx.fillRect(x0 - 1, ty - 9, w + 2, 12);
      ctx.fillStyle = '#333';
      ctx.fillText(cands[i][1], x0, ty);
      boxes.push(Math.round(x0) + '-' + Math.round(x0 + w));
      end = x0 + w;
      labels++;
    }
    ctx.restore();
    // What was painted, also as text (tests, and whoever inspects the page).
    if (el) {
      el.setAttribute('data-marks', String(n));
      el.setAttribute('data-mark-ticks', String(bins.length));
      el.setAttribute('data-mark-labels', String(labels));
      el.setAttribute('data-mark-boxes', boxes.join(','));
      el.setAttribute('data-mark-style', bins.length ? (dense ? 'strip' : 'lines') : 'none');
    }
  }

  // Drop notices, under the series, on every time axis.
  function underlay(ctx, area, g) {
    if (!S) return;
    ctx.save();
    var bands = 0;
    for (var i = 0; i < S.drops.length; i++) {
      var x = g.toDomXCoord(S.drops[i][0] / 1e9);
      if (x < area.x || x > area.x + area.w) continue;
      ctx.fillStyle = 'rgba(200,0,0,0.25)';
      ctx.fillRect(x - 3, area.y, 6, area.h);
      bands++;
    }
    if (g.maindiv_) g.maindiv_.setAttribute('data-drop-bands', String(bands));
    ctx.restore();
  }

  function sameView(a, b) {
    if (a === null || b === null) return a === b;
    return Math.abs(a[0] - b[0]) < 1e-9 && Math.abs(a[1] - b[1]) < 1e-9;
  }

  // After every redraw: the markers on top, and a zoom or pan passed on to
  // the other charts.
  function drawn(g) {
    if (!S) return;
    var ctx = g.hidden_ctx_;
    if (ctx) drawMarks(ctx, g.getArea(), g);
    var r = g.isZoomed('x') ? g.xAxisRange().slice() : null;
    var a = g.getArea(), el = g.maindiv_;
    if (el) {
      el.setAttribute('data-view', r ? r[0].toFixed(3) + ',' + r[1].toFixed(3) : '');
      el.setAttribute('data-range', g.xAxisRange().map(function (x) { return x.toFixed(3); }).join(','));
      el.setAttribute('data-area', [a.x, a.y, a.w, a.h].map(Math.round).join(','));
    }
    if (syncing || sameView(r, view)) return;
    view = r;
    syncing = true;
    Object.keys(charts).forEach(function (id) {
      if (charts[id].g !== g) charts[id].g.updateOptions({dateWindow: view});
    });
    syncing = false;
    drawCaps();
  }

  // The markers near the pointer, as the chart's tooltip.
  function hover(ev) {
    var el = ev.currentTarget, c = charts[el.id];
    if (!c || !S) return;
    var g = c.g, rect = el.getBoundingClientRect(), x = ev.clientX - rect.left, near = [];
    for (var j = 0; j < S.marks.length; j++) {
      if (Math.abs(g.toDomXCoord(S.marks[j][0] / 1e9) - x) <= MARK_BIN) near.push(j);
    }
    var t = near.slice(0, 8).map(function (j) {
      return (S.marks[j][0] / 1e9).toFixed(3) + ' s: ' + S.marks[j][1];
    }).join('\n');
    if (near.length > 8) t += '\n... and ' + (near.length - 8) + ' more';
    if (el.title !== t) el.title = t;
  }

  function chart(id, data, opts) {
    var el = $(id);
    // Rows that are gaps (every value NaN: a drop notice's time), and rows
    // that only stretch the time axis (every value null: not counted).
    var gaps = 0, ends = 0;
    for (var i = 0; i < data.length; i++) {
      var all = data[i].length > 1, none = data[i].length > 1;
      for (var k = 1; k < data[i].length; k++) {
        all = all && data[i][k] !== data[i][k];
        none = none && data[i][k] === null;
      }
      if (all) gaps++;
      if (none) ends++;
    }
    el.setAttribute('data-rows', String(data.length - ends));
    el.setAttribute('data-gaps', String(gaps));
    if (!data.length) return;
    opts.underlayCallback = underlay;
    opts.drawCallback = drawn;
    opts.legend = 'never';
    opts.xlabel = 'seconds since the program started (drag to zoom, shift-drag to pan, double-click: whole run)';
    opts.connectSeparatedPoints = true;
    opts.dateWindow = view;
    // Drag to zoom on every chart (a range selector would make it pan).
    opts.interactionModel = Dygraph.defaultInteractionModel;
    if (charts[id] && charts[id].nseries === opts.labels.length) {
      opts.file = data;
      charts[id].g.updateOptions(opts);
    } else {
      if (charts[id]) charts[id].g.destroy();
      else el.addEventListener('mousemove', hover);
      charts[id] = {g: new Dygraph(el, data, opts), nseries: opts.labels.length};
    }
  }

  function legend(id, rows) {
    var body = $(id).tBodies[0] || $(id).createTBody();
    var html = '';
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      html += '<tr data-series="' + esc(r.name) + '"><td title="' + esc(r.name) + '">' +
              (r.colour ? '<span class="swatch" style="background:' + r.colour + '"></span>' : '') +
              esc(r.name) + '</td>' + (r.extra || []).map(function (x, k) {
                return '<td class="x" data-value="' + r.extraRaw[k] + '">' + esc(x) + '</td>';
              }).join('') + (r.trend !== undefined ? '<td class="trend">' + sparkline(r.trend, r.trendOf || 'censuses') + '</td>' : '') +
              '<td class="v"' +
              (r.raw !== undefined ? ' data-value="' + r.raw + '"' : '') + '>' + esc(r.value) +
              '</td></tr>';
    }
    if (body.innerHTML !== html) body.innerHTML = html;
  }

  // A small trend: the values as a line scaled to their own largest, at
  // most TREND_W points (each the largest of the values it stands for).
  var TREND_W = 60, TREND_H = 14;
  function sparkline(values, over) {
    if (!values || values.length < 2) return '';
    var n = Math.min(values.length, TREND_W), pts = [], max = 0;
    for (var i = 0; i < n; i++) {
      var a = Math.floor(i * values.length / n), b = Math.floor((i + 1) * values.length / n), m = 0;
      for (var k = a; k < b; k++) if (values[k] > m) m = values[k];
      pts.push(m);
      if (m > max) max = m;
    }
    var xy = pts.map(function (v, i) {
      return (i * (TREND_W - 1) / (n - 1)).toFixed(1) + ',' +
             (max ? (TREND_H - 1) - v / max * (TREND_H - 2) : TREND_H - 1).toFixed(1);
    });
    return '<svg width="' + TREND_W + '" height="' + TREND_H + '" aria-label="trend">' +
           '<title>' + esc('over ' + values.length + ' ' + over + ': ' + bytes(values[0]) + ' at first, ' +
                           bytes(max) + ' at most, ' + bytes(values[values.length - 1]) + ' now') +
           '</title><polyline fill="none" stroke="#333" stroke-width="1" points="' + xy.join(' ') +
           '"/></svg>';
  }

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
                    .replace(/"/g, '&quot;');
  }

  // Time of bucket i's middle, in seconds.
  function bucketX(i) { return (i + 0.5) * S.info.width / 1e9; }

  // Sorted `rows` of `n` series stretched to the timeline's first and last
  // buckets by rows of nulls (chart() does not count them): the time axis
  // of the allocation chart, where a chart's own rows span less (one
  // sample alone made an axis of no width, its point off the chart).
  function stretch(rows, n) {
    if (!rows.length || !S.tl.length) return;
    var ends = [bucketX(0), bucketX(S.tl.length - 1)];
    var row = function (x) { return [x].concat(new Array(n).fill(null)); };
    if (ends[0] < rows[0][0]) rows.unshift(row(ends[0]));
    if (ends[1] > rows[rows.length - 1][0]) rows.push(row(ends[1]));
  }

  // ---- The heap, GC and capability views.

  function drawHeap() {
    var labels = S.labels, census = S.census;
    // The top N labels by their largest census figure (peak); the rest is
    // "other". Peak and mean per label, over the censuses kept.
    var peak = {}, sum = {};
    for (var i = 0; i < census.length; i++) {
      var e = census[i][2];
      for (var k = 0; k < e.length; k += 2) {
        if (!(e[k] in peak) || e[k + 1] > peak[e[k]]) peak[e[k]] = e[k + 1];
        sum[e[k]] = (sum[e[k]] || 0) + e[k + 1];
      }
    }
    var ids = Object.keys(peak).map(Number);
    ids.sort(function (a, b) { return peak[b] - peak[a] || sum[b] - sum[a]; });
    var top = ids.slice(0, TOP_N), slot = {};
    top.forEach(function (id, j) { slot[id] = j; });
    var hasOther = ids.length > TOP_N;
    var names = top.map(function (id) { return labels[id] || '?'; });
    if (hasOther) names.push('other');
    var nstack = names.length;
    // Rows: censuses (stacked, cumulative), heap size/live per bucket, NaN at drops.
    var rows = [], partPeak = new Array(nstack).fill(0), partSum = new Array(nstack).fill(0);
    var partTrend = names.map(function () { return []; });
    for (i = 0; i < census.length; i++) {
      var v = new Array(nstack).fill(0);
      e = census[i][2];
      for (k = 0; k < e.length; k += 2) {
        var j = e[k] in slot ? slot[e[k]] : nstack - 1;
        v[j] += e[k + 1];
      }
      // Series s holds the sum of parts 0..s: the largest label is the
      // bottom band. dygraphs fills the last series first, so each band's
      // own colour is painted over the ones above it.
      var row = [census[i][0] / 1e9], cum = 0;
      for (j = 0; j < nstack; j++) {
        cum += v[j];
        row.push(cum);
        if (v[j] > partPeak[j]) partPeak[j] = v[j];
        partSum[j] += v[j];
        partTrend[j].push(v[j]);
      }
      row.push(null, null);
      rows.push(row);
    }
    for (i = 0; i < S.tl.length; i++) {
      var b = S.tl[i];
      if (b[0] === null && b[1] === null) continue;
      var r = [bucketX(i)];
      for (j = 0; j < nstack; j++) r.push(null);
      r.push(b[0], b[1]);
      rows.push(r);
    }
    for (i = 0; i < S.drops.length; i++) {
      var gap = [S.drops[i][0] / 1e9];
      for (j = 0; j < nstack + 2; j++) gap.push(NaN);
      rows.push(gap);
    }
    rows.sort(function (a, b) { return a[0] - b[0]; });
    stretch(rows, nstack + 2);
    // The chart library keys its series by name in plain objects, and a
    // label from the stream can be any string ('__proto__', 'constructor',
    // 'heap size'): the chart gets names of its own ('s0', 's1', ...; 'size'
    // and 'live'), the legend below the labels.
    var series = {}, colours = [], keys = [];
    for (j = 0; j < nstack; j++) {
      keys.push('s' + j);
      series['s' + j] = {fillGraph: true, strokeWidth: 1, drawPoints: census.length < 3, pointSize: 3};
      colours.push(hasOther && j === nstack - 1 ? OTHER : COLOURS[j % COLOURS.length]);
    }
    // Heap size and live bytes on their own (right) axis: a profile of a
    // few KiB under a heap of many MiB stays visible.
    var sizeName = 'heap size', liveName = 'live bytes';
    series.size = {fillGraph: false, strokeWidth: 2, axis: 'y2'};
    series.live = {fillGraph: false, strokeWidth: 2, strokePattern: [6, 3], axis: 'y2'};
    colours.push('#000', '#666');
    // Headroom above both scales for the markers' strip. A row is [time,
    // the bands summed bottom up (the top one at nstack), size, live].
    var topY = 0, topY2 = 0;
    for (i = 0; i < rows.length; i++) {
      if (nstack > 0 && rows[i][nstack] > topY) topY = rows[i][nstack];
      for (j = nstack + 1; j <= nstack + 2; j++)
        if (rows[i][j] > topY2) topY2 = rows[i][j];
    }
    // Without a census the left axis has nothing to measure: no labels,
    // no title (the text above the chart says why there are no bands).
    chart('heap-chart', rows, {
      labels: ['time'].concat(keys, ['size', 'live']), series: series, colors: colours,
      fillAlpha: 1.0, ylabel: nstack ? 'heap profile bands (bytes)' : '',
      y2label: 'heap size — and live bytes - - (bytes)',
      axes: {y: {labelsKMG2: true, axisLabelWidth: 60, drawAxis: nstack > 0,
                 valueRange: topY ? [0, topY * 1.12] : null},
             y2: {labelsKMG2: true, axisLabelWidth: 60, independentTicks: true,
                  valueRange: topY2 ? [0, topY2 * 1.12] : null}},
      includeZero: true, drawPoints: false, showRangeSelector: true, rangeSelectorHeight: 30
    });
    // The legend, largest peak first: each series' peak, mean and latest.
    var last = census.length ? census[census.length - 1] : null;
    var lastV = new Array(nstack).fill(0);
    if (last)
      for (k = 0; k < last[2].length; k += 2) {
        j = last[2][k] in slot ? slot[last[2][k]] : nstack - 1;
        lastV[j] += last[2][k + 1];
      }
    var nc = Math.max(census.length, 1);
    var lrows = names.map(function (n, j) {
      return {name: n, value: bytes(lastV[j]), raw: lastV[j], colour: colours[j], trend: partTrend[j],
              extra: [bytes(partPeak[j]), bytes(partSum[j] / nc)], extraRaw: [partPeak[j], Math.round(partSum[j] / nc)]};
    });
    var sizeTrend = [], liveTrend = [];
    for (i = 0; i < S.tl.length; i++) {
      if (S.tl[i][0] !== null) sizeTrend.push(S.tl[i][0]);
      if (S.tl[i][1] !== null) liveTrend.push(S.tl[i][1]);
    }
    lrows.push({name: sizeName, value: bytes(S.info.heap_size), raw: S.info.heap_size, colour: '#000', trend: sizeTrend, trendOf: 'time steps',
                extra: [bytes(S.info.max_heap_size), 'right axis'], extraRaw: [S.info.max_heap_size, '']});
    lrows.push({name: liveName, value: bytes(S.info.heap_live), raw: S.info.heap_live, colour: '#666', trend: liveTrend, trendOf: 'time steps',
                extra: [bytes(S.info.max_heap_live), 'right axis'], extraRaw: [S.info.max_heap_live, '']});
    legend('heap-legend', lrows);
    text('census-count', String(S.info.censuses));
    var tot = $('census-total');
    tot.setAttribute('data-bytes', last ? String(last[1]) : '0');
    text('census-total', bytes(last ? last[1] : 0));
    text('heap-size', bytes(S.info.heap_size));
    text('heap-live', bytes(S.info.heap_live));
    var kinds = {1: 'cost centre', 2: 'module', 3: 'closure description', 4: 'type description',
                 5: 'retainer', 6: 'biography', 7: 'closure type', 8: 'info table', 9: 'era'};
    if (S.info.mode_note) kinds[S.info.breakdown] += ' (' + S.info.mode_note + ')';
    text('breakdown', S.info.heap_prof ? (kinds[S.info.breakdown] || 'label') : 'label (' + noProfile(S.info) + ')');
    // Every census kept, as text.
    var tb = $('census-table').tBodies[0], html = '';
    for (i = 0; i < census.length; i++) {
      var big = -1, bigBytes = -1;
      e = census[i][2];
      for (k = 0; k < e.length; k += 2) if (e[k + 1] > bigBytes) { bigBytes = e[k + 1]; big = e[k]; }
      html += '<tr><td>' + (census[i][0] / 1e9).toFixed(3) + '</td><td class="total">' + census[i][1] +
              '</td><td>' + (big >= 0 ? esc(labels[big] || '?') : '') + '</td></tr>';
    }
    if (tb.childElementCount !== census.length) tb.innerHTML = html;
  }

  // Why the heap chart has no kind of profile: censuses whose set-up was
  // not streamed, a GHC 9.0 stream that ends before the exit, a run
  // without -h, or one that has not sent it yet.
  // The words come from the model (es_model_profile_kind), which `top`
  // says too.
  function noProfile(I) {
    return I.profile_kind;
  }

  function drawGc() {
    var rows = [];
    for (var i = 0; i < S.pauses.length; i++) {
      var p = S.pauses[i], ms = Math.max(p[1], 1) / 1e6;
      rows.push([p[0] / 1e9, p[2] ? null : ms, p[2] ? ms : null]);
    }
    // In time order: the model keeps pauses as their capabilities' blocks
    // arrive, and an idle capability's block may come much later (GHC 9.0
    // writes it at exit). Unsorted, the chart's time axis came from the
    // first and last rows: a few milliseconds, the pauses off the chart.
    rows.sort(function (a, b) { return a[0] - b[0]; });
    // Whole decades on the pause axis: left to itself, a single pause of
    // 0.167 ms read 0.17, 0.17, 0.18, 0.18.
    var lo = Infinity, hi = 0;
    rows.forEach(function (r) {
      for (var k = 1; k < 3; k++) if (r[k] !== null) { lo = Math.min(lo, r[k]); hi = Math.max(hi, r[k]); }
    });
    stretch(rows, 2);
    var decades = null;
    if (hi > 0) {
      decades = [Math.pow(10, Math.floor(Math.log10(lo))), Math.pow(10, Math.ceil(Math.log10(hi)))];
      if (decades[1] <= decades[0]) decades[1] = decades[0] * 10;
    }
    chart('pause-chart', rows, {
      labels: ['time', 'minor GC pause (ms)', 'major GC pause (ms)'], drawPoints: true,
      strokeWidth: 0, pointSize: 2, logscale: true, ylabel: 'pause (ms)',
      axes: {y: {axisLabelWidth: 60, valueRange: decades,
                 // 0.002, not the library's 2.00e-3.
                 axisLabelFormatter: function (v) { return String(+v.toPrecision(3)); }}},
      colors: ['#4e79a7', '#e15759']
    });
    var I = S.info;
    legend('gc-legend', [
      {name: 'minor GCs', value: String(I.minor), raw: I.minor, colour: '#4e79a7'},
      {name: 'major GCs', value: String(I.major), raw: I.major, colour: '#e15759'},
      {name: 'longest pause', value: duration(I.pause_max), raw: I.pause_max},
      {name: 'median pause', value: duration(I.p50), raw: I.p50},
      {name: '99th percentile', value: duration(I.p99), raw: I.p99},
      {name: 'time in GC', value: (100 * I.gc_share).toFixed(1) + ' %', raw: I.gc_share},
      // Since when these count (es_model_counted_since, as `top` says it):
      // a page that joined a running program counts from then.
      {name: 'counted', value: I.counted_since}
    ]);
    var arows = [], w = S.info.width / 1e9;
    for (i = 0; i < S.tl.length; i++) arows.push([bucketX(i), S.tl[i][2] / w]);
    for (i = 0; i < S.drops.length; i++) arows.push([S.drops[i][0] / 1e9, NaN]);
    arows.sort(function (a, b) { return a[0] - b[0]; });
    // Rates under 1 KiB/s (none at all: a capability's first figure counts
    // in the total, not the rate) on a 0-1 KiB scale: left alone, the
    // axis read fractions of a byte in binary prefixes (256p-10, 512p-10).
    var topA = 0;
    for (i = 0; i < arows.length; i++) if (arows[i][1] > topA) topA = arows[i][1];
    chart('alloc-chart', arows, {
      labels: ['time', 'allocation rate (bytes/s)'], ylabel: 'bytes/s',
      axes: {y: {labelsKMG2: true, valueRange: topA < 1024 ? [0, 1024] : null}},
      colors: ['#59a14f'], fillGraph: true
    });
    legend('alloc-legend', [
      {name: 'allocation rate (bytes/s)', value: bytes(I.alloc_rate) + '/s', raw: I.alloc_rate, colour: '#59a14f'},
      {name: 'allocated in all', value: bytes(I.allocated), raw: I.allocated}
    ]);
  }

  function drawCaps() {
    // A strip per capability, tall enough to read when there are few.
    var cv = $('cap-strip'), n = Math.max(S.info.ncaps, 1), rowH = n <= 4 ? 32 : 16;
    var width = cv.clientWidth || 760;
    if (cv.width !== width) cv.width = width;
    if (cv.height !== n * rowH) cv.height = n * rowH;
    var ctx = cv.getContext('2d');
    ctx.fillStyle = '#e6e6e6';
    ctx.fillRect(0, 0, cv.width, cv.height);
    var nb = S.tl.length, from = 0, end = Math.max(nb, 1);
    cv.setAttribute('data-buckets', String(nb));
    cv.setAttribute('data-row-height', String(rowH));
    cv.setAttribute('data-bucket-ns', String(S.info.width));
    // Zoomed: the buckets of the charts' time range.
    if (view && S.info.width) {
      from = Math.max(0, Math.floor(view[0] * 1e9 / S.info.width));
      end = Math.max(from + 1, Math.ceil(view[1] * 1e9 / S.info.width));
    }
    var span = end - from, painted = 0;
    cv.setAttribute('data-view-buckets', from + ',' + end);
    for (var c = 0; c < S.caps.length; c++) {
      var a = S.caps[c];
      for (var i = from; 2 * i + 1 < a.length && i < end; i++) {
        var run = a[2 * i], gc = a[2 * i + 1];
        var x0 = Math.floor((i - from) * width / span), x1 = Math.max(Math.floor((i - from + 1) * width / span), x0 + 1);
        // Even a short run shows (a long run's buckets are long).
        if (gc > 0.001) {
          ctx.fillStyle = 'rgba(224,123,0,' + Math.min(1, 0.45 + gc) + ')';
          ctx.fillRect(x0, c * rowH + 1, x1 - x0, rowH / 2 - 1);
          painted++;
        }
        if (run > 0.001) {
          ctx.fillStyle = 'rgba(42,157,58,' + Math.min(1, 0.45 + run) + ')';
          ctx.fillRect(x0, c * rowH + rowH / 2, x1 - x0, rowH / 2 - 1);
          painted++;
        }
      }
    }
    cv.setAttribute('data-painted', String(painted));
    var none = !painted && S.info.events > 0;
    $('cap-strip-note').hidden = !none;
    text('cap-strip-note', none ? 'Nothing to paint: no capability ran Haskell code or a GC in the stream' +
         (S.info.no_flush && !S.info.ended ? ' yet (GHC 9.0 sends its events in 2 MiB steps and at exit)' : '') + '.' : '');
    // Each capability's share, and what it is doing as of the latest event
    // (a run or GC in progress is painted up to then).
    var html = '', what = ['idle', 'running', 'in GC'];
    for (c = 0; c < S.info.ncaps; c++) {
      var sh = S.info.cap_share[c] || 0, now = (S.info.cap_now || [])[c] || [0, 0];
      html += '<tr data-series="capability ' + c + '" data-now="' + what[now[0]] + '"><td>capability ' + c +
              '</td><td class="v" data-value="' + sh + '">' + (100 * sh).toFixed(1) + ' %</td><td class="now">' +
              what[now[0]] + (now[0] ? ' since ' + (now[1] / 1e9).toFixed(3) + ' s' : '') + '</td></tr>';
    }
    var body = $('cap-legend').tBodies[0];
    if (body.innerHTML !== html) body.innerHTML = html;
    drawSpanStrip(from, end);
  }

  // ---- The latest spans (S.spans.recent, client/web/json.c) on the
  // capabilities' time axis (buckets `from` to `end`): a lane per label,
  // the labels with the most of them first, six at most; each span a bar
  // from its start to its end (failed: red), translucent so that
  // overlapping ones darken.
  var SPAN_COLOURS = ['58,122,184', '142,68,173', '22,160,133', '211,84,0', '44,62,80', '127,140,141'];
  function drawSpanStrip(from, end) {
    var list = (S.spans && S.spans.recent) || [];
    $('span-row').hidden = $('span-row-note').hidden = !list.length;
    if (!list.length) return;
    var counts = {}, failed = {};
    list.forEach(function (x) {
      counts[x[0]] = (counts[x[0]] || 0) + 1;
      failed[x[0]] = (failed[x[0]] || 0) + x[4];
    });
    var lanes = Object.keys(counts).sort(function (a, b) {
      return counts[b] - counts[a] || (a < b ? -1 : 1);
    }).slice(0, SPAN_COLOURS.length);
    var cv = $('span-strip'), rowH = 14, width = $('cap-strip').width || 760;
    if (cv.width !== width) cv.width = width;
    if (cv.height !== lanes.length * rowH) cv.height = lanes.length * rowH;
    var ctx = cv.getContext('2d'), w = S.info.width || 1;
    ctx.fillStyle = '#f4f4f4';
    ctx.fillRect(0, 0, cv.width, cv.height);
    var perNs = width / ((end - from) * w), painted = 0;
    list.forEach(function (x) {
      var lane = lanes.indexOf(x[0]);
      var x0 = (x[2] * 1e9 - from * w) * perNs, x1 = (x[3] * 1e9 - from * w) * perNs;
      if (lane < 0 || x1 < 0 || x0 > width) return;
      x0 = Math.max(0, Math.floor(x0));
      x1 = Math.min(width, Math.max(Math.ceil(x1), x0 + 1));
      ctx.fillStyle = x[4] ? 'rgba(200,40,40,0.7)' : 'rgba(' + SPAN_COLOURS[lane] + ',0.45)';
      ctx.fillRect(x0, lane * rowH + 2, x1 - x0, rowH - 4);
      painted++;
    });
    cv.setAttribute('data-painted', String(painted));
    cv.setAttribute('data-lanes', JSON.stringify(lanes));
    var html = '';
    lanes.forEach(function (l, k) {
      html += '<tr data-series="' + esc(l) + '"><td><span class="sw" style="background:rgb(' + SPAN_COLOURS[k] +
        ')"></span> ' + esc(l) + '</td><td class="v">' + counts[l] + '</td><td class="v">' +
        (failed[l] || '') + '</td></tr>';
    });
    var body = $('span-legend').tBodies[0];
    if (body.innerHTML !== html) body.innerHTML = html;
  }


  // ---- Sparks (S.sparks, client/web/sparks.h): per capability, the rate
  // of sparks created and the sparks in the pool at each counters event,
  // and a table of what became of them, in all and per capability.
  var SPARK_COLS = [0, 3, 5, 4, 1, 2];  // created, converted, fizzled, GC'd, dud, overflowed

  function drawSparks() {
    var sp = S.sparks;
    if (!sp) return;
    var note = $('sparks-note');
    var state = !sp.seen ? 'none' : !sp.any ? 'no-sparks' : 'sparks';
    note.setAttribute('data-state', state);
    $('sparks-body').hidden = state !== 'sparks';
    if (state !== 'sparks') {
      text('sparks-note', state === 'none' ? 'no spark counters yet (the RTS posts them at GCs and at exit; ' +
           '+RTS -l\'s p class)' : 'no sparks: the program made none (par).');
      return;
    }
    text('sparks-note', sp.v[0] + ' sparks in ' + sp.caps.length + (sp.caps.length === 1 ? ' capability' : ' capabilities') +
         ', as the RTS counts them (+RTS -s); the charts have a point per spark counters event.');
    var n = sp.caps.length, rrows = [], prows = [], names = [], c, i;
    for (c = 0; c < n; c++) names.push('capability ' + c);
    for (c = 0; c < n; c++) {
      var pts = sp.caps[c].pts;
      for (i = 0; i < pts.length; i++) {
        var pr = [pts[i][0] / 1e9], rr = [pts[i][0] / 1e9];
        for (var k = 0; k < n; k++) { pr.push(k === c ? pts[i][7] : null); rr.push(null); }
        prows.push(pr);
        if (i > 0 && pts[i][0] > pts[i - 1][0]) {
          rr[1 + c] = (pts[i][1] - pts[i - 1][1]) * 1e9 / (pts[i][0] - pts[i - 1][0]);
          rrows.push(rr);
        }
      }
    }
    var byTime = function (a, b) { return a[0] - b[0]; };
    rrows.sort(byTime);
    prows.sort(byTime);
    var colours = names.map(function (x, j) { return COLOURS[j % COLOURS.length]; });
    chart('spark-rate-chart', rrows, {labels: ['time'].concat(names), ylabel: 'sparks created/s',
          axes: {y: {labelsKMB: true}}, colors: colours, drawPoints: true, pointSize: 2});
    chart('spark-pool-chart', prows, {labels: ['time'].concat(names), ylabel: 'sparks in the pool',
          axes: {y: {labelsKMB: true}}, colors: colours, stepPlot: true, drawPoints: true, pointSize: 2});
    // The most each capability's pool held: a pool that stayed empty draws
    // its line on the axis, under the other capabilities' (for the tests).
    $('spark-pool-chart').setAttribute('data-pool-max', JSON.stringify(sp.caps.map(function (cp) {
      return cp.pts.reduce(function (m, p) { return Math.max(m, p[7]); }, 0);
    })));
    var row = function (name, v, pool, rate, colour) {
      return '<tr data-series="' + name + '"><td>' +
             (colour ? '<span class="swatch" style="background:' + colour + '"></span>' : '') + name + '</td>' +
             SPARK_COLS.map(function (k) { return '<td class="v" data-value="' + v[k] + '">' + v[k] + '</td>'; }).join('') +
             '<td class="v" data-value="' + pool + '">' + pool + '</td><td class="v" data-value="' + rate +
             '">' + Math.round(rate) + '</td></tr>';
    };
    var html = row('all', sp.v, sp.pool, sp.rate);
    for (c = 0; c < n; c++) html += row(names[c], sp.caps[c].v, sp.caps[c].pool, sp.caps[c].rate, colours[c]);
    var body = $('spark-table').tBodies[0];
    if (body.innerHTML !== html) body.innerHTML = html;
    $('spark-events').hidden = !sp.events;
    if (sp.events)
      text('spark-events', 'Spark events (+RTS -lf): ' + ['create', 'dud', 'overflow', 'run', 'steal', 'fizzle', 'gc']
           .map(function (w, k) { return w + ' ' + sp.ev[k]; }).join(', ') + '.');
  }

  // The latest LIST_N markers (those matching the filter) with a count of
  // the rest, and every drop notice kept, newest first, in a box of bounded
  // height: the page does not grow with the run.
  function drawNotes() {
    var html = '', items = [];
    var f = ($('marks-filter').value || '').toLowerCase();
    var marks = S.marks.map(function (m) { return [m[0], '', 'marker: ' + m[1]]; });
    var kept = marks.length;
    if (f) marks = marks.filter(function (it) { return it[2].toLowerCase().indexOf(f) >= 0; });
    var matching = marks.length;
    marks = marks.slice(-LIST_N);
    var shown = marks.length;
    S.drops.forEach(function (d) {
      items.push([d[0], 'drop', 'drop notice: ' + d[1] + ' chunks (' + d[2].toFixed(1) + ' MiB) of the stream ' +
                 'lost here (a gap in every chart)']);
    });
    items = items.concat(marks);
    items.sort(function (a, b) { return b[0] - a[0]; });
    items.forEach(function (it) {
      html += '<li class="' + it[1] + '">' + (it[0] / 1e9).toFixed(3) + ' s: ' + esc(it[2]) + '</li>';
    });
    var ul = $('marks');
    if (ul.innerHTML !== html) ul.innerHTML = html;
    var total = S.info.marks || kept;
    var t = total ? 'the latest ' + shown + (f ? ' of ' + matching + ' matching "' + f + '"' : '') +
            ' of ' + total + (total === 1 ? ' marker' : ' markers') +
            (total > kept ? ' (the page keeps the last ' + kept + ')' : '') + ', newest first' : 'no marker yet';
    if (S.drops.length) t += '; ' + S.drops.length + (S.drops.length === 1 ? ' drop notice' : ' drop notices');
    text('marks-count', t);
    var mc = $('marks-count').dataset;
    mc.total = String(total);
    mc.kept = String(kept);
    mc.matching = String(matching);
    mc.shown = String(shown);
  }

  // ---- Threads: live threads over the run, the threads with the most
  // running time, and every thread the server sent (client/web/json.h).

  var THREAD_TOP = 10;

  function threadRow(r, total, all) {
    // r: [id, label, state, cap, running s, created s, running since s]
    var share = total > 0 ? (100 * r[4] / total).toFixed(1) + ' %' : '-';
    var attrs = ' data-id="' + r[0] + '" data-label="' + esc(r[1]) + '" data-state="' + esc(r[2]) +
                '" data-running="' + r[4] + '"';
    var name = r[1] ? esc(r[1]) : '<i>(no label)</i>';
    if (!all)
      return '<tr' + attrs + '><td title="' + esc(r[1]) + '">' + name + '</td><td class="v">' + r[0] +
             '</td><td>' + esc(r[2]) + '</td><td class="v">' + r[4].toFixed(3) + ' s</td><td class="v">' +
             share + '</td></tr>';
    return '<tr' + attrs + '><td class="v">' + r[0] + '</td><td>' + name + '</td><td>' + esc(r[2]) +
           '</td><td class="v">' + (r[3] < 0 ? '?' : r[3]) + '</td><td class="v">' + r[4].toFixed(6) +
           '</td><td class="v">' + share + '</td><td class="v">' + (r[5] < 0 ? '?' : r[5].toFixed(3)) +
           '</td></tr>';
  }

  function drawThreads() {
    var T = S.threads;
    if (!T) return;
    var rows = [];
    for (var i = 0; i < S.liveTl.length; i++)
      if (S.liveTl[i] !== null) rows.push([bucketX(i), S.liveTl[i]]);
    for (i = 0; i < S.drops.length; i++) rows.push([S.drops[i][0] / 1e9, NaN]);
    rows.sort(function (a, b) { return a[0] - b[0]; });
    // A count that stays one value over nearly the whole run (threads the
    // RTS starts at once and ends at the exit) draws a filled box that
    // reads as an empty chart: say it in words instead, and why there is
    // none at all.
    var counts = {}, n = 0, mode = null;
    for (i = 0; i < rows.length; i++) {
      var v = rows[i][1];
      if (v !== v) continue;
      counts[v] = (counts[v] || 0) + 1;
      n++;
      if (mode === null || counts[v] > counts[mode]) mode = v;
    }
    var why = !n ? 'No chart of live threads: no thread began or finished in the stream.' :
              counts[mode] >= 0.9 * n ? 'No chart of live threads: ' + mode + (+mode === 1 ? ' thread was' : ' threads were') +
                                        ' live nearly all along (threads began or finished only at the ends of the run).' : '';
    $('threads-chart').hidden = !!why;
    $('threads-chart-note').hidden = !why;
    text('threads-chart-note', why);
    if (!why)
      chart('threads-chart', rows, {labels: ['time', 'live threads'], ylabel: 'threads', colors: ['#b07aa1'],
                                    fillGraph: true, stepPlot: true, includeZero: true});
    var html = '';
    T.rows.slice(0, THREAD_TOP).forEach(function (r) { html += threadRow(r, T.run_s, false); });
    var body = $('threads-top').tBodies[0];
    if (body.innerHTML !== html) body.innerHTML = html;
    html = '';
    T.rows.forEach(function (r) { html += threadRow(r, T.run_s, true); });
    body = $('threads-all').tBodies[0];
    if (body.innerHTML !== html) body.innerHTML = html;
    // After the exit nothing is live: the RTS ends its last threads
    // without a "finished" stop, so a live count would be a stale one.
    var ended = S.info.ended || S.info.state === 'exited';
    var before = T.before_note;  // es_model_threads_before_note, as `top` says it
    text('threads-note', (ended ? '' : T.live + ' live now, ') + T.created + ' created' + before + ', ' +
         T.finished + ' finished; ' + T.run_s.toFixed(3) + ' s of running time in all' +
         (ended ? ' (the program exited).' : '.'));
    text('threads-all-summary', 'All threads: ' + T.rows.length + ' listed, most running time first' +
         (T.more ? '; and ' + T.more + ' more (' + T.more_s.toFixed(3) + ' s of running time)' : ''));
    var box = $('threads').dataset;
    box.live = String(T.live);
    box.created = String(T.created);
    box.listed = String(T.rows.length);
    box.more = String(T.more);
  }

  function drawInfo() {
    var I = S.info;
    // A stream that began after the program did (a start from Haskell)
    // never names what only the start-up events say: never "yet" then.
    var over = I.ended || I.state === 'file' || I.state === 'exited';
    var unnamed = I.late_start || over ? '(program not named in the stream)' : '(program not named yet)';
    text('program', I.program || unnamed);
    text('ghc', I.ghc ? 'GHC ' + I.ghc : I.no_flush ? 'GHC 9.0' : '');
    // GHC 9.0 cannot flush: say so while the program runs (its header tells).
    $('ghc90').hidden = !(I.no_flush && !I.ended && I.state !== 'file');
    text('state', {connecting: I.retry ? 'waiting for the program (--retry)' : 'connecting', connected: 'connected', exited: 'program exited',
                   lost: 'connection lost', file: 'recording'}[I.state] || I.state);
    text('source', I.source);
    text('pid', I.pid ? String(I.pid) : I.late_start || over ? 'not in the stream' : '?');
    // Classes of events switched off: a gap in the record, not an idle
    // program (es_model_classes_words, as `top` says it).
    $('classes-off').hidden = !I.classes_off;
    if (I.classes_off) text('classes-off', 'Event classes switched: ' + I.classes_off + '.');
    $('late-start').hidden = !I.late_start;
    text('late-start', 'Started from Haskell: the events the program wrote before it switched its ' +
         'eventlog to eventlog-socket were not streamed (its start-up' +
         (I.no_flush ? '; on GHC 9.0 also its name, arguments, pid and the kind of heap profile' : '') +
         '). docs/haskell.md: "What a start from Haskell loses".');
    text('uptime', I.events > 0 ? uptime(I.now > I.first ? I.now : 0) : '?');
    text('bytes', bytes(I.bytes));
    text('dropped', I.drops ? I.dropped_chunks + ' chunks (' + I.dropped_mib.toFixed(1) + ' MiB) in ' +
         I.drops + (I.drops === 1 ? ' drop notice' : ' drop notices') : 'nothing');
    $('dropped').dataset.notices = String(I.drops);
    $('dropped').className = I.drops ? 'lost-data' : '';
    // What losing nothing cost the program (the library's wait notices).
    $('waited-fact').hidden = !I.wait_notices;
    text('waited', I.lossless_wait_ms.toFixed(1) + ' ms (' + I.lossless_waits +
         (I.lossless_waits === 1 ? ' wait)' : ' waits)'));
    $('waited').dataset.ms = I.lossless_wait_ms.toFixed(1);
    // What streaming costs the program in CPU time (the cost notices the
    // server sends this connection).
    $('cost-fact').hidden = !I.cost_notices;
    // Per GiB only once the notices counted bytes sent ("nothing sent yet"
    // beside the bytes received would contradict them).
    text('cost', I.cost_ms_per_s.toFixed(1) + ' ms CPU/s' +
         (I.cost_s_per_gib >= 0 ? ' (' + I.cost_s_per_gib.toFixed(2) + ' s per GiB)' : '') +
         ': RTS ' + I.cost_rts.toFixed(1) + ', walker ' + I.cost_walker.toFixed(1) +
         ', loop ' + I.cost_loop.toFixed(1));
    $('cost').dataset.msPerS = I.cost_ms_per_s.toFixed(2);
    document.title = (I.program || I.source || 'eventlog-socket') + ' - eventlog-socket';
    $('exited').hidden = I.state !== 'exited';
    text('exited', 'The program exited.' + (I.retry ? ' Waiting for its next run (--retry).' : ''));
    text('run', String(I.run));
    $('run-fact').hidden = !(I.run > 1);
    // A report of a cut recording says so as a lost connection does.
    var cutFile = I.state === 'file' && I.error;
    $('lost').hidden = I.state !== 'lost' && !cutFile;
    if (I.state === 'lost')
      text('lost', 'Connection lost: ' + I.error + (I.retry ? ' Waiting for the program (--retry).' : ''));
    else if (cutFile)
      text('lost', 'The eventlog was cut: ' + I.error);
    var live = !document.body.classList.contains('report');
    ['btn-census', 'btn-start', 'btn-stop', 'btn-profile-start', 'btn-profile-stop'].forEach(function (id) { $(id).disabled = !I.control; });
    $('download').hidden = !(live && I.recording);
  }

  // ---- Time profile (S.flame, client/web/flame.h): the cost-centre
  // samples as a flame graph drawn by d3-flame-graph (client/web/vendor/),
  // the whole run's or the last seconds' (client/web/flame.js: the
  // selection it draws into, the zoom's path kept across updates).
  var flame = {chart: null, width: 0, range: 'all', version: null, zoom: []};

  function flameLabel(d) {
    var F = S.flame, all = F[flame.range].value || 1;
    return d.data.name + ': ' + (100 * d.value / all).toFixed(1) + ' % of the samples (' +
      d.value + ' of ' + all + (F.tick_ms > 0 ? ', ' + (d.value * F.tick_ms / 1000).toFixed(2) +
      ' s of CPU' : '') + ')';
  }

  function makeFlame(el, width) {
    el.textContent = '';
    el.__data__ = undefined;
    var c = window.flamegraph().width(width).cellHeight(18).minFrameSize(1).sort(true)
      .transitionDuration(0).label(flameLabel).setDetailsElement($('flame-details'))
      .onClick(function (d) { flame.zoom = window.esFlame.namePath(d); });
    flame.chart = c;
    flame.width = width;
    flame.version = null;
    return c;
  }

  function drawTime() {
    var F = S.flame, el = $('flame');
    $('time-body').hidden = !F;
    $('time-note').hidden = !!F;
    $('time-note').setAttribute('data-state', F ? 'samples' : 'none');
    if (!F || typeof window.flamegraph !== 'function') return;
    var tree = F[flame.range];
    text('flame-recent-s', String(F.recent_s));
    text('flame-count', (flame.range === 'all' ? F.samples : F.recent_samples) + ' samples' +
         (F.tick_ms > 0 ? ' (one per ' + F.tick_ms + ' ms per capability)' : '') +
         (F.oom ? '; out of memory: the profile is incomplete' : ''));
    var width = Math.max(300, Math.floor(el.parentNode.clientWidth || 800));
    var chart = flame.chart && flame.width === width ? flame.chart : makeFlame(el, width);
    var version = flame.range + ':' + (flame.range === 'all' ? F.samples : F.recent_samples) +
      ':' + tree.value + ':' + width;
    if (version === flame.version) return;
    flame.version = version;
    // A copy: the library turns what it is given into its tree in place.
    var data = JSON.parse(JSON.stringify(tree));
    if (el.__data__ === undefined) chart(window.esFlame.select(el).datum(data));
    else chart.update(data);
    var term = $('flame-search').value;
    if (term) chart.search(term);
    if (flame.zoom.length) {
      var d = window.esFlame.findPath(el.__data__, flame.zoom, function (n) { return n.children; });
      if (d) chart.zoomTo(d); else flame.zoom = [];
    }
    el.setAttribute('data-drawn', String(+el.getAttribute('data-drawn') + 1));
  }

  function flameControls() {
    var redraw = function () { flame.version = null; if (S && S.flame) drawTime(); };
    Array.prototype.forEach.call(document.querySelectorAll('input[name=flame-range]'), function (r) {
      r.addEventListener('change', function () { flame.range = r.value; flame.zoom = []; redraw(); });
    });
    $('flame-search').addEventListener('input', function (ev) {
      if (!flame.chart || !S || !S.flame) return;
      if (ev.target.value) flame.chart.search(ev.target.value); else flame.chart.clear();
    });
    $('flame-reset').addEventListener('click', function () {
      flame.zoom = [];
      if (flame.chart && S && S.flame) flame.chart.resetZoom();
    });
    // A new width draws anew, once the window has settled (a screenshot
    // may resize the page for a moment: nothing then).
    var resized = null;
    window.addEventListener('resize', function () {
      clearTimeout(resized);
      resized = setTimeout(function () { if (S && S.flame) drawTime(); }, 500);
    });
  }

  // ---- Spans (S.spans, client/web/json.c): per label, how many ended, their
  // total and mean, p50/p90/p99 (within 1/128 of the value), max, and how
  // many failed (an exception ended them: withSpan's FAIL).
  // A label's durations (json.c: [lo_s, hi_s, counts]) as bars, each bin
  // as tall as its share of the fullest, on a log scale from the shortest
  // to the longest; hover for a bin's range and count.
  function spanBins(h) {
    if (!h) return '';
    var lo = h[0], hi = h[1], c = h[2], most = Math.max.apply(null, c) || 1, n = c.length;
    var edge = function (k) { return lo * Math.pow(hi / lo, k / n); };
    var bars = c.map(function (v, k) {
      var px = v ? Math.max(1, Math.round(22 * v / most)) : 0;
      return '<span class="bin" style="height:' + px + 'px" data-count="' + v + '" title="' +
        duration(Math.round(edge(k) * 1e9)) + ' to ' + duration(Math.round(edge(k + 1) * 1e9)) +
        ': ' + v + (v === 1 ? ' span' : ' spans') + '"></span>';
    }).join('');
    return '<span class="bins" title="from ' + duration(Math.round(lo * 1e9)) + ' to ' +
      duration(Math.round(hi * 1e9)) + ', log scale">' + bars + '</span>';
  }

  function drawSpans() {
    var P = S.spans;
    $('spans-table').hidden = !P;
    $('spans-note').setAttribute('data-state', P ? 'spans' : 'none');
    if (!P) return;
    text('spans-note', P.ended + (P.ended === 1 ? ' span' : ' spans') + ' ended' +
         (P.unmatched ? '; ' + P.unmatched + ' STOP without a START in its thread' : '') +
         (P.dropped ? '; ' + P.dropped + ' left out (too many open, or their thread finished)' : '') +
         '. Percentiles within 1 %.');
    var html = '';
    P.labels.forEach(function (l) {
      html += '<tr><td title="' + esc(l[0]) + '">' + esc(l[0]) + '</td><td class="v" data-value="' +
        l[1] + '">' + l[1] + '</td>';
      for (var k = 2; k <= 7; k++)
        html += '<td class="v" data-value="' + l[k] + '">' + (l[k] < 0 ? '' : duration(Math.round(l[k] * 1e9))) + '</td>';
      html += '<td class="v" data-value="' + l[8] + '">' + (l[8] ? l[8] : '') + '</td>' +
        '<td>' + spanBins(l[9]) + '</td></tr>';
    });
    var body = $('spans-table').tBodies[0];
    if (body.innerHTML !== html) body.innerHTML = html;
  }

  function draw() {
    if (!S) return;
    drawInfo();
    drawHeap();
    drawGc();
    drawCaps();
    drawTime();
    drawSpans();
    drawSparks();
    drawThreads();
    drawNotes();
    document.body.setAttribute('data-drawn', String((+document.body.getAttribute('data-drawn') || 0) + 1));
  }

  // ---- The token: serve on another address than loopback prints the
  // page's URL with ?token=, and every request of the page carries it on
  // (never a cookie, which the browser would send to every port of the host).
  var TOKEN = new URLSearchParams(location.search).get('token');

  function withToken(url) {
    return TOKEN ? url + '?token=' + encodeURIComponent(TOKEN) : url;
  }

  // ---- Buttons: POST /api/COMMAND (the header keeps other sites out).

  function control(ev) {
    var cmd = ev.target.getAttribute('data-cmd');
    fetch(withToken('api/' + cmd), {method: 'POST', headers: {'X-Eventlog-Socket': '1'}})
      .then(function (r) { return r.text().then(function (t) { text('control-result', cmd + ': ' + t.trim()); }); })
      .catch(function (e) { text('control-result', cmd + ': ' + e); });
  }

  function start() {
    $('marks-filter').addEventListener('input', function () { if (S) drawNotes(); });
    flameControls();
    $('show-marks').addEventListener('change', function (ev) {
      showMarks = ev.target.checked;
      Object.keys(charts).forEach(function (id) { charts[id].g.updateOptions({}); });
    });
    var data = $('es-data');
    if (data) {
      document.body.classList.add('report');
      apply(JSON.parse(data.textContent));
      return;
    }
    ['btn-census', 'btn-start', 'btn-stop', 'btn-profile-start', 'btn-profile-stop'].forEach(function (id) {
      $(id).addEventListener('click', control);
    });
    $('download').setAttribute('href', withToken('recording.eventlog'));
    var es = new EventSource(withToken('events'));
    var on = function (ev) { apply(JSON.parse(ev.data)); };
    es.addEventListener('state', on);
    es.addEventListener('delta', on);
    es.onerror = function () {
      if (S && S.info.state !== 'exited') text('state', 'page disconnected from serve (retrying)');
    };
  }

  start();
})();
