/**
 * What may stand where a credential would: nothing, `<redacted>`, or only `${VAR}` references
 * (the gateway expands them from its own environment). Shared by the checks of secret fields and
 * of URLs.
 */

/** What a redacted value is replaced with. */
export const REDACTED = "<redacted>";

const ONLY_REFERENCES = /^(?:\$\{[A-Za-z_][A-Za-z0-9_]*\})+$/;

/** True when `value` may be stored as it is: empty, `<redacted>` or only `${VAR}` references. */
export function isSecretReference(value: string): boolean {
  return value === "" || value === REDACTED || ONLY_REFERENCES.test(value);
}
