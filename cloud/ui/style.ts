/** The stylesheet of the web UI (served at /ui.css; the only script is htmx, from this origin). */
import { optionFormCss } from "./resource_forms.tsx";

/** The rules of the pages, then those of the option forms (one per component type). */
export const STYLESHEET = `
:root { --fg: #1d2330; --muted: #5b6475; --line: #dde1e8; --accent: #1f5fbf; --bg: #f6f7f9;
  --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.5rem; background: #fff;
  border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header .brand { font-weight: 700; }
header nav a { margin-right: 1rem; color: var(--fg); text-decoration: none; }
header nav a.active { color: var(--accent); font-weight: 600; }
header form { display: inline-flex; gap: .4rem; align-items: center; margin: 0; }
header .spacer { flex: 1; }
main { max-width: 1100px; margin: 1.5rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .6rem; }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; color: var(--muted); }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 1rem 1.2rem; margin-bottom: 1rem; }
.narrow { max-width: 420px; margin: 3rem auto; }
label { display: block; margin: .6rem 0 .2rem; font-weight: 600; }
input, select { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 4px; }
.narrow input { width: 100%; }
button { font: inherit; padding: .35rem .9rem; border-radius: 4px; border: 1px solid var(--accent);
  background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: var(--bad); border-color: var(--bad); }
.status { font-weight: 600; }
.status-online { color: var(--ok); } .status-degraded { color: var(--warn); }
.status-offline { color: var(--bad); } .status-pending { color: var(--muted); }
.flash { padding: .6rem .9rem; border-radius: 4px; margin-bottom: 1rem; border: 1px solid; }
.flash-error { color: var(--bad); border-color: var(--bad); background: #fff5f5; }
.flash-ok { color: var(--ok); border-color: var(--ok); background: #f3fbf5; }
.secret { font-family: ui-monospace, monospace; background: #fffbe6; border: 1px dashed var(--warn);
  padding: .6rem; word-break: break-all; }
pre { background: #fff; border: 1px solid var(--line); padding: .8rem; overflow: auto; font-size: .85rem; }
.muted { color: var(--muted); }
.code { font-family: ui-monospace, monospace; font-size: 1.6rem; letter-spacing: .2rem; }
.row { display: flex; gap: .6rem; align-items: end; flex-wrap: wrap; }
textarea { font: inherit; width: 100%; padding: .35rem .5rem; border: 1px solid var(--line);
  border-radius: 4px; }
textarea.mono { font-family: ui-monospace, monospace; font-size: .85rem; }
.field { margin-bottom: .8rem; border: 0; padding: 0; }
fieldset.field { border: 1px solid var(--line); border-radius: 4px; padding: .5rem .8rem; }
legend { font-weight: 600; padding: 0 .3rem; }
.field input[type=text], .field input[type=number], .field select { min-width: 16rem; }
label.check { display: block; font-weight: 400; margin: .2rem 0; }
label.inline { display: inline; margin: 0; }
.help { color: var(--muted); font-size: .85rem; margin: .2rem 0; }
.field-error { color: var(--bad); margin: .3rem 0; padding-left: 1.2rem; }
[aria-invalid=true] { border-color: var(--bad); }
.split { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; }
@media (max-width: 900px) { .split { grid-template-columns: minmax(0, 1fr); } }
pre.diff .add { color: var(--ok); background: #f3fbf5; }
pre.diff .del { color: var(--bad); background: #fff5f5; }
pre.diff .hunk { color: var(--muted); }
pre.diff span { display: block; white-space: pre; }
a.button { display: inline-block; padding: .35rem .9rem; border-radius: 4px; background: var(--accent);
  color: #fff; text-decoration: none; }
button.small { padding: .1rem .5rem; font-size: .85rem; }
button[disabled] { opacity: .45; cursor: default; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible,
textarea:focus-visible { outline: 3px solid #f0b429; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: .5rem; background: #fff; padding: .4rem .8rem; }
.skip:focus { left: .5rem; z-index: 10; }
ol li { margin: .25rem 0; }
svg.chart { background: #fff; border: 1px solid var(--line); border-radius: 4px; }
svg.chart .line { fill: none; stroke: var(--accent); stroke-width: 2; }
svg.chart .err { fill: none; stroke: var(--bad); stroke-width: 2; }
svg.chart text { font-size: 10px; fill: var(--muted); }
svg.chart .grid { stroke: var(--line); }
.current-team { white-space: nowrap; }
.list-controls input[type=search] { min-width: 14rem; }
.pager { margin: .6rem 0 1rem; align-items: center; }
dl.record-fields div { display: grid; grid-template-columns: 14rem minmax(0, 1fr); gap: .6rem;
  padding: .3rem 0; border-bottom: 1px solid var(--line); }
dl.record-fields dt { font-weight: 600; }
dl.record-fields dd { margin: 0; }
dl.record-fields pre { margin: 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: .8rem; }
` + optionFormCss();
