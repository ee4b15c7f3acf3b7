// The page of `eventlog-socket serve` and `report`: it keeps the state that
// the server sends (a whole state, then deltas; see client/web/json.h) and
// draws it with dygraphs. In a report the state is inlined in the page
// (script#es-data) and nothing is fetched.
// app.js, part 1 of 3 (state, charts, markers, zoom, legends). The Makefile joins client/web/app/*.js in
// name order into the one script the page loads: together they are one
// closure, opened in part 1 and closed in part 3.
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
    el.setAttribute('data-rows', String(data.length));
    // Rows that are gaps (every value NaN: a drop notice's time).
    var gaps = 0;
    for (var i = 0; i < data.length; i++) {
      var all = data[i].length > 1;
      for (var k = 1; k < data[i].length && all; k++) all = data[i][k] !== data[i][k];
      if (all) gaps++;
    }
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

