"use strict";
function oloproofCases() {
  // The case data: JSON, gzipped, in base64; inflated by the browser itself, no request made.
  var packed = atob(document.getElementById("oloproof-cases").textContent.trim());
  var bytes = new Uint8Array(packed.length);
  for (var i = 0; i < packed.length; i++) bytes[i] = packed.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text().then(JSON.parse);
}
oloproofCases().then(function (data) {
  // Every text from cases and answers reaches the page through textContent only.
  var cases = data.cases, texts = data.texts, pageSize = 50, page = 0, shown = cases;
  var list = document.getElementById("case-list"), info = document.getElementById("case-info");
  var sliceSel = document.getElementById("filter-slice"), verdictSel = document.getElementById("filter-verdict");
  var labelSel = document.getElementById("filter-label"), search = document.getElementById("filter-text");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function option(select, value, text) { var o = el("option", null, text); o.value = value; select.appendChild(o); }
  function verdictText(v) {
    if (v.status !== "observed") return v.status;
    if (v.passed === true) return "pass";
    if (v.passed === false) return "fail";
    return v.value === null ? "-" : Number(v.value).toFixed(3);
  }
  function verdictClass(v) { return v.status !== "observed" ? "missing" : v.passed === true ? "pass" : v.passed === false ? "fail" : ""; }

  var sliceValues = {}, labels = {}, criteria = {};
  cases.forEach(function (c) {
    Object.keys(c.slices).forEach(function (name) { sliceValues[name + "=" + c.slices[name]] = true; });
    labels[c.label || ""] = true;
    c.verdicts.forEach(function (v) {
      // Pass/fail verdicts can be filtered by pass and fail; a score only by missing.
      criteria[v.criterion] = criteria[v.criterion] || v.passed !== null && v.passed !== undefined;
    });
  });
  Object.keys(sliceValues).sort().forEach(function (key) { option(sliceSel, key, key); });
  Object.keys(labels).sort().forEach(function (key) { option(labelSel, key || "(none)", key || "(no label)"); });
  Object.keys(criteria).sort().forEach(function (name) {
    (criteria[name] ? ["pass", "fail", "missing"] : ["missing"]).forEach(function (kind) {
      option(verdictSel, name + ":" + kind, name + ": " + kind);
    });
  });

  function matches(c) {
    var s = sliceSel.value, v = verdictSel.value, l = labelSel.value, t = search.value.toLowerCase();
    if (s) { var at = s.indexOf("="); if (String(c.slices[s.slice(0, at)]) !== s.slice(at + 1)) return false; }
    if (l && (c.label || "(none)") !== l) return false;
    if (v) {
      var at2 = v.lastIndexOf(":"), name = v.slice(0, at2), kind = v.slice(at2 + 1);
      var hit = c.verdicts.some(function (x) {
        return x.criterion === name && (kind === "missing" ? x.status !== "observed" : verdictText(x) === kind);
      });
      if (!hit) return false;
    }
    if (t && c.id.toLowerCase().indexOf(t) < 0 && (c.question || "").toLowerCase().indexOf(t) < 0) return false;
    return true;
  }

  function body(c) {
    var box = el("div", "case-body");
    box.appendChild(el("h4", null, "Question"));
    box.appendChild(el("pre", null, c.question));
    if (c.error) { box.appendChild(el("h4", null, "Error")); box.appendChild(el("pre", "fail", c.error)); }
    if (c.candidates.length) {
      box.appendChild(el("h4", null, "Retrieved candidates"));
      c.candidates.forEach(function (p) {
        var row = el("div", "passage " + (p.in_context ? "kept" : "out"));
        row.appendChild(el("span", "pos", "#" + p.position + " "));
        row.appendChild(el("b", null, p.doc_id));
        row.appendChild(el("span", "muted", p.in_context ? "  in context" : p.dropped ? "  dropped: " + p.dropped : "  not kept"));
        if (p.text !== null) row.appendChild(el("div", "small", texts[p.text]));
        box.appendChild(row);
      });
    }
    box.appendChild(el("h4", null, "Answer"));
    box.appendChild(el("pre", null, c.answer === null ? "(none)" : c.answer));
    box.appendChild(el("h4", null, "Verdicts"));
    var table = el("table"), head = el("tr");
    ["criterion", "repeat", "verdict", "reason"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    c.verdicts.forEach(function (v) {
      var tr = el("tr");
      tr.appendChild(el("td", null, v.criterion));
      tr.appendChild(el("td", "num", v.repeat + 1));
      tr.appendChild(el("td", verdictClass(v), verdictText(v)));
      tr.appendChild(el("td", "small", v.reason || ""));
      table.appendChild(tr);
    });
    box.appendChild(table);
    return box;
  }

  function row(c) {
    var d = el("details", "case"), s = el("summary");
    d.setAttribute("data-case", c.id);
    s.appendChild(el("span", "id", c.id));
    c.verdicts.filter(function (v) { return v.repeat === 0; }).forEach(function (v) {
      s.appendChild(el("span", verdictClass(v), v.criterion + " " + verdictText(v)));
    });
    if (c.label) s.appendChild(el("span", "label", c.label));
    d.appendChild(s);
    d.addEventListener("toggle", function () { if (d.open && d.childNodes.length === 1) d.appendChild(body(c)); });
    return d;
  }

  function render() {
    list.textContent = "";
    var pages = Math.max(1, Math.ceil(shown.length / pageSize));
    page = Math.min(page, pages - 1);
    shown.slice(page * pageSize, (page + 1) * pageSize).forEach(function (c) { list.appendChild(row(c)); });
    info.textContent = shown.length + " of " + cases.length + " cases · page " + (page + 1) + " of " + pages;
  }
  function refilter() { shown = cases.filter(matches); page = 0; render(); }
  [sliceSel, verdictSel, labelSel].forEach(function (s) { s.addEventListener("change", refilter); });
  search.addEventListener("input", refilter);
  document.getElementById("page-prev").addEventListener("click", function () { if (page > 0) { page--; render(); } });
  document.getElementById("page-next").addEventListener("click", function () { page++; render(); });
  // report.html#case=ID opens that case: a link to one case can be sent.
  function openLinked() {
    var hash;
    try { hash = decodeURIComponent(window.location.hash || ""); } catch (e) { return; }  // a malformed link
    if (hash.indexOf("#case=") !== 0) return;
    var id = hash.slice(6);
    if (cases.map(function (c) { return c.id; }).indexOf(id) < 0) return;
    // The linked case is shown whatever the filters were.
    sliceSel.value = verdictSel.value = labelSel.value = search.value = "";
    shown = cases;
    var at = shown.map(function (c) { return c.id; }).indexOf(id);
    page = Math.floor(at / pageSize);
    render();
    var rows = list.querySelectorAll("details.case");
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].getAttribute("data-case") === id) { rows[i].open = true; rows[i].appendChild(body(shown[at])); }
    }
  }
  window.addEventListener("hashchange", openLinked);
  render();
  openLinked();
  // When the page was usable, from navigation start: what a benchmark of large reports reads.
  document.documentElement.setAttribute("data-ready-ms", String(Math.round(performance.now())));
});
