/**
 * htpasswd files: one `user:hash` per line, `#` comments and blank lines skipped, as Apache's
 * `htpasswd` writes them. Every line is checked when the file is loaded: a weak hash, a repeated
 * user or a malformed line is an error naming its line, and the configuration is refused.
 */
import { hashProblem } from "./password_hash.ts";

/** Largest htpasswd file read, 1 MiB. */
export const MAX_HTPASSWD_BYTES = 1 << 20;

/** Users and their hashes; throws an Error naming the file and line of the first problem. */
export function parseHtpasswd(text: string, file: string): Map<string, string> {
  if (text.length > MAX_HTPASSWD_BYTES) {
    throw new Error(`${file}: larger than ${MAX_HTPASSWD_BYTES} bytes`);
  }
  const users = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const at = `${file}:${i + 1}`;
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error(`${at}: expected user:hash`);
    const user = line.slice(0, colon);
    const hash = line.slice(colon + 1);
    if (users.has(user)) throw new Error(`${at}: user ${user} is listed twice`);
    const problem = hashProblem(hash);
    if (problem) throw new Error(`${at}: user ${user}: ${problem}`);
    users.set(user, hash);
  }
  if (users.size === 0) throw new Error(`${file}: no users`);
  return users;
}
