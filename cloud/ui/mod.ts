/**
 * The web UI: server-rendered pages (Hono JSX), no scripts, no front-end build. Sessions in
 * HttpOnly SameSite cookies, CSRF tokens on every form, strict security headers.
 *
 * @module
 */
export { createUi, UI_PATHS } from "./ui_app.tsx";
export { Layout } from "./layout.tsx";
export { sessionCookieName } from "./session.ts";
