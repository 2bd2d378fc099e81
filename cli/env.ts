/** The environment gwcli reads, as a function so tests can pass their own. */

/** Reads one environment variable; undefined when unset. */
export type Env = (name: string) => string | undefined;

/** The process environment (needs `--allow-env`). */
export const processEnv: Env = (name) => Deno.env.get(name);

/** An environment made of `values` only (tests). */
export function envOf(values: Record<string, string | undefined>): Env {
  return (name) => values[name];
}

/** True when `value` is `1`, `true`, `yes` or `on` (any case). */
export function isTruthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}
