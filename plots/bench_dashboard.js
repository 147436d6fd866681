// The dashboard's charts (plots/bench_dashboard.py writes the pages and copies this file beside them).
// A benchmark page carries its data in <script id="lobench-data">; this draws the gated metric and its
// fraction of the yardstick's rate with Plotly, marks the gate's regressions, and reports into
// #lobench-status what it drew and any error (read by the headless-browser test).
(function () {
  "use strict";
  var status = document.getElementById("lobench-status");
  function report(charts, regressions) {
    status.dataset.charts = String(charts);
    status.dataset.regressions = String(regressions);
    status.dataset.errors = String(window.lobenchErrors.length);
    status.dataset.errorText = window.lobenchErrors.join(" | ");
    status.dataset.ready = "1";
  }
  var holder = document.getElementById("lobench-data");
  if (!holder) { report(0, 0); return; }
  var d = JSON.parse(holder.textContent);
  if (d.machines) { acrossMachines(d); return; }
  var pts = d.points;
  var x = pts.map(function (p, i) { return p.date && p.date !== "?" ? p.date : i; });
  function pct(v) { return v === null ? "-" : (100 * v).toFixed(1) + " %"; }
  var hover = pts.map(function (p) {
    if (d.paired) {
      return "commit " + p.commit + " against " + p.base_commit + " (same run)<br>" + p.date + "<br>" + p.machine +
        "<br>ratio " + p.median.toFixed(3) + " [" + p.min.toFixed(3) + ", " + p.max.toFixed(3) + "], " + p.n +
        " rounds, CV of the ratios " + pct(p.cv) + "<br>gate: " + p.verdict +
        (p.p === null ? "" : ", p " + p.p.toPrecision(3)) + "<br>candidate " + p.seconds.toPrecision(4) +
        " s, baseline " + p.base_seconds.toPrecision(4) + " s";
    }
    return "commit " + p.commit + "<br>" + p.date + "<br>" + p.machine + "<br>median " + p.median.toPrecision(4) +
      " (min " + p.min.toPrecision(4) + ", max " + p.max.toPrecision(4) + ", CV " + pct(p.cv) + ", n " + p.n + ")" +
      "<br>vs previous: " + p.verdict + (p.ratio === null ? "" : " " + p.ratio.toFixed(3) +
      (p.p === null ? "" : ", p " + p.p.toPrecision(3)));
  });
  function series(y, lo, hi, name, color) {
    return { x: x, y: y, name: name, mode: "lines+markers", type: "scatter", line: { color: color },
             error_y: { type: "data", symmetric: false, array: hi.map(function (v, i) { return v - y[i]; }),
                        arrayminus: lo.map(function (v, i) { return y[i] - v; }), thickness: 1 },
             text: hover, customdata: pts.map(function (p) { return p.commit; }),
             hovertemplate: "%{text}<extra></extra>" };
  }
  function markers(y, verdict, name, symbol, color) {
    var idx = pts.map(function (p, i) { return p.verdict === verdict ? i : -1; }).filter(function (i) { return i >= 0; });
    return { x: idx.map(function (i) { return x[i]; }), y: idx.map(function (i) { return y[i]; }), name: name,
             mode: "markers", type: "scatter", marker: { symbol: symbol, size: 16, color: color },
             text: idx.map(function (i) { return hover[i]; }),
             customdata: idx.map(function (i) { return pts[i].commit; }), hovertemplate: "%{text}<extra>" + name + "</extra>",
             meta: verdict };
  }
  var layout = function (title, ytitle) {
    return { title: { text: title }, xaxis: { title: { text: "run" } }, yaxis: { title: { text: ytitle } },
             legend: { orientation: "h", y: -0.25 }, margin: { t: 50 }, hovermode: "closest", shapes: [] };
  };
  var y = pts.map(function (p) { return p.median; });
  var slow = markers(y, "slower", d.paired ? "regression (gate: slower than the baseline commit beyond the threshold)"
                                           : "regression (gate: slower than the previous run)", "triangle-up", "#d00");
  var fast = markers(y, "faster", "improvement (gate: faster)", "triangle-down", "#080");
  var metricLayout = d.paired
    ? layout(d.name + " on " + d.machine, "candidate / baseline, same round (lower is faster)")
    : layout(d.name + " on " + d.machine, "time / yardstick time (lower is faster)");
  if (d.paired) {
    [1, 1 + d.threshold].forEach(function (level, i) {
      metricLayout.shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: level, y1: level,
                                 line: { dash: i ? "dash" : "dot", color: i ? "#d00" : "#888" } });
    });
  }
  var charts = [Plotly.newPlot("metric", [series(y, pts.map(function (p) { return p.min; }),
                               pts.map(function (p) { return p.max; }),
                               d.paired ? "median ratio, 95 % interval" : "median of the repetitions", "#1f77b4"),
                               slow, fast], metricLayout, { responsive: true, displaylogo: false })];
  if (d.paired) {
    var seconds = function (key) { return pts.map(function (p) { return p[key]; }); };
    charts.push(Plotly.newPlot("fraction", [
      series(seconds("seconds"), seconds("seconds_min"), seconds("seconds_max"), "candidate (median, min-max)", "#1f77b4"),
      series(seconds("base_seconds"), seconds("base_seconds_min"), seconds("base_seconds_max"),
             "baseline commit, same run", "#7f7f7f")],
      layout("absolute time on this machine (each run's own minutes)", "seconds per step"),
      { responsive: true, displaylogo: false }));
  }
  var hasFrac = !d.paired && pts.some(function (p) { return p.frac !== null; });
  if (hasFrac) {
    var f = pts.map(function (p) { return p.frac; });
    var fl = layout("fraction of the yardstick's rate (above 1: a measurement error)", "fraction of SGEMM rate");
    fl.shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: 1, y1: 1, line: { dash: "dash", color: "#b60" } });
    var above = pts.map(function (p, i) { return p.frac !== null && p.frac > 1 ? i : -1; })
                   .filter(function (i) { return i >= 0; });
    charts.push(Plotly.newPlot("fraction", [series(f, pts.map(function (p) { return p.frac_min; }),
        pts.map(function (p) { return p.frac_max; }), "median fraction", "#9467bd"),
        { x: above.map(function (i) { return x[i]; }), y: above.map(function (i) { return f[i]; }), mode: "markers",
          type: "scatter", name: "above the yardstick", marker: { symbol: "x", size: 14, color: "#b60" } }],
        fl, { responsive: true, displaylogo: false }));
  }
  var metricDiv = document.getElementById("metric");
  if (d.commitUrl) {
    metricDiv.on("plotly_click", function (ev) {
      var commit = ev.points[0].customdata;
      if (commit) window.open(d.commitUrl.replace("{commit}", commit), "_blank");
    });
  }
  Promise.all(charts).then(function () {
    report(document.querySelectorAll(".js-plotly-plot").length, slow.x.length);
  }, function (e) { window.lobenchErrors.push(String(e)); report(0, 0); });

  // Every machine's paired ratios on one chart (one trace per machine), absolute times per machine below.
  function acrossMachines(d) {
    var palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
    function trace(m, i, key, lo, hi) {
      var xs = m.points.map(function (p, k) { return p.date && p.date !== "?" ? p.date : k; });
      var y = m.points.map(function (p) { return p[key]; });
      return { x: xs, y: y, name: m.machine, mode: "lines+markers", type: "scatter",
               line: { color: palette[i % palette.length] },
               error_y: { type: "data", symmetric: false, thickness: 1,
                          array: m.points.map(function (p, k) { return p[hi] - y[k]; }),
                          arrayminus: m.points.map(function (p, k) { return y[k] - p[lo]; }) },
               text: m.points.map(function (p) { return m.text + "<br>commit " + p.commit + " against " + p.base_commit +
                                                  "<br>gate: " + p.verdict; }),
               hovertemplate: "%{text}<br>%{y:.4g}<extra></extra>" };
    }
    var ratioLayout = { title: { text: d.name + ": candidate / baseline, every machine" },
                        yaxis: { title: { text: "ratio of the same round (lower is faster)" } },
                        xaxis: { title: { text: "run" } }, legend: { orientation: "h", y: -0.25 }, shapes: [] };
    [1, 1 + d.threshold].forEach(function (level, i) {
      ratioLayout.shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: level, y1: level,
                                line: { dash: i ? "dash" : "dot", color: i ? "#d00" : "#888" } });
    });
    var slow = { x: [], y: [], name: "regression (gate: slower than the baseline beyond the threshold)", mode: "markers",
                 type: "scatter", marker: { symbol: "triangle-up", size: 16, color: "#d00" } };
    d.machines.forEach(function (m) {
      m.points.forEach(function (p, k) {
        if (p.verdict !== "slower") return;
        slow.x.push(p.date && p.date !== "?" ? p.date : k);
        slow.y.push(p.median);
      });
    });
    var slower = slow.x.length;
    var charts = [
      Plotly.newPlot("metric", d.machines.map(function (m, i) { return trace(m, i, "median", "min", "max"); }).concat([slow]),
                     ratioLayout, { responsive: true, displaylogo: false }),
      Plotly.newPlot("fraction", d.machines.map(function (m, i) { return trace(m, i, "seconds", "seconds_min", "seconds_max"); }),
                     { title: { text: "absolute time of the candidate, per machine" },
                       yaxis: { title: { text: "seconds per step" } }, xaxis: { title: { text: "run" } },
                       legend: { orientation: "h", y: -0.25 } }, { responsive: true, displaylogo: false })];
    Promise.all(charts).then(function () {
      report(document.querySelectorAll(".js-plotly-plot").length, slower);
    }, function (e) { window.lobenchErrors.push(String(e)); report(0, 0); });
  }
})();
