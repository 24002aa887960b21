// dbrig serve's UI. Everything a document holds is anyone's text, so it
// goes into the page as text (textContent), never as markup.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function num(v) {
  if (v === null || v === undefined || !isFinite(v)) return "—";
  if (Math.abs(v) >= 100) return Math.round(v).toLocaleString("en-US");
  return Number(v.toPrecision(3)).toString();
}

function pct(v) {
  if (v === null || v === undefined || !isFinite(v)) return "";
  return (v >= 0 ? "+" : "") + (v * 100).toFixed(1) + "%";
}

function short(id) { return id.slice(0, 12); }
// stamp is a start time as the tables show it, its first n characters;
// "—" where the document gave none (k6's export keeps no time).
function stamp(s, n) { return s.startsWith("0001-") ? "—" : s.replace("T", " ").replace("Z", "").slice(0, n); }

function showError(msg) {
  const e = $("error");
  e.textContent = msg;
  e.hidden = !msg;
}

async function api(path) {
  const r = await fetch(path, { headers: { "Accept": "application/json" } });
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

// filterQuery is the filter form as a query string.
function filterQuery() {
  const q = new URLSearchParams();
  for (const name of ["workload", "target", "tag", "where", "since"]) {
    const v = $("f-" + name).value.trim();
    if (v) q.set(name, v);
  }
  return q;
}

function view(name) {
  for (const v of ["runs", "history", "compare"]) $(v + "-view").hidden = v !== name;
}

async function loadWorkloads() {
  try {
    const fields = await api("/api/fields");
    const sel = $("f-workload");
    for (const w of fields.workloads) {
      const o = el("option", w);
      o.value = w;
      sel.appendChild(o);
    }
  } catch (err) {
    showError(err.message);
  }
}

function headline(e) {
  if (e.kind === "sweep") return [e.config.points + " points × " + e.config.repeat, ""];
  const m = (e.metrics || []).find((m) => m.key === e.primary_metric);
  if (!m) return ["", ""];
  const iv = m.low !== undefined && m.high !== undefined ? "[" + num(m.low) + ", " + num(m.high) + "]" : "";
  return [num(m.value) + " " + m.label, iv];
}

async function showRuns() {
  view("runs");
  const q = filterQuery();
  let data;
  try {
    data = await api("/api/runs?" + q.toString());
    showError("");
  } catch (err) {
    showError(err.message);
    return;
  }
  $("runs-count").textContent = data.total === data.runs.length ?
    data.total + " runs" : "The newest " + data.runs.length + " of " + data.total + " runs";
  const body = $("runs").tBodies[0];
  body.replaceChildren();
  for (const e of data.runs) {
    const tr = el("tr");
    tr.dataset.id = e.id;
    const box = el("input");
    box.type = "checkbox";
    box.className = "pick";
    box.value = e.id;
    box.addEventListener("change", pickChanged);
    const pick = el("td");
    pick.appendChild(box);
    tr.appendChild(pick);
    const idCell = el("td");
    const link = el("a", short(e.id), "run-link");
    link.href = e.tool === "dbrig" ? "/runs/" + encodeURIComponent(e.id) + "/report" : "/api/runs/" + encodeURIComponent(e.id);
    idCell.appendChild(link);
    tr.appendChild(idCell);
    const [head, iv] = headline(e);
    const kind = e.tool === "dbrig" ? e.kind : e.tool + " " + e.kind;
    const target = ((e.target_kind || "") + " " + (e.target_version || "")).trim();
    for (const [v, cls] of [[stamp(e.started_at, 19), ""], [kind, ""], [e.workload || e.name, ""],
      [target, ""], [e.host, ""], [head, "num"], [iv, "num"], [e.verdict, ""], [(e.tags || []).join(", "), ""]]) {
      tr.appendChild(el("td", v, cls));
    }
    body.appendChild(tr);
  }
  pickChanged();
}

function picked() {
  return Array.from(document.querySelectorAll("input.pick:checked")).map((b) => b.value);
}

function pickChanged() {
  $("compare-selected").disabled = picked().length < 2;
}

let chart = null;

async function showHistory(params) {
  view("history");
  const q = filterQuery();
  let fields;
  try {
    fields = await api("/api/fields?" + q.toString());
  } catch (err) {
    showError(err.message);
    return;
  }
  fillSelect($("h-metric"), Object.keys(fields.metrics).sort(), params.get("metric") || "nopm", false);
  fillSelect($("h-by"), Object.keys(fields.config).filter((k) => fields.config[k] > 1).sort(), params.get("by") || "", true);
  const metric = $("h-metric").value;
  if (!metric) {
    showError("no catalogued run has a metric to draw");
    return;
  }
  q.set("metric", metric);
  if ($("h-by").value) q.set("by", $("h-by").value);
  let trend;
  try {
    trend = await api("/api/history?" + q.toString());
    showError("");
  } catch (err) {
    showError(err.message);
    return;
  }
  drawTrend(trend);
}

function fillSelect(sel, keys, want, blank) {
  sel.replaceChildren();
  if (blank) {
    const o = el("option", "nothing");
    o.value = "";
    sel.appendChild(o);
  }
  for (const k of keys) {
    const o = el("option", k);
    o.value = k;
    sel.appendChild(o);
  }
  if (keys.includes(want) || (blank && want === "")) sel.value = want;
}

const colors = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#be185d", "#4b5563"];

function drawTrend(trend) {
  const labels = [];
  const at = new Map();
  const all = [];
  for (const s of trend.series) for (const r of s.runs) all.push(r.started_at);
  all.sort();
  for (const t of all) if (!at.has(t)) { at.set(t, labels.length); labels.push(t.replace("T", " ").replace("Z", "")); }
  const sets = [];
  const changeAt = [];
  const list = $("changes");
  list.replaceChildren();
  trend.series.forEach((s, k) => {
    const c = colors[k % colors.length];
    const data = labels.map(() => null);
    for (const r of s.runs) {
      const p = { y: r.value };
      if (r.low !== undefined && r.high !== undefined) { p.yMin = r.low; p.yMax = r.high; }
      data[at.get(r.started_at)] = p;
    }
    const name = trend.by ? trend.by + "=" + s.group : trend.metric.Label;
    for (const ch of s.changes) {
      changeAt.push({ index: at.get(ch.started_at), color: c });
      const li = el("li", name + ": changed at run " + short(ch.id) + " (" + stamp(ch.started_at, 19) +
        "): " + num(ch.before) + " → " + num(ch.after) + " (" + pct(ch.change) + "), p = " + ch.p_value.toFixed(3), "change");
      list.appendChild(li);
    }
    sets.push({ label: name, data, borderColor: c, backgroundColor: c, borderWidth: 1.5, spanGaps: true, pointRadius: 3,
      errorBarColor: c, errorBarWhiskerColor: c, errorBarLineWidth: 1, errorBarWhiskerSize: 6 });
    if (!s.changes.length && s.runs.length >= 6) {
      list.appendChild(el("li", name + ": no change point in " + s.runs.length + " runs"));
    } else if (!s.changes.length) {
      list.appendChild(el("li", name + ": " + s.runs.length + " runs, too few to look for a change (6 at least)"));
    }
  });
  const unit = trend.metric.Unit ? ", " + trend.metric.Unit : "";
  if (chart) chart.destroy();
  chart = new Chart($("history-chart"), {
    type: "lineWithErrorBars",
    plugins: [changeLines(changeAt)],
    data: { labels, datasets: sets },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: { x: { type: "category", title: { display: true, text: "run started (UTC)" } },
        y: { beginAtZero: false, title: { display: true, text: trend.metric.Label + unit } } },
      plugins: { title: { display: true, text: trend.metric.Label + " over time" + (trend.metric.Higher ? " (higher is better)" : " (lower is better)") +
        "; dashed: where it changed; error bars: each run's 95% interval" } },
    },
  });
  $("history-chart").dataset.changes = String(changeAt.length);
  $("history-chart").dataset.points = String(trend.series.reduce((n, s) => n + s.runs.length, 0));
}

