/** The console's stylesheet (served at `assets/console.css`; no inline styles: the CSP has none). */

/** The rules of every page. */
export const STYLESHEET = `
:root { --fg: #1d2330; --muted: #555e6e; --line: #dde1e8; --accent: #1f5fbf; --bg: #f6f7f9;
  --ok: #1a7f37; --warn: #8a5a00; --bad: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1.2rem; align-items: center; padding: .6rem 1.5rem; background: #fff;
  border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header .brand { font-weight: 700; }
header nav a { margin-right: 1rem; color: var(--fg); text-decoration: none; }
header nav a.active { color: var(--accent); font-weight: 600; }
header form { display: inline-flex; gap: .4rem; align-items: center; margin: 0; }
header .spacer { flex: 1; }
main { max-width: 1200px; margin: 1.5rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .6rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 1rem 1.2rem; margin-bottom: 1rem; }
.narrow { max-width: 440px; margin: 3rem auto; }
label { display: block; margin: .6rem 0 .2rem; font-weight: 600; }
input, select, textarea { font: inherit; padding: .35rem .5rem; border: 1px solid #8a93a3; border-radius: 4px; }
.narrow input { width: 100%; }
textarea { width: 100%; font-family: ui-monospace, monospace; font-size: .85rem; }
button, a.button { font: inherit; padding: .35rem .9rem; border-radius: 4px; border: 1px solid var(--accent);
  background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary { background: #fff; color: var(--accent); }
button.small { padding: .1rem .5rem; font-size: .85rem; }
.flash { padding: .6rem .9rem; border-radius: 4px; margin-bottom: 1rem; border: 1px solid; }
.flash-error { color: var(--bad); border-color: var(--bad); background: #fff5f5; }
.flash-ok { color: var(--ok); border-color: var(--ok); background: #f3fbf5; }
pre { background: #fff; border: 1px solid var(--line); padding: .8rem; overflow: auto; font-size: .85rem;
  max-height: 32rem; margin: 0; white-space: pre-wrap; word-break: break-all; }
.muted { color: var(--muted); }
.row { display: flex; gap: .6rem; align-items: end; flex-wrap: wrap; }
.row label { margin: 0 0 .2rem; }
.badge { font-weight: 600; }
.badge-ok { color: var(--ok); } .badge-warn { color: var(--warn); } .badge-bad { color: var(--bad); }
.badge-muted { color: var(--muted); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible,
textarea:focus-visible, summary:focus-visible { outline: 3px solid #f0b429; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: .5rem; background: #fff; padding: .4rem .8rem; }
.skip:focus { left: .5rem; z-index: 10; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.stages { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: .8rem; }
.stages section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; min-width: 0; }
.tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: .6rem; margin-bottom: 1rem; }
.tile { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; }
.tile .value { font-size: 1.4rem; font-weight: 600; }
.pager { margin: .6rem 0 1rem; align-items: center; }
dl.fields div { display: grid; grid-template-columns: 12rem minmax(0, 1fr); gap: .6rem; padding: .25rem 0;
  border-bottom: 1px solid var(--line); }
dl.fields dt { font-weight: 600; } dl.fields dd { margin: 0; word-break: break-all; }
#tail-rows td { font-size: .9rem; }
.tail-state { margin-left: .6rem; }
`;
