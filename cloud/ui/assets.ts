/**
 * Static assets of the web UI: htmx (from its npm package, served from this origin so the content
 * security policy admits only `'self'` scripts) and the favicon.
 */
import { createRequire } from "node:module";

/** The favicon: a gateway glyph (SVG). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">` +
  `<rect width="32" height="32" rx="6" fill="#1f5fbf"/>` +
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
