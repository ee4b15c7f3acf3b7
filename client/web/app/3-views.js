// app.js, part 3 of 3 (sparks, notes, threads, the header, the loop). The Makefile joins client/web/app/*.js in
// name order into the one script the page loads: together they are one
// closure, opened in part 1 and closed in part 3.

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
    var before = T.known > T.created ? ' (and ' + (T.known - T.created) + ' begun before the stream)' : '';
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
    ['btn-census', 'btn-start', 'btn-stop'].forEach(function (id) { $(id).disabled = !I.control; });
    $('download').hidden = !(live && I.recording);
  }

  function draw() {
    if (!S) return;
    drawInfo();
    drawHeap();
    drawGc();
    drawCaps();
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
    ['btn-census', 'btn-start', 'btn-stop'].forEach(function (id) {
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
