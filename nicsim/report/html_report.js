// The page script of `nicsim report` (nicsim/report/html_report.h, docs/report.md): draws the
// charts that html_report.cc chose and counted, with dygraphs 2.2 (inlined before this script).
// Every string from the results file reaches the DOM as text (textContent) or, where dygraphs
// takes HTML (axis titles, tick and value labels), escaped by esc(); dygraphs escapes series
// names itself (its legend plugin), so those are passed as they are.
//
// For the browser test (tests/report/html_report_test.py) each chart's box carries
// data-expected (values html_report.cc put in it) and data-drawn (values dygraphs laid out on
// its first draw) and data-x-range (the x range shown, after every zoom); <html> gets data-ready="1", data-charts, data-charts-ok and data-errors
// when the page is drawn.
(function () {
  'use strict';
  var root = document.documentElement;
  var data = JSON.parse(document.getElementById('nicsim-data').textContent);
  var graphs = [];      // the selected run's charts (destroyed on a change of run)
  var timeGraphs = [];  // charts over time: zoom follows between them
  var syncing = false;

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Values dygraphs laid out for drawing: finite y on the canvas (nulls and gaps excluded).
  function drawnPoints(g) {
    var n = 0;
    var sets = g.layout_ ? g.layout_.points : [];
    for (var s = 0; s < sets.length; s++) {
      for (var i = 0; i < sets[s].length; i++) {
        var p = sets[s][i];
        if (p.yval !== null && isFinite(p.yval) && isFinite(p.canvasy)) n++;
      }
    }
    return n;
  }

  // Bars for a categorical x (stages): one bar per series side by side around each x.
  function barPlotter(e) {
    var ctx = e.drawingContext;
    var area = e.plotArea;
    var g = e.dygraph;
    var slot = (g.toDomXCoord(1) - g.toDomXCoord(0)) * 0.8;
    var width = slot / e.seriesCount;
    var y0 = g.toDomYCoord(0);
    ctx.fillStyle = e.color;
    for (var i = 0; i < e.points.length; i++) {
      var p = e.points[i];
      if (p.yval === null || !isFinite(p.canvasy)) continue;
      var left = p.canvasx - slot / 2 + e.seriesIndex * width;
      ctx.fillRect(left, Math.min(p.canvasy, y0), width - 1, Math.abs(y0 - p.canvasy));
    }
    void area;
  }

  // Shaded phases (rrul: idle / load / idle) with their names, under the data.
  function phaseUnderlay(phases) {
    return function (ctx, area, g) {
      for (var i = 0; i < phases.length; i++) {
        var left = g.toDomXCoord(phases[i][1]);
        var right = g.toDomXCoord(phases[i][2]);
        ctx.fillStyle = i % 2 ? 'rgba(0,0,0,0.05)' : 'rgba(0,0,0,0.02)';
        ctx.fillRect(left, area.y, right - left, area.h);
        ctx.fillStyle = '#666';
        ctx.font = '11px sans-serif';
        ctx.fillText(String(phases[i][0]), left + 4, area.y + 12);
      }
    };
  }

  function syncZoom(g) {
    if (syncing || timeGraphs.indexOf(g) < 0) return;
    syncing = true;
    var range = g.isZoomed('x') ? g.xAxisRange() : null;
    for (var i = 0; i < timeGraphs.length; i++) {
      if (timeGraphs[i] !== g) timeGraphs[i].updateOptions({dateWindow: range});
    }
    syncing = false;
  }

  function options(spec, box, legend, phases) {
    var o = {
      labels: spec.labels,
      xlabel: esc(spec.xlabel),
      ylabel: esc(spec.ylabel),
      labelsDiv: legend,
      legend: 'always',
      labelsSeparateLines: false,
      colors: spec.colors,
      connectSeparatedPoints: true,
      strokeWidth: 1.5,
      includeZero: true,
      xRangePad: 8,
      axes: {
        x: {valueFormatter: function (x) { return String(+x.toPrecision(6)); }},
        // 120k for queue bytes (labelsKMB would also write 0.5 as 500m: bytes only).
        y: {axisLabelWidth: 56, labelsKMB: spec.ylabel === 'bytes'}
      },
      drawCallback: function (g, initial) {
        if (initial) box.dataset.drawn = drawnPoints(g);
        else syncZoom(g);
        box.dataset.xRange = g.xAxisRange().map(function (v) { return v.toPrecision(4); }).join(',');
      }
    };
    if (spec.kind === 'step') o.stepPlot = true;
    if (spec.kind === 'cdf') {
      o.stepPlot = true;
      o.includeZero = false;
      o.valueRange = [0, 1.02];
    }
    if (spec.kind === 'points') {
      o.strokeWidth = 0;
      o.drawPoints = true;
      o.pointSize = 5;
      o.highlightCircleSize = 7;
      o.xRangePad = 24;
      // Both directions of a run share its x: the second smaller, so neither hides the other.
      o.series = {};
      // (The knee has many series, one point each per run: one size.)
      spec.labels.slice(1).forEach(function (label, i) {
        o.series[label] = {pointSize: spec.uniform ? 4 : 6 - 3 * i};
      });
    }
    if (spec.kind === 'bars') {
      var ticks = spec.ticks;
      o.plotter = barPlotter;
      o.dateWindow = [-0.6, ticks.length - 0.4];
      o.xRangePad = 0;
      o.axes.x = {
        ticker: function () {
          return ticks.map(function (t, i) { return {v: i, label: esc(t)}; });
        },
        valueFormatter: function (x) { return esc(ticks[Math.round(x)] || ''); }
      };
    }
    if (spec.logscale) {  // the knee: microseconds to a saturated ring's milliseconds
      o.logscale = true;
      o.includeZero = false;
    }
    if (spec.sync === 'time' && phases && phases.length) o.underlayCallback = phaseUnderlay(phases);
    return o;
  }

  // A chart box: title, graph, legend (and, for the trade-off, the hovered run's parameters).
  function chart(parent, spec, phases) {
    var box = el('div', 'chart');
    box.dataset.chart = spec.id;
    box.dataset.expected = spec.points;
    box.appendChild(el('h3', '', spec.title));
    var graph = el('div', 'graph');
    var legend = el('div', 'legend');
    box.appendChild(graph);
    box.appendChild(legend);
    parent.appendChild(box);
    var o = options(spec, box, legend, phases);
    if (spec.info) {
      var info = el('div', 'hover-info');
      info.id = spec.id + '-info';
      box.appendChild(info);
      o.highlightCallback = function (event, x, points, row) { showInfo(info, spec.info[row]); };
    }
    var g = new Dygraph(graph, spec.rows, o);
    if (spec.info && spec.rows.length) {
      g.setSelection(0, undefined, false, true);
    }
    return g;
  }

  // The hovered run: its label, parameters, repetitions and values (as text).
  function showInfo(box, info) {
    box.textContent = '';
    if (!info) return;
    box.appendChild(el('div', 'hover-label', info.label || '(single)'));
    var list = el('ul');
    info.params.forEach(function (p) { list.appendChild(el('li', '', p[0] + ' = ' + p[1])); });
    info.values.forEach(function (v) {
      var text = v[0] + ': ' + v[1].toPrecision(4);
      if (v[2] !== v[3]) text += ' [' + v[2].toPrecision(4) + ', ' + v[3].toPrecision(4) + ']';
      list.appendChild(el('li', '', text));
    });
    if (info.repetitions > 1) list.appendChild(el('li', '', info.repetitions + ' repetitions'));
    box.appendChild(list);
  }

  function selectedRun() {
    var m = /^#run=(\d+)$/.exec(location.hash);
    var i = m ? parseInt(m[1], 10) : 0;
    return i < data.runs.length ? i : 0;
  }

  function showRun(i) {
    graphs.forEach(function (g) { g.destroy(); });
    graphs = [];
    timeGraphs = [];
    var run = data.runs[i];
    document.getElementById('run-select').value = String(i);
    var params = document.getElementById('run-params');
    params.textContent = '';
    params.appendChild(el('span', 'backend', 'backend: ' + run.backend));
    run.params.forEach(function (p) { params.appendChild(el('span', 'param', p[0] + ' = ' + p[1])); });
    var rows = document.querySelectorAll('#run-table tbody tr');
    for (var r = 0; r < rows.length; r++) rows[r].classList.toggle('selected', r === i);
    var charts = document.getElementById('run-charts');
    charts.textContent = '';
    run.charts.forEach(function (spec) {
      var g = chart(charts, spec, run.phases);
      graphs.push(g);
      if (spec.sync === 'time') timeGraphs.push(g);
    });
    document.getElementById('run-missing').textContent =
        run.missing.length ? 'Not in this run: ' + run.missing.join('; ') + '.' : '';
    root.dataset.run = i;
  }

  function tally() {
    var boxes = document.querySelectorAll('.chart');
    var ok = 0;
    for (var i = 0; i < boxes.length; i++) {
      if (boxes[i].dataset.drawn === boxes[i].dataset.expected) ok++;
    }
    root.dataset.charts = boxes.length;
    root.dataset.chartsOk = ok;
    root.dataset.errors = (window.nicsimErrors || []).length;
  }

  if (data.tradeoff) chart(document.getElementById('tradeoff-charts'), data.tradeoff, []);
  if (data.knee) chart(document.getElementById('knee-charts'), data.knee, []);
  document.getElementById('run-select').addEventListener('change', function (e) {
    location.hash = 'run=' + e.target.value;
  });
  window.addEventListener('hashchange', function () {
    showRun(selectedRun());
    tally();
  });
  showRun(selectedRun());
  tally();
  root.dataset.ready = '1';
})();
