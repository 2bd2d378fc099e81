/** Parse and validate in one step, for callers that hold a single file's text (the cloud). */
import { parseConfigText } from "./parse.ts";
import { validateConfig, type ValidationResult } from "./validate.ts";

/** Parses and validates TOML `text` named `fileName`; never throws. */
export function validateConfigText(text: string, fileName: string): ValidationResult {
  const parsed = parseConfigText(text, fileName);
  if (!parsed.raw) return { problems: parsed.problems };
  return validateConfig(parsed.raw, parsed.positions, fileName);
}
