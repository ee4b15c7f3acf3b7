// The page of `eventlog-socket serve` and `report`: it keeps the state that
// the server sends (a whole state, then deltas; see client/webjson.h) and
// draws it with dygraphs. In a report the state is inlined in the page
// (script#es-data) and nothing is fetched.
(function () {
  'use strict';

  var TOP_N = 10;
  var MAX_MARKS = 1024, MAX_DROPS = 256;
  var COLOURS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
                 '#ff9da7', '#9c755f', '#bab0ac', '#86bcb6'];
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
      S = {tl: [], caps: [], labels: [], census: [], pauses: [], marks: [], drops: []};
    S.info = d.info;
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
    S.census.length = Math.min(S.census.length, d.census_from);
    Array.prototype.push.apply(S.census, d.census);
    S.pauses.length = Math.min(S.pauses.length, d.pause_from);
    Array.prototype.push.apply(S.pauses, d.pauses);
    Array.prototype.push.apply(S.marks, d.marks);
    if (S.marks.length > MAX_MARKS) S.marks.splice(0, S.marks.length - MAX_MARKS);
    Array.prototype.push.apply(S.drops, d.drops);
    if (S.drops.length > MAX_DROPS) S.drops.splice(0, S.drops.length - MAX_DROPS);
    schedule();
  }

  function schedule() {
    if (drawPending) return;
    drawPending = true;
    setTimeout(function () { drawPending = false; draw(); }, 200);
  }

  // ---- Drawing.

  // Markers and drop notices on every time axis.
  function underlay(ctx, area, g) {
    if (!S) return;
    ctx.save();
    ctx.font = '10px sans-serif';
    var bands = 0;
    for (var i = 0; i < S.drops.length; i++) {
      var x = g.toDomXCoord(S.drops[i][0] / 1e9);
      if (x < area.x || x > area.x + area.w) continue;
      ctx.fillStyle = 'rgba(200,0,0,0.25)';
      ctx.fillRect(x - 3, area.y, 6, area.h);
      bands++;
    }
    // What was painted, also as text (tests, and whoever inspects the page).
    if (g.maindiv_) g.maindiv_.setAttribute('data-drop-bands', String(bands));
    ctx.strokeStyle = 'rgba(90,90,90,0.6)';
    ctx.fillStyle = '#555';
    for (var j = 0; j < S.marks.length; j++) {
      var mx = g.toDomXCoord(S.marks[j][0] / 1e9);
      if (mx < area.x || mx > area.x + area.w) continue;
      ctx.beginPath();
      ctx.setLineDash([3, 3]);
      ctx.moveTo(mx, area.y);
      ctx.lineTo(mx, area.y + area.h);
      ctx.stroke();
      if (S.marks.length <= 40) ctx.fillText(S.marks[j][1].slice(0, 24), mx + 2, area.y + 10);
    }
    ctx.restore();
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
    opts.legend = 'never';
    opts.xlabel = 'seconds since the program started';
    opts.connectSeparatedPoints = true;
    if (charts[id] && charts[id].nseries === opts.labels.length) {
      opts.file = data;
      charts[id].g.updateOptions(opts);
    } else {
      if (charts[id]) charts[id].g.destroy();
      charts[id] = {g: new Dygraph(el, data, opts), nseries: opts.labels.length};
    }
  }

  function legend(id, rows) {
    var body = $(id).tBodies[0] || $(id).createTBody();
    var html = '';
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      html += '<tr data-series="' + esc(r.name) + '"><td>' +
              (r.colour ? '<span class="swatch" style="background:' + r.colour + '"></span>' : '') +
              esc(r.name) + '</td><td class="v"' +
              (r.raw !== undefined ? ' data-value="' + r.raw + '"' : '') + '>' + esc(r.value) +
              '</td></tr>';
    }
    if (body.innerHTML !== html) body.innerHTML = html;
  }

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
                    .replace(/"/g, '&quot;');
  }

  // Time of bucket i's middle, in seconds.
  function bucketX(i) { return (i + 0.5) * S.info.width / 1e9; }

  function drawHeap() {
    var labels = S.labels, census = S.census;
    // The top N labels by their largest census figure; the rest is "other".
    var peak = {};
    for (var i = 0; i < census.length; i++) {
      var e = census[i][2];
      for (var k = 0; k < e.length; k += 2)
        if (!(e[k] in peak) || e[k + 1] > peak[e[k]]) peak[e[k]] = e[k + 1];
    }
    var ids = Object.keys(peak).map(Number);
    ids.sort(function (a, b) { return peak[b] - peak[a]; });
    var top = ids.slice(0, TOP_N), slot = {};
    top.forEach(function (id, j) { slot[id] = j; });
    var hasOther = ids.length > TOP_N;
    var names = top.map(function (id) { return labels[id] || '?'; });
    if (hasOther) names.push('other');
    var nstack = names.length;
    // Rows: censuses (stacked, cumulative), heap size/live per bucket, NaN at drops.
    var rows = [];
    for (i = 0; i < census.length; i++) {
      var v = new Array(nstack).fill(0);
      e = census[i][2];
      for (k = 0; k < e.length; k += 2) {
        var j = e[k] in slot ? slot[e[k]] : nstack - 1;
        v[j] += e[k + 1];
      }
      var row = [census[i][0] / 1e9];
      // Drawn top first: series s holds the sum of stack parts s..end.
      var cum = 0, cums = [];
      for (j = nstack - 1; j >= 0; j--) { cum += v[j]; cums[j] = cum; }
      row = row.concat(cums, [null, null]);
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
    // The chart library keys its series by name in plain objects, and a
    // label from the stream can be any string ('__proto__', 'constructor',
    // 'heap size'): the chart gets names of its own ('s0', 's1', ...; 'size'
    // and 'live'), the legend below the labels.
    var series = {}, colours = [], keys = [];
    for (j = 0; j < nstack; j++) {
      keys.push('s' + j);
      series['s' + j] = {fillGraph: true, strokeWidth: 1, drawPoints: census.length < 3, pointSize: 3};
      colours.push(COLOURS[j % COLOURS.length]);
    }
    var sizeName = 'heap size', liveName = 'live bytes';
    series.size = {fillGraph: false, strokeWidth: 2};
    series.live = {fillGraph: false, strokeWidth: 2, strokePattern: [6, 3]};
    colours.push('#000', '#666');
    chart('heap-chart', rows, {
      labels: ['time'].concat(keys, ['size', 'live']), series: series, colors: colours,
      fillAlpha: 1.0, ylabel: 'bytes', axes: {y: {labelsKMG2: true}}, drawPoints: false
    });
    // The legend: the latest census's figure of each series.
    var last = census.length ? census[census.length - 1] : null;
    var lastV = new Array(nstack).fill(0);
    if (last)
      for (k = 0; k < last[2].length; k += 2) {
        j = last[2][k] in slot ? slot[last[2][k]] : nstack - 1;
        lastV[j] += last[2][k + 1];
      }
    var lrows = names.map(function (n, j) {
      return {name: n, value: bytes(lastV[j]), raw: lastV[j], colour: colours[j]};
    });
    lrows.push({name: sizeName, value: bytes(S.info.heap_size), raw: S.info.heap_size, colour: '#000'});
    lrows.push({name: liveName, value: bytes(S.info.heap_live), raw: S.info.heap_live, colour: '#666'});
    legend('heap-legend', lrows);
    text('census-count', String(S.info.censuses));
    var tot = $('census-total');
    tot.setAttribute('data-bytes', last ? String(last[1]) : '0');
    text('census-total', bytes(last ? last[1] : 0));
    text('heap-size', bytes(S.info.heap_size));
    text('heap-live', bytes(S.info.heap_live));
    var kinds = {1: 'cost centre', 2: 'module', 3: 'closure description', 4: 'type description',
                 5: 'retainer', 6: 'biography', 7: 'closure type', 8: 'info table'};
    text('breakdown', S.info.heap_prof ? (kinds[S.info.breakdown] || 'label') :
         'label (no heap profile seen yet: run the program with +RTS -hT; GHC 9.0 sends it at exit)');
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

  function drawGc() {
    var rows = [];
    for (var i = 0; i < S.pauses.length; i++) {
      var p = S.pauses[i], ms = Math.max(p[1], 1) / 1e6;
      rows.push([p[0] / 1e9, p[2] ? null : ms, p[2] ? ms : null]);
    }
    chart('pause-chart', rows, {
      labels: ['time', 'minor GC pause (ms)', 'major GC pause (ms)'], drawPoints: true,
      strokeWidth: 0, pointSize: 2, logscale: true, ylabel: 'pause (ms)', axes: {y: {axisLabelWidth: 60}}, colors: ['#4e79a7', '#e15759']
    });
    var I = S.info;
    legend('gc-legend', [
      {name: 'minor GCs', value: String(I.minor), raw: I.minor, colour: '#4e79a7'},
      {name: 'major GCs', value: String(I.major), raw: I.major, colour: '#e15759'},
      {name: 'longest pause', value: duration(I.pause_max), raw: I.pause_max},
      {name: 'median pause', value: duration(I.p50), raw: I.p50},
      {name: '99th percentile', value: duration(I.p99), raw: I.p99},
      {name: 'time in GC', value: (100 * I.gc_share).toFixed(1) + ' %', raw: I.gc_share}
    ]);
    var arows = [], w = S.info.width / 1e9;
    for (i = 0; i < S.tl.length; i++) arows.push([bucketX(i), S.tl[i][2] / w]);
    for (i = 0; i < S.drops.length; i++) arows.push([S.drops[i][0] / 1e9, NaN]);
    arows.sort(function (a, b) { return a[0] - b[0]; });
    chart('alloc-chart', arows, {
      labels: ['time', 'allocation rate (bytes/s)'], ylabel: 'bytes/s', axes: {y: {labelsKMG2: true}},
      colors: ['#59a14f'], fillGraph: true
    });
    legend('alloc-legend', [
      {name: 'allocation rate (bytes/s)', value: bytes(I.alloc_rate) + '/s', raw: I.alloc_rate, colour: '#59a14f'},
      {name: 'allocated in all', value: bytes(I.allocated), raw: I.allocated}
    ]);
  }

  function drawCaps() {
    var cv = $('cap-strip'), n = Math.max(S.info.ncaps, 1), rowH = 16;
    var width = cv.clientWidth || 760;
    if (cv.width !== width) cv.width = width;
    if (cv.height !== n * rowH) cv.height = n * rowH;
    var ctx = cv.getContext('2d');
    ctx.fillStyle = '#e6e6e6';
    ctx.fillRect(0, 0, cv.width, cv.height);
    var nb = S.tl.length, end = Math.max(nb, 1);
    cv.setAttribute('data-buckets', String(nb));
    cv.setAttribute('data-bucket-ns', String(S.info.width));
    for (var c = 0; c < S.caps.length; c++) {
      var a = S.caps[c];
      for (var i = 0; 2 * i + 1 < a.length; i++) {
        var run = a[2 * i], gc = a[2 * i + 1];
        var x0 = Math.floor(i * width / end), x1 = Math.max(Math.floor((i + 1) * width / end), x0 + 1);
        if (gc > 0.001) {
          ctx.fillStyle = 'rgba(224,123,0,' + Math.min(1, 0.3 + gc) + ')';
          ctx.fillRect(x0, c * rowH + 1, x1 - x0, rowH / 2 - 1);
        }
        if (run > 0.001) {
          ctx.fillStyle = 'rgba(42,157,58,' + Math.min(1, 0.15 + run) + ')';
          ctx.fillRect(x0, c * rowH + rowH / 2, x1 - x0, rowH / 2 - 1);
        }
      }
    }
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
  }

  function drawNotes() {
    var html = '', items = [];
    S.marks.forEach(function (m) { items.push([m[0], '', 'marker: ' + m[1]]); });
    S.drops.forEach(function (d) {
      items.push([d[0], 'drop', 'drop notice: ' + d[1] + ' chunks (' + d[2].toFixed(1) + ' MiB) of the stream ' +
                 'lost here (a gap in every chart)']);
    });
    items.sort(function (a, b) { return a[0] - b[0]; });
    items.slice(-200).forEach(function (it) {
      html += '<li class="' + it[1] + '">' + (it[0] / 1e9).toFixed(3) + ' s: ' + esc(it[2]) + '</li>';
    });
    var ul = $('marks');
    if (ul.innerHTML !== html) ul.innerHTML = html;
  }

  function drawInfo() {
    var I = S.info;
    text('program', I.program || '(program not named yet)');
    text('ghc', I.ghc ? 'GHC ' + I.ghc : '');
    text('state', {connecting: I.retry ? 'waiting for the program (--retry)' : 'connecting', connected: 'connected', exited: 'program exited',
                   lost: 'connection lost', file: 'recording'}[I.state] || I.state);
    text('source', I.source);
    text('pid', I.pid ? String(I.pid) : '?');
    text('uptime', uptime(I.now > I.first ? I.now : 0));
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
    text('cost', I.cost_ms_per_s.toFixed(1) + ' ms CPU/s (' +
         (I.cost_s_per_gib >= 0 ? I.cost_s_per_gib.toFixed(2) + ' s per GiB' : 'nothing sent yet') +
         '): RTS ' + I.cost_rts.toFixed(1) + ', walker ' + I.cost_walker.toFixed(1) +
         ', loop ' + I.cost_loop.toFixed(1));
    $('cost').dataset.msPerS = I.cost_ms_per_s.toFixed(2);
    document.title = (I.program || 'eventlog-socket') + ' - eventlog-socket';
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
    ['btn-census', 'btn-start', 'btn-stop'].forEach(function (id) { $(id).disabled = !I.control; });
    $('download').hidden = !(live && I.recording);
  }

  function draw() {
    if (!S) return;
    drawInfo();
    drawHeap();
    drawGc();
    drawCaps();
    drawNotes();
    document.body.setAttribute('data-drawn', String((+document.body.getAttribute('data-drawn') || 0) + 1));
  }

  // ---- Buttons: POST /api/COMMAND (the header keeps other sites out).

  function control(ev) {
    var cmd = ev.target.getAttribute('data-cmd');
    fetch('api/' + cmd, {method: 'POST', headers: {'X-Eventlog-Socket': '1'}})
      .then(function (r) { return r.text().then(function (t) { text('control-result', cmd + ': ' + t.trim()); }); })
      .catch(function (e) { text('control-result', cmd + ': ' + e); });
  }

  function start() {
    var data = $('es-data');
    if (data) {
      document.body.classList.add('report');
      apply(JSON.parse(data.textContent));
      return;
    }
    ['btn-census', 'btn-start', 'btn-stop'].forEach(function (id) {
      $(id).addEventListener('click', control);
    });
    var es = new EventSource('events');
    var on = function (ev) { apply(JSON.parse(ev.data)); };
    es.addEventListener('state', on);
    es.addEventListener('delta', on);
    es.onerror = function () {
      if (S && S.info.state !== 'exited') text('state', 'page disconnected from serve (retrying)');
    };
  }

  start();
})();
