/** Parse and validate in one step, for callers that hold a single file's text (the cloud). */
import { parseConfigText } from "./parse.ts";
import { sortProblems, validateConfig, type ValidationResult } from "./validate.ts";

/** Parses and validates TOML `text` named `fileName`; never throws. */
export function validateConfigText(text: string, fileName: string): ValidationResult {
  const parsed = parseConfigText(text, fileName);
  if (!parsed.raw) return { problems: parsed.problems };
  const validated = validateConfig(parsed.raw, parsed.positions, fileName);
  if (parsed.problems.length === 0) return validated;
  // Problems of the text itself (a key defined twice) come with the others, and no config.
  return { problems: sortProblems([...parsed.problems, ...validated.problems], fileName) };
}
