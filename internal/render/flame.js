// profq flame graph: zoom, search and tooltips over the frames in #flame-data.
// Frames come depth first, each after its parent; x, depth and value are computed by profq,
// so this page draws exactly what the SVG and the JSON say.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("flame-data").textContent);
  var n = D.value.length;
  var ROW = 17;      // pixels per row
  var MIN_PX = 0.5;  // frames narrower than this in the current view are not drawn
  var LABEL_PX = 22; // frames narrower than this carry no label

  var chart = document.getElementById("flame");
  var tip = document.getElementById("tooltip");
  var details = document.getElementById("details");
  var input = document.getElementById("search");
  var matchedEl = document.getElementById("matched");

  // self[i]: the value not passed to drawn children; end[i]: the end of i's subtree, which
  // spans the indexes i to end[i]-1.
  var self = D.value.slice();
  var end = new Int32Array(n);
  var i, p;
  for (i = 0; i < n; i++) end[i] = i + 1;
  for (i = n - 1; i > 0; i--) {
    p = D.parent[i];
    self[p] -= D.value[i];
    if (end[i] > end[p]) end[p] = end[i];
  }

  var zoomed = 0;
  var ancestor = new Uint8Array(n);
  var matched = null;
  chart.style.height = (D.maxDepth + 1) * ROW + "px";

  function name(i) { return D.names[D.name[i]]; }

  // fmt prints a value as pprof does: two decimals without a trailing ".00", in the
  // largest unit in which it is at least 1.
  function fmt(v) {
    var sc = D.scale, s, u = "";
    if (!sc) {
      s = String(v);
    } else {
      var pick = null;
      for (var k = 0; k < sc.units.length; k++) {
        if (v * sc.units[k].factor >= 1) pick = sc.units[k];
      }
      if (!pick) pick = sc["default"];
      s = (v * pick.factor).toFixed(2);
      if (s.slice(-3) === ".00") s = s.slice(0, -3);
      u = pick.name;
    }
    if (s === "0" || s === "-0") return "0";
    return s + u;
  }

  function pct(v, total) {
    return total ? (100 * v / total).toFixed(2) + "%" : "n/a";
  }

  // describe is what hovering frame i says.
  function describe(i) {
    var lines = [name(i)];
    lines.push(fmt(D.value[i]) + " (" + pct(D.value[i], D.total) + " of the total)" +
      (D.small[i] > 1 ? "" : ", self " + fmt(self[i])));
    if (D.diff) {
      var change = 100 * D.value[i] / (D.total || 1) - 100 * D.base[i] / (D.baseTotal || 1);
      lines.push("base " + fmt(D.base[i]) + " (" + pct(D.base[i], D.baseTotal) + "), share " +
        (change >= 0 ? "+" : "") + change.toFixed(2) + "pp");
    }
    return lines.join("\n");
  }

  function render() {
    var W = chart.clientWidth || 1200;
    var zx = D.x[zoomed], zv = D.value[zoomed] || 1;
    var frag = document.createDocumentFragment();
    for (var i = 0; i < n; i++) {
      var left, width, cls = "frame";
      if (ancestor[i]) {
        left = 0; width = 1; cls += " ancestor";
      } else if (i >= zoomed && i < end[zoomed]) {
        left = (D.x[i] - zx) / zv; width = D.value[i] / zv;
        if (i === zoomed) cls += " zoomed";
      } else {
        i = end[i] - 1; // outside the view, and so is its subtree
        continue;
      }
      if (width * W < MIN_PX) {
        i = end[i] - 1; // its descendants are narrower still
        continue;
      }
      if (D.small[i] > 1) cls += " small";
      if (matched && matched[i]) cls += " match";
      var el = document.createElement("div");
      el.className = cls;
      el.id = "frame-" + i;
      el.setAttribute("data-id", i);
      el.setAttribute("data-name", name(i));
      el.setAttribute("data-value", D.value[i]);
      el.setAttribute("data-self", self[i]);
      el.setAttribute("data-depth", D.depth[i]);
      el.setAttribute("data-x", +(left * 100).toFixed(4));
      el.setAttribute("data-width", +(width * 100).toFixed(4));
      var row = D.icicle ? D.depth[i] : D.maxDepth - D.depth[i];
      el.style.left = left * 100 + "%";
      el.style.width = width * 100 + "%";
      el.style.top = row * ROW + "px";
      el.style.background = D.colors[D.color[i]];
      if (width * W >= LABEL_PX) el.textContent = name(i);
      frag.appendChild(el);
    }
    chart.textContent = "";
    chart.appendChild(frag);
  }

  // zoom makes frame i full width, its ancestors shown above (below, in an icicle) it.
  function zoom(i) {
    i = +i;
    if (!(i >= 0 && i < n)) return;
    zoomed = i;
    ancestor = new Uint8Array(n);
    for (var p = D.parent[i]; p >= 0; p = D.parent[p]) ancestor[p] = 1;
    render();
    details.textContent = i === 0 ? "" : "Zoomed: " + describe(i).replace(/\n/g, "; ");
  }

  function reset() { zoom(0); }

  // search marks the frames whose name matches q (a regular expression, or plain text when
  // q is not one) and reports the share of the total they hold, counting a match inside
  // another match once.
  function search(q) {
    q = q == null ? "" : String(q);
    if (input.value !== q) input.value = q;
    if (q === "") {
      matched = null;
      matchedEl.textContent = "";
      render();
      return null;
    }
    var re = null;
    try { re = new RegExp(q); } catch (e) { re = null; }
    matched = new Uint8Array(n);
    var sum = 0, cover = 0, count = 0;
    for (var i = 1; i < n; i++) {
      if (D.small[i] > 1) continue;
      var s = name(i);
      if (re ? re.test(s) : s.indexOf(q) >= 0) {
        matched[i] = 1;
        count++;
        if (i >= cover) {
          sum += D.value[i];
          cover = end[i];
        }
      }
    }
    matchedEl.textContent = count === 0 ? "No match" :
      "Matched: " + pct(sum, D.total) + " (" + fmt(sum) + ") in " + count + (count === 1 ? " frame" : " frames");
    render();
    return { value: sum, pct: D.total ? 100 * sum / D.total : null, frames: count };
  }

  chart.addEventListener("click", function (e) {
    var el = e.target.closest(".frame");
    if (el) zoom(el.getAttribute("data-id"));
  });
  chart.addEventListener("mousemove", function (e) {
    var el = e.target.closest(".frame");
    if (!el) { tip.hidden = true; return; }
    tip.textContent = describe(+el.getAttribute("data-id"));
    tip.hidden = false;
    var x = e.clientX + 14, y = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, e.clientX - tip.offsetWidth - 8);
    if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, e.clientY - tip.offsetHeight - 8);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  });
  chart.addEventListener("mouseleave", function () { tip.hidden = true; });
  document.getElementById("reset").addEventListener("click", reset);
  input.addEventListener("input", function () { search(input.value); });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") reset();
  });
  var pending = false;
  window.addEventListener("resize", function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; render(); });
  });

  window.profqFlame = {
    zoom: zoom,
    reset: reset,
    search: search,
    zoomed: function () { return zoomed; },
    data: D
  };
  render();
})();
