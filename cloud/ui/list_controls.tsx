/** @jsxImportSource hono/jsx */
/**
 * Search, filters and pages of the list pages. The controls are a GET form (they work without
 * script, and the URL of a filtered page can be bookmarked); pages follow the cursor the list
 * hands out, as the audit log and the API do. The query parameters are the API's: `name`, the
 * filter fields, `limit` and `cursor` (plus `page`, the number shown).
 */
import type { Context } from "hono";
import type { FC } from "hono/jsx";
import type { AppEnv } from "../api/mod.ts";
import { BadCursorError } from "../store/mod.ts";

/** The page sizes offered. */
export const PAGE_SIZES = [10, 20, 50, 100];
/** Records per page when none is chosen. */
export const DEFAULT_PAGE_SIZE = 20;

/** One filter of a list: a select of `options`, or a text field when there are none. */
export interface FilterSpec {
  name: string;
  label: string;
  options?: { value: string; label: string }[];
  /** The value when the URL has none (a select's first option otherwise). */
  default?: string;
}

/** What a list page was asked for. */
export interface ListState {
  path: string;
  name: string;
  limit: number;
  cursor?: string;
  /** The number of the page shown (1 on the first). */
  page: number;
  filters: Record<string, string>;
  specs: FilterSpec[];
}

/** Reads a list page's query: search text, filters (unknown choices fall back), page. */
export function listState(c: Context<AppEnv>, path: string, specs: FilterSpec[]): ListState {
  const limit = Number(c.req.query("limit"));
  const page = Number(c.req.query("page"));
  const filters: Record<string, string> = {};
  for (const f of specs) {
    const value = (c.req.query(f.name) ?? f.default ?? "").trim().slice(0, 200);
    filters[f.name] = f.options && !f.options.some((o) => o.value === value)
      ? f.default ?? f.options[0]?.value ?? ""
      : value;
  }
  return {
    path,
    name: (c.req.query("name") ?? "").trim().slice(0, 200),
    limit: PAGE_SIZES.includes(limit) ? limit : DEFAULT_PAGE_SIZE,
    cursor: c.req.query("cursor") || undefined,
    page: Number.isInteger(page) && page > 1 && page < 100_000 ? page : 1,
    filters,
    specs,
  };
}

/** The URL of the list with the same search and filters, at `cursor` (page number `page`). */
export function listUrl(state: ListState, at: { cursor?: string; page?: number } = {}): string {
  const q = new URLSearchParams();
  if (state.name) q.set("name", state.name);
  for (const f of state.specs) {
    const value = state.filters[f.name];
    if (value && value !== (f.default ?? "")) q.set(f.name, value);
  }
  if (state.limit !== DEFAULT_PAGE_SIZE) q.set("limit", String(state.limit));
  if (at.cursor) {
    q.set("cursor", at.cursor);
    q.set("page", String(at.page ?? 2));
  }
  const query = q.toString();
  return query ? `${state.path}?${query}` : state.path;
}

/** True when the search or a filter narrows the list. */
export function narrowed(state: ListState): boolean {
  return state.name !== "" ||
    state.specs.some((f) => (state.filters[f.name] ?? "") !== (f.default ?? ""));
}

/**
 * Runs `list`; a cursor this service did not hand out (edited, or from before a restart of a
 * remote KV) sends the visitor back to the first page of the same search.
 */
export async function orFirstPage(
  c: Context<AppEnv>,
  state: ListState,
  list: () => Promise<Response>,
): Promise<Response> {
  try {
    return await list();
  } catch (err) {
    if (!(err instanceof BadCursorError)) throw err;
    return c.redirect(listUrl({ ...state, cursor: undefined, page: 1 }));
  }
}

/** The search form of a list: text, filters, page size. */
export const ListControls: FC<{ state: ListState; what: string; searchHint?: string }> = (
  { state, what, searchHint },
) => (
  <form
    method="get"
    action={state.path}
    role="search"
    aria-label={`Search ${what}`}
    class="card row list-controls"
    data-testid="list-controls"
  >
    <div>
      <label for="list-search">Search</label>
      <input
        id="list-search"
        type="search"
        name="name"
        value={state.name}
        maxlength={200}
        placeholder={searchHint ?? "part of the name"}
      />
    </div>
    {state.specs.map((f) => (
      <div key={f.name}>
        <label for={`filter-${f.name}`}>{f.label}</label>
        {f.options
          ? (
            <select id={`filter-${f.name}`} name={f.name}>
              {f.options.map((o) => (
                <option key={o.value} value={o.value} selected={state.filters[f.name] === o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          )
          : (
            <input
              id={`filter-${f.name}`}
              name={f.name}
              value={state.filters[f.name]}
              maxlength={200}
            />
          )}
      </div>
    ))}
    <div>
      <label for="list-limit">Per page</label>
      <select id="list-limit" name="limit">
        {PAGE_SIZES.map((n) => (
          <option key={n} value={String(n)} selected={n === state.limit}>{n}</option>
        ))}
      </select>
    </div>
    <button type="submit">Apply</button>
    {narrowed(state) && <a href={state.path}>Clear</a>}
  </form>
);

/** The links between pages: first and next (KV cursors only go forward). */
export const Pager: FC<{ state: ListState; next: string | null | undefined; shown: number }> = (
  { state, next, shown },
) =>
  state.page > 1 || state.cursor || next
    ? (
      <nav aria-label="Pages" class="row pager" data-testid="pager">
        <span data-testid="page-number">Page {state.page}</span>
        <span class="muted">({shown} on this page)</span>
        {(state.page > 1 || state.cursor) && <a href={listUrl(state)}>← First page</a>}
        {next && (
          <a rel="next" href={listUrl(state, { cursor: next, page: state.page + 1 })}>
            Next page →
          </a>
        )}
      </nav>
    )
    : null;

/** The message of an empty list: nothing yet, or nothing matching. */
export function emptyText(state: ListState, what: string): string {
  return narrowed(state) || state.cursor ? `No ${what} match this search.` : `No ${what} yet.`;
}

/** The filter of a list's shared records (own and shared by default). */
export const SHARED_FILTER: FilterSpec = {
  name: "shared",
  label: "Owner",
  default: "include",
  options: [
    { value: "include", label: "This team and shared with it" },
    { value: "exclude", label: "This team only" },
    { value: "only", label: "Shared with this team only" },
  ],
};

/** A select's options: "Any" (no filter), then `values`. */
export function anyOf(values: readonly { value: string; label: string }[]) {
  return [{ value: "", label: "Any" }, ...values];
}
