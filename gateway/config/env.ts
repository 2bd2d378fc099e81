/**
 * `${VAR}` substitution from the environment, done on the text before parsing but only inside
 * string values (never in keys or comments), so a `${` in a comment cannot break a config.
 *
 * Forms: `${NAME}` (an unset NAME is a problem), `${NAME:-fallback}` (fallback when NAME is unset
 * or empty; the fallback is written in TOML string syntax), `$${` (a literal `${`).
 */
import { type ConfigProblem, scanToml, type StringSpan } from "../../shared/gateway_config/mod.ts";

/** Reads one environment variable; undefined when unset. */
export type EnvLookup = (name: string) => string | undefined;

/** Text after substitution, and the references that could not be resolved. */
export interface SubstitutionResult {
  text: string;
  problems: ConfigProblem[];
}

const REFERENCE = /\$(\$)?\{([^}\n]*)(\})?/g;
const INNER = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

/**
 * Substitutes every `${...}` in the string values of `text` read from `file`. `refuse` names the
 * variables this file may not read (a configuration pushed from the cloud), with the message.
 */
export function substituteEnv(
  text: string,
  file: string,
  env: EnvLookup,
  refuse?: (name: string) => string | undefined,
): SubstitutionResult {
  const problems: ConfigProblem[] = [];
  const lines = lineStarts(text);
  let out = "";
  let copied = 0;
  for (const span of scanToml(text).strings) {
    const content = text.slice(span.start, span.end);
    if (!content.includes("${")) continue;
    const report = (offset: number, message: string) =>
      problems.push({ file, line: lineOf(lines, span.start + offset), path: span.path, message });
    out += text.slice(copied, span.start) + substituteSpan(content, span, env, report, refuse);
    copied = span.end;
  }
  return { text: out + text.slice(copied), problems };
}

function substituteSpan(
  content: string,
  span: StringSpan,
  env: EnvLookup,
  report: (offset: number, message: string) => void,
  refuse?: (name: string) => string | undefined,
): string {
  return content.replace(REFERENCE, (whole, escaped, inner: string, closed, offset: number) => {
    if (escaped) return whole.slice(1);
    if (!closed) {
      report(offset, "unterminated `${`: close it with `}`, or write `$${` for a literal `${`");
      return whole;
    }
    const match = INNER.exec(inner);
    if (!match) {
      report(offset, `invalid variable reference \`${whole}\`: use \${NAME} or \${NAME:-fallback}`);
      return whole;
    }
    const [, name, fallback] = match;
    const refused = refuse?.(name);
    if (refused) {
      report(offset, refused);
      return whole;
    }
    const value = env(name);
    if (fallback !== undefined && (value === undefined || value === "")) return fallback;
    if (value === undefined) {
      report(offset, `environment variable \`${name}\` is not set`);
      return whole;
    }
    const encoded = encode(value, span.kind);
    if (encoded === undefined) {
      report(
        offset,
        `the value of \`${name}\` cannot be written in a literal ('...') string; use a basic ("...") string`,
      );
      return whole;
    }
    return encoded;
  });
}

/** `value` in the syntax of the string it lands in; undefined when that string cannot hold it. */
function encode(value: string, kind: StringSpan["kind"]): string | undefined {
  if (kind === "basic" || kind === "ml_basic") {
    // JSON escapes are valid TOML basic-string escapes; TOML also forbids a raw DEL.
    return JSON.stringify(value).slice(1, -1).replaceAll("\x7f", "\\u007F");
  }
  // Literal strings have no escapes: control characters (tab aside; newlines in ''') and
  // the closing quote cannot appear in them at all.
  const forbidden = kind === "literal"
    // deno-lint-ignore no-control-regex
    ? /['\x00-\x08\x0a-\x1f\x7f]/
    // deno-lint-ignore no-control-regex
    : /'''|[\x00-\x08\x0b-\x1f\x7f]/;
  return forbidden.test(value) ? undefined : value;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}
