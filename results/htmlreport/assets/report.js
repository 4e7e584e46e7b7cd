// benchmatrix report: sortable tables, cells switched on and off, hover
// values, zoom on the shared time axis, flame graph zoom and search.
// Written for this page; it loads nothing.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("bm-data").textContent);
  var PLOT_W = 916, PLOT_H = 198, PAD_L = 72, PAD_T = 8;
  var hidden = {};
  var zoom = {}; // axis -> [x0, x1]

  function fmt(v) {
    if (v === null || v === undefined || isNaN(v)) return "-";
    var a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1e6) return (v / 1e6).toPrecision(4) + "M";
    if (a >= 1000) return Math.round(v).toString();
    return (+v.toPrecision(4)).toString();
  }

  // Tables: a click on a header sorts by that column (numbers by value,
  // the rest as text); a second click reverses.
  function cellValue(td) {
    var t = td.textContent.trim();
    var m = t.replace(/,/g, "").match(/^[-+−]?\d+(\.\d+)?(e[-+]?\d+)?/i);
    return m ? parseFloat(m[0].replace("−", "-")) : null;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var ths = table.querySelectorAll("thead th");
    ths.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        ths.forEach(function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var ca = a.cells[col], cb = b.cells[col];
          if (!ca || !cb) return 0;
          var va = cellValue(ca), vb = cellValue(cb), r;
          if (va !== null && vb !== null) r = va - vb;
          else if (va !== null) r = -1;
          else if (vb !== null) r = 1;
          else r = ca.textContent.localeCompare(cb.textContent);
          return asc ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // Cells on and off: every element of a cell carries data-k.
  function applyHidden() {
    document.querySelectorAll("[data-k]").forEach(function (el) {
      el.classList.toggle("off", !!hidden[el.getAttribute("data-k")]);
    });
    document.querySelectorAll("input[data-toggle]").forEach(function (el) {
      el.checked = !hidden[el.getAttribute("data-toggle")];
    });
  }
  document.querySelectorAll("input[data-toggle]").forEach(function (el) {
    el.addEventListener("change", function () {
      hidden[el.getAttribute("data-toggle")] = !el.checked;
      applyHidden();
    });
  });
  document.querySelectorAll("button[data-all]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var on = btn.getAttribute("data-all") === "1";
      document.querySelectorAll("input[data-toggle]").forEach(function (el) {
        hidden[el.getAttribute("data-toggle")] = !on;
      });
      applyHidden();
    });
  });

  // Charts.
  var charts = [];
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    var c = {
      svg: svg, id: svg.id, axis: svg.getAttribute("data-axis"),
      x0: parseFloat(svg.getAttribute("data-x0")), x1: parseFloat(svg.getAttribute("data-x1")),
      integer: svg.hasAttribute("data-int"),
      plot: svg.querySelector("svg.plot"), ticks: svg.querySelector("g.xticks"),
      cursor: svg.querySelector(".cursor"), sel: svg.querySelector(".zoomsel"),
      d: data.charts[svg.id] || { s: [] },
      unzoom: svg.parentNode.querySelector("button.unzoom")
    };
    if (c.x1 <= c.x0) c.x1 = c.x0 + 1;
    charts.push(c);
  });

  function view(c) { return zoom[c.axis] || [c.x0, c.x1]; }
  function toPx(c, x) { return (x - c.x0) / (c.x1 - c.x0) * PLOT_W; }

  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var ms = [1, 2, 5, 10];
    for (var i = 0; i < ms.length; i++) if (ms[i] * p >= raw) return ms[i] * p;
    return 10 * p;
  }

  var SVGNS = "http://www.w3.org/2000/svg";
  function drawTicks(c) {
    var v = view(c), g = c.ticks;
    while (g.firstChild) g.removeChild(g.firstChild);
    var step = niceStep((v[1] - v[0]) / 10);
    if (c.integer) step = Math.max(1, Math.round(step));
    for (var t = Math.ceil(v[0] / step) * step; t <= v[1] + 1e-9; t += step) {
      var x = (t - v[0]) / (v[1] - v[0]) * PLOT_W;
      var l = document.createElementNS(SVGNS, "line");
      l.setAttribute("class", "xtickline");
      l.setAttribute("x1", x); l.setAttribute("x2", x); l.setAttribute("y1", 0); l.setAttribute("y2", 5);
      g.appendChild(l);
      var tx = document.createElementNS(SVGNS, "text");
      tx.setAttribute("class", "xtick");
      tx.setAttribute("x", x); tx.setAttribute("y", 18);
      tx.textContent = +t.toPrecision(6);
      g.appendChild(tx);
    }
  }

  function applyZoom(axis) {
    charts.forEach(function (c) {
      if (c.axis !== axis) return;
      var v = view(c);
      var a = toPx(c, v[0]), w = toPx(c, v[1]) - a;
      c.plot.setAttribute("viewBox", a + " 0 " + w + " " + PLOT_H);
      drawTicks(c);
      if (c.unzoom) c.unzoom.hidden = !zoom[axis];
    });
  }

  // The data x under a mouse event, or null outside the plot.
  function dataX(c, ev) {
    var pt = c.svg.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    var m = c.svg.getScreenCTM();
    if (!m) return null;
    var p = pt.matrixTransform(m.inverse());
    var px = p.x - PAD_L, py = p.y - PAD_T;
    if (px < 0 || px > PLOT_W || py < 0 || py > PLOT_H) return null;
    var v = view(c);
    return { x: v[0] + px / PLOT_W * (v[1] - v[0]), px: px };
  }

  function nearest(xs, x) {
    var lo = 0, hi = xs.length - 1;
    if (hi < 0) return -1;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (xs[mid] < x) lo = mid + 1; else hi = mid;
    }
    if (lo > 0 && Math.abs(xs[lo - 1] - x) <= Math.abs(xs[lo] - x)) lo--;
    return lo;
  }

  // covering: on a time axis a value covers its interval, from the point
  // before to its own x; the index of the one that covers x, or -1.
  function covering(xs, x) {
    var lo = 0, hi = xs.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (xs[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo < xs.length ? lo : -1;
  }

  var tip = document.getElementById("tip");
  function showTip(c, ev, x) {
    var rows = [], shown = null;
    c.d.s.forEach(function (s) {
      if (hidden[s.k]) return;
      var xs = data.xs[s.x], i;
      if (c.integer) {
        i = nearest(xs, x);
        if (i < 0 || Math.abs(xs[i] - x) > 0.5) return;
      } else {
        i = covering(xs, x);
        if (i < 0) return;
      }
      if (shown === null) shown = xs[i];
      rows.push({ l: s.l, c: s.c, v: s.y[i], t: xs[i] });
    });
    if (!rows.length) { tip.hidden = true; return; }
    rows.sort(function (a, b) { return (b.v === null ? -Infinity : b.v) - (a.v === null ? -Infinity : a.v); });
    var head = (c.integer ? "repeat " : "t = ") + fmt(shown) + (c.integer ? "" : " s");
    var html = "<div class=\"row\">" + head + "</div>";
    rows.slice(0, 30).forEach(function (r) {
      html += "<div class=\"row\"><span class=\"swatch\" style=\"background:" + r.c + "\"></span>" +
        escapeHTML(r.l) + ": <b>" + fmt(r.v) + "</b></div>";
    });
    if (rows.length > 30) html += "<div class=\"row\">and " + (rows.length - 30) + " more</div>";
    tip.innerHTML = html;
    tip.hidden = false;
    var left = ev.pageX + 14, top = ev.pageY + 10;
    if (left + tip.offsetWidth > window.scrollX + document.documentElement.clientWidth) left = ev.pageX - tip.offsetWidth - 14;
    tip.style.left = left + "px";
    tip.style.top = top + "px";
  }
  function escapeHTML(s) {
    return String(s).replace(/[&<>"]/g, function (ch) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[ch]; });
  }

  function setCursor(axis, x) {
    charts.forEach(function (c) {
      if (c.axis !== axis) return;
      var px = x === null ? -10 : toPx(c, x);
      c.cursor.setAttribute("x1", px); c.cursor.setAttribute("x2", px);
    });
  }

  var drag = null;
  charts.forEach(function (c) {
    drawTicks(c);
    c.svg.addEventListener("mousemove", function (ev) {
      var p = dataX(c, ev);
      if (!p) { tip.hidden = true; setCursor(c.axis, null); return; }
      setCursor(c.axis, p.x);
      if (drag && drag.c === c) {
        var a = Math.min(drag.x, p.x), b = Math.max(drag.x, p.x);
        c.sel.setAttribute("x", toPx(c, a));
        c.sel.setAttribute("width", toPx(c, b) - toPx(c, a));
        return;
      }
      showTip(c, ev, p.x);
    });
    c.svg.addEventListener("mouseleave", function () { tip.hidden = true; setCursor(c.axis, null); });
    c.svg.addEventListener("mousedown", function (ev) {
      var p = dataX(c, ev);
      if (!p || ev.button !== 0) return;
      ev.preventDefault();
      drag = { c: c, x: p.x, px: p.px };
    });
    c.svg.addEventListener("dblclick", function () { delete zoom[c.axis]; applyZoom(c.axis); });
    if (c.unzoom) c.unzoom.addEventListener("click", function () { delete zoom[c.axis]; applyZoom(c.axis); });
  });
  document.addEventListener("mouseup", function (ev) {
    if (!drag) return;
    var c = drag.c, p = dataX(c, ev);
    c.sel.setAttribute("width", 0);
    if (p && Math.abs(p.px - drag.px) > 4) {
      zoom[c.axis] = [Math.min(drag.x, p.x), Math.max(drag.x, p.x)];
      applyZoom(c.axis);
    }
    drag = null;
  });

  // Flame graphs: a click on a frame stretches it and what it called to
  // the width; a click on the background resets; search marks frames.
  function frame(g) { return { x: parseFloat(g.getAttribute("data-x")), w: parseFloat(g.getAttribute("data-w")) }; }
  function flameWidth(svg) { var vb = svg.viewBox.baseVal; return vb && vb.width ? vb.width : 1200; }
  function relabel(g, w) {
    var t = g.querySelector("text"), title = g.querySelector("title");
    if (!t || !title) return;
    var full = title.textContent.split("\n")[0], n = Math.floor((w - 6) / 7);
    t.textContent = n < 3 ? "" : (full.length <= n ? full : full.slice(0, n - 2) + "..");
  }
  function flameZoom(svg, z) {
    var W = flameWidth(svg), a = z ? frame(z) : null;
    var zy = z ? parseFloat(z.querySelector("rect").getAttribute("y")) : 0;
    svg.querySelectorAll("g.f").forEach(function (g) {
      var b = frame(g), r = g.querySelector("rect"), t = g.querySelector("text");
      if (isNaN(b.x) || !r) return;
      var nx = b.x, nw = b.w;
      if (a) {
        var inside = b.x >= a.x - 0.01 && b.x + b.w <= a.x + a.w + 0.01;
        var below = parseFloat(r.getAttribute("y")) > zy;
        if (!inside && !below) { g.style.display = "none"; return; }
        var k = (W - 20) / a.w;
        nx = inside ? 10 + (b.x - a.x) * k : 10;
        nw = inside ? b.w * k : W - 20;
      }
      g.style.display = "";
      r.setAttribute("x", nx); r.setAttribute("width", nw);
      if (t) t.setAttribute("x", nx + 3);
      relabel(g, nw);
    });
  }
  document.querySelectorAll("svg.flame").forEach(function (svg) {
    svg.addEventListener("click", function (ev) {
      var g = ev.target.closest ? ev.target.closest("g.f") : null;
      flameZoom(svg, g);
    });
  });
  document.querySelectorAll(".flamebox").forEach(function (box) {
    var input = box.querySelector(".flamesearch"), out = box.querySelector(".flamehits"), svg = box.querySelector("svg.flame");
    if (!input || !svg) return;
    input.addEventListener("input", function () {
      var re = null, q = input.value.trim();
      if (q) { try { re = new RegExp(q, "i"); } catch (e) { out.textContent = "not a regular expression"; return; } }
      var n = 0, width = 0, root = 0, spans = [];
      svg.querySelectorAll("g.f").forEach(function (g) {
        var title = g.querySelector("title"), f = frame(g);
        if (!title) return;
        var name = title.textContent.split("\n")[0];
        if (f.w > root) root = f.w;
        var hit = !!re && re.test(name);
        g.classList.toggle("hit", hit);
        if (hit) { n++; spans.push([f.x, f.x + f.w]); }
      });
      // The share: the union of the matched frames' spans.
      spans.sort(function (a, b) { return a[0] - b[0]; });
      var end = -Infinity;
      spans.forEach(function (s) { if (s[0] > end) { width += s[1] - s[0]; end = s[1]; } else if (s[1] > end) { width += s[1] - end; end = s[1]; } });
      out.textContent = q ? n + " frames match, " + (root ? (100 * width / root).toFixed(1) : "0") + "% of the graph" : "";
    });
  });
  document.querySelectorAll("a[data-open]").forEach(function (a) {
    a.addEventListener("click", function () {
      var d = document.getElementById(a.getAttribute("data-open"));
      if (d) d.open = true;
    });
  });
  document.body.setAttribute("data-ready", "1");
})();
