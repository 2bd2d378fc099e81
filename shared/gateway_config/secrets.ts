/**
 * Credentials in configuration text (fields the schema marks `secret`): found, redacted before the
 * gateway uploads its files, and refused by the cloud when written literally. A value that is only
 * an environment reference (`${S3_SECRET}`) is not a secret and stays.
 *
 * @example
 * ```ts
 * import { redactSecrets } from "./secrets.ts";
 * const text = '[backends.a]\nservice = "storage"\n[backends.a.options]\nsecret_access_key = "abc"\n';
 * redactSecrets(text); // ... secret_access_key = "<redacted>"
 * ```
 */
import { parse } from "smol-toml";
import { visitFields } from "./field_walk.ts";
import { scanToml } from "./scan.ts";

/** What a redacted value is replaced with. */
export const REDACTED = "<redacted>";

const ONLY_REFERENCES = /^(?:\$\{[A-Za-z_][A-Za-z0-9_]*\})+$/;

/** True when `value` may be stored as it is: empty, `<redacted>` or only `${VAR}` references. */
export function isSecretReference(value: string): boolean {
  return value === "" || value === REDACTED || ONLY_REFERENCES.test(value);
}

/** Key paths (`backends.a.options.secret_access_key`) of the literal secrets of a parsed doc. */
export function literalSecretPaths(doc: Record<string, unknown>): string[] {
  const paths: string[] = [];
  visitFields(doc, (f) => {
    if (f.spec.secret && typeof f.value === "string" && !isSecretReference(f.value)) {
      paths.push(f.path);
    }
  });
  return paths;
}

/**
 * `text` with every literal secret value replaced by `<redacted>`, everything else (comments,
 * layout, `${VAR}` references) unchanged. Text that does not parse is returned with every
 * string under a secret-looking key redacted, so nothing leaks from a broken file either.
 */
export function redactSecrets(text: string): string {
  let secret: (path: string) => boolean;
  try {
    const paths = new Set(literalSecretPaths(parse(text) as Record<string, unknown>));
    secret = (path) => paths.has(path);
  } catch {
    secret = (path) => /(secret|password|token|private|_key)$/i.test(path.split(".").at(-1) ?? "");
  }
  let out = "";
  let copied = 0;
  for (const span of scanToml(text).strings) {
    if (!secret(span.path)) continue;
    const value = text.slice(span.start, span.end);
    if (isSecretReference(value)) continue;
    out += text.slice(copied, span.start) + REDACTED;
    copied = span.end;
  }
  return out + text.slice(copied);
}
