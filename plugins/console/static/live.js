// The live view: batches from the server (a few per second), the latest rows drawn, a per-tool summary.
"use strict";

(() => {
  const KEEP = 300;
  const SHOW = 200;
  const rows = [];
  const body = document.querySelector("#live-calls tbody");
  const summaryBody = document.querySelector("#live-summary tbody");
  const state = document.getElementById("live-state");
  const rate = document.getElementById("live-rate");
  const toolFilter = document.getElementById("live-tool");
  const outcomeFilter = document.getElementById("live-outcome");
  const pauseButton = document.getElementById("live-pause");
  let paused = false;
  let skipped = 0;

  function cell(text, className) {
    const td = document.createElement("td");
    if (className) td.className = className;
    td.textContent = text;
    return td;
  }

  function matches(row) {
    const tool = toolFilter.value.trim().toLowerCase();
    if (tool && !row.tool.toLowerCase().includes(tool)) return false;
    const outcome = outcomeFilter.value;
    if (outcome === "ok" && row.outcome !== "ok") return false;
    if (outcome === "error" && (row.outcome === "ok" || row.outcome === "cancelled")) return false;
    if (outcome === "cancelled" && row.outcome !== "cancelled") return false;
    return true;
  }

  function rowElement(row) {
    const tr = document.createElement("tr");
    tr.dataset.tool = row.tool;
    tr.dataset.outcome = row.outcome;
    tr.append(cell(new Date(row.at * 1000).toLocaleTimeString([], { hour12: false }) + "." + String(Math.floor((row.at % 1) * 1000)).padStart(3, "0")));
    const toolCell = document.createElement("td");
    const link = document.createElement("a");
    link.href = `/calls/${encodeURIComponent(row.id)}`;
    link.textContent = row.tool;
    toolCell.append(link);
    tr.append(toolCell, cell(row.caller || "—"), cell(row.node), cell(row.ms == null ? "" : row.ms.toFixed(1), "num"));
    const outcome = cell("");
    const pill = document.createElement("span");
    pill.className = `pill ${row.outcome === "ok" ? "good" : row.outcome === "cancelled" ? "" : "bad"}`;
    pill.textContent = row.outcome;
    outcome.append(pill);
    tr.append(outcome, cell(row.cached ? "hit" : ""));
    return tr;
  }

  function redraw() {
    const fragment = document.createDocumentFragment();
    let shown = 0;
    for (let index = rows.length - 1; index >= 0 && shown < SHOW; index -= 1) {
      if (!matches(rows[index])) continue;
      fragment.append(rowElement(rows[index]));
      shown += 1;
    }
    body.replaceChildren(fragment);
  }

  function drawSummary(summary) {
    const fragment = document.createDocumentFragment();
    const tool = toolFilter.value.trim().toLowerCase();
    for (const item of summary) {
      if (tool && !item.tool.toLowerCase().includes(tool)) continue;
      const tr = document.createElement("tr");
      tr.dataset.tool = item.tool;
      tr.append(cell(item.tool), cell(item.calls_per_s.toFixed(1), "num"), cell(item.p50_ms.toFixed(1), "num"),
        cell(item.p99_ms.toFixed(1), "num"), cell(`${(item.error_rate * 100).toFixed(1)}%`, "num"));
      fragment.append(tr);
    }
    summaryBody.replaceChildren(fragment);
    const total = summary.reduce((sum, item) => sum + item.calls_per_s, 0);
    rate.textContent = `${total.toFixed(1)} calls/s${skipped ? ` · ${skipped} rows skipped to keep up` : ""}`;
  }

  const source = new EventSource("/live/stream");
  source.addEventListener("open", () => { state.textContent = paused ? "paused" : "live"; state.className = "pill good"; });
  source.addEventListener("error", () => { state.textContent = "reconnecting…"; state.className = "pill bad"; });
  source.addEventListener("batch", (event) => {
    const batch = JSON.parse(event.data);
    skipped += batch.skipped;
    window.consoleLag = Date.now() / 1000 - batch.at;  // read by the benchmark
    window.consoleRowsSeen = (window.consoleRowsSeen || 0) + batch.rows.length;
    if (batch.rows.length) window.consoleCallLag = Date.now() / 1000 - batch.rows[batch.rows.length - 1].at;
    drawSummary(batch.summary);
    if (paused) return;
    if (batch.rows.length) {
      rows.push(...batch.rows);
      if (rows.length > KEEP) rows.splice(0, rows.length - KEEP);
      redraw();
    }
  });

  pauseButton.addEventListener("click", () => {
    paused = !paused;
    pauseButton.textContent = paused ? "Resume" : "Pause";
    state.textContent = paused ? "paused" : "live";
  });
  toolFilter.addEventListener("input", redraw);
  outcomeFilter.addEventListener("change", redraw);
})();
