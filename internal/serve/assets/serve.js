// profq serve: the refine form's URL, keyboard shortcuts, and the top table's search and
// name order. Everything else is the server's: each view's numbers come in the page.
(function () {
  "use strict";
  var form = document.getElementById("refine");

  // The form's URL holds only what is set: empty fields and defaults are left out, so that
  // a URL says what it asks for, and can be shared or reloaded.
  if (form) {
    form.addEventListener("submit", function () {
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name) return;
        if (el.value === "" || (el.name === "granularity" && el.value === "functions")) el.disabled = true;
      });
    });
  }

  function typing(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA");
  }

  // Keys: 1 to 6 open the views, "/" goes to the search box, "f" to the focus filter,
  // Escape leaves a field.
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (typing(document.activeElement)) {
      if (e.key === "Escape") document.activeElement.blur();
      return;
    }
    if (e.key >= "1" && e.key <= "6") {
      var link = document.getElementById("nav-" + e.key);
      if (link) { e.preventDefault(); window.location.href = link.href; }
      return;
    }
    var target = null;
    if (e.key === "/") {
      target = document.getElementById("search") || document.getElementById("top-search") ||
        (form && form.querySelector("input[type=text]"));
    } else if (e.key === "f") {
      target = form && form.querySelector("input[name=focus]");
    }
    if (target) { e.preventDefault(); target.focus(); target.select(); }
  });

  // The top table: a search over the names, and the order by name.
  var table = document.getElementById("top");
  if (!table) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var box = document.getElementById("top-search");
  var matchedEl = document.getElementById("top-matched");
  function search(q) {
    var re = null;
    if (q !== "") { try { re = new RegExp(q); } catch (err) { re = null; } }
    var count = 0;
    rows.forEach(function (tr) {
      var name = tr.cells[5].textContent;
      var hit = q !== "" && (re ? re.test(name) : name.indexOf(q) >= 0);
      tr.classList.toggle("match", hit);
      tr.classList.toggle("hidden", q !== "" && !hit);
      if (hit) count++;
    });
    matchedEl.textContent = q === "" ? "" : count + " of " + rows.length + " rows";
    return count;
  }
  box.addEventListener("input", function () { search(box.value); });
  var byName = false;
  document.getElementById("sort-name").addEventListener("click", function () {
    byName = !byName;
    var order = rows.slice();
    if (byName) order.sort(function (a, b) { return a.cells[5].textContent < b.cells[5].textContent ? -1 : a.cells[5].textContent > b.cells[5].textContent ? 1 : 0; });
    order.forEach(function (tr) { body.appendChild(tr); });
  });
  window.profqTop = { search: search };
})();
