/**
 * The web UI: server-rendered pages (Hono JSX), no scripts, no front-end build. Sessions in
 * HttpOnly SameSite cookies, CSRF tokens on every form, strict security headers.
 *
 * @example
 * ```ts
 * import { UI_PATHS } from "./mod.ts";
 *
 * // The pages the web UI serves (everything else belongs to the API).
 * console.log(UI_PATHS.includes("/sign-in"), UI_PATHS.includes("/device")); // true true
 * ```
 *
 * @module
 */
export { createUi, UI_PATHS } from "./ui_app.tsx";
export { Layout } from "./layout.tsx";
export { sessionCookieName } from "./session.ts";
