// app.js, part 2 of 3 (the heap, GC and capability views). The Makefile joins client/web/app/*.js in
// name order into the one script the page loads: together they are one
// closure, opened in part 1 and closed in part 3.

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
  function noProfile(I) {
    if (I.censuses > 0)
      return 'its kind was not streamed' + (I.late_start ? ': started from Haskell' : '');
    var over = I.ended || I.state === 'file' || I.state === 'exited';
    if (I.no_flush && !I.ended)
      return over ? 'no heap profile: GHC 9.0 sends it at exit, and the eventlog ends before'
                  : 'no heap profile seen yet: GHC 9.0 sends it at exit (with +RTS -hT)';
    return over ? 'no heap profile: run the program with +RTS -hT' :
                  'no heap profile seen yet: run the program with +RTS -hT';
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
  }