// changeLines draws a dashed line at each change point, in its series'
// colour, labelled, between the chart's area and its points.
function changeLines(changes) {
  return {
    id: "changeLines",
    afterDatasetsDraw(chart) {
      const { ctx, chartArea, scales } = chart;
      ctx.save();
      for (const ch of changes) {
        const x = scales.x.getPixelForValue(ch.index);
        ctx.strokeStyle = ch.color;
        ctx.lineWidth = 2;
        ctx.setLineDash([6, 4]);
        ctx.beginPath();
        ctx.moveTo(x, chartArea.top);
        ctx.lineTo(x, chartArea.bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = ch.color;
        ctx.font = "12px system-ui, sans-serif";
        ctx.fillText("changed", x + 4, chartArea.top + 12);
      }
      ctx.restore();
    },
  };
}

async function showCompare(params) {
  view("compare");
  const q = new URLSearchParams();
  for (const id of params.getAll("id")) q.append("id", id);
  let c;
  try {
    c = await api("/api/compare?" + q.toString());
    showError("");
  } catch (err) {
    showError(err.message);
    return;
  }
  const head = ["", ...c.entries.map((e) => short(e.id) + " " + stamp(e.started_at, 16))];
  rowsTable($("compare-metrics"), head, c.metrics.map(metricRow));
  rowsTable($("compare-telemetry"), head, c.telemetry.map(metricRow));
  rowsTable($("compare-config"), head, c.config_differences.map((r) => [[r.key, ""], ...r.values.map((v) => [v, ""])]));
}

function metricRow(r) {
  return [[r.label + (r.unit ? " (" + r.unit + ")" : ""), ""], ...r.values.map((v, i) => {
    if (v === null) return ["—", "num"];
    const ch = i > 0 && r.change[i] !== null ? " " + pct(r.change[i]) : "";
    const better = r.change[i] !== null && i > 0 && Math.abs(r.change[i]) > 0.005 ? ((r.change[i] > 0) === r.higher_is_better ? " better" : " worse") : "";
    return [num(v) + ch, "num" + better];
  })];
}

function rowsTable(table, head, rows) {
  table.replaceChildren();
  const tr = el("tr");
  for (const h of head) tr.appendChild(el("th", h));
  table.appendChild(tr);
  for (const r of rows) {
    const row = el("tr");
    for (const [v, cls] of r) row.appendChild(el("td", v, cls));
    table.appendChild(row);
  }
  if (!rows.length) {
    const row = el("tr");
    row.appendChild(el("td", "none"));
    table.appendChild(row);
  }
}

function route() {
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query || "");
  if (path === "/history") return showHistory(params);
  if (path === "/compare") return showCompare(params);
  return showRuns();
}

$("filters").addEventListener("submit", (ev) => { ev.preventDefault(); route(); });
$("history-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const q = new URLSearchParams({ metric: $("h-metric").value });
  if ($("h-by").value) q.set("by", $("h-by").value);
  location.hash = "#/history?" + q.toString();
});
$("compare-selected").addEventListener("click", () => {
  const q = new URLSearchParams();
  for (const id of picked()) q.append("id", id);
  location.hash = "#/compare?" + q.toString();
});
window.addEventListener("hashchange", route);
loadWorkloads();
route();
