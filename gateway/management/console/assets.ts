/**
 * Static assets of the console, all served from its own origin (the content security policy
 * admits `'self'` scripts only): htmx from its npm package, the console's small script (the live
 * tail's EventSource), the stylesheet and the favicon.
 */
import { createRequire } from "node:module";

/** The favicon: a gateway glyph (SVG). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">` +
  `<rect width="32" height="32" rx="6" fill="#1a7f37"/>` +
  `<path d="M6 16h6m8 0h6M12 10v12h8V10z" stroke="#fff" stroke-width="2.5" fill="none"/></svg>`;

let htmx: Uint8Array | undefined;

/** htmx's minified script, read once from the installed npm package. */
export function htmxScript(): Uint8Array {
  if (!htmx) {
    const path = createRequire(import.meta.url).resolve("htmx.org/dist/htmx.min.js");
    htmx = Deno.readFileSync(path);
  }
  return htmx;
}

/**
 * The console's own script: the live tail. Without it the tail page still works (its form
 * captures the next seconds on the server); with it, `EventSource` streams events into the table.
 * Rows are built with `textContent` (never HTML from the stream).
 */
export const CONSOLE_SCRIPT = `"use strict";
(() => {
  const table = document.getElementById("tail-rows");
  if (!table || !window.EventSource) return;
  const form = document.getElementById("tail-filters");
  const state = document.getElementById("tail-state");
  const pause = document.getElementById("tail-pause");
  const MAX_ROWS = 500;
  let source = null;
  let paused = false;
  const cell = (tr, text, cls) => {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  };
  const row = (e) => {
    const tr = document.createElement("tr");
    tr.dataset.pipeline = e.pipeline;
    tr.dataset.status = String(e.status);
    cell(tr, e.at.replace("T", " ").slice(0, 23));
    cell(tr, e.pipeline);
    cell(tr, e.fields.method || e.fields.operation || e.fields.message_type || "");
    cell(tr, e.fields.path || e.fields.endpoint || "");
    cell(tr, String(e.status), e.status >= 500 ? "badge badge-bad" : e.status >= 400 ? "badge badge-warn" : "badge badge-ok");
    cell(tr, e.duration_ms.toFixed(1), "num");
    cell(tr, e.error_code || "");
    cell(tr, e.request_id);
    return tr;
  };
  const say = (text) => { if (state) state.textContent = text; };
  const connect = () => {
    if (source) source.close();
    const params = new URLSearchParams(new FormData(form));
    params.delete("seconds");
    params.delete("limit");
    source = new EventSource(table.dataset.events + "?" + params.toString());
    source.addEventListener("open", () => say("Live: connected"));
    source.addEventListener("error", () => say("Live: reconnecting…"));
    source.addEventListener("request", (m) => {
      if (paused) return;
      const empty = document.getElementById("tail-empty");
      if (empty) empty.remove();
      table.insertBefore(row(JSON.parse(m.data)), table.firstChild);
      while (table.rows.length > MAX_ROWS) table.deleteRow(table.rows.length - 1);
    });
    source.addEventListener("dropped", (m) => say("Live: " + m.data + " events dropped (too fast)"));
  };
  if (form) {
    form.addEventListener("submit", (ev) => { ev.preventDefault(); connect(); });
  }
  if (pause) {
    pause.hidden = false;
    pause.addEventListener("click", () => {
      paused = !paused;
      pause.textContent = paused ? "Resume" : "Pause";
      pause.setAttribute("aria-pressed", String(paused));
      say(paused ? "Live: paused" : "Live: connected");
    });
  }
  connect();
})();
`;
