/**
 * What one `basic_auth` password check costs in a password worker
 * (`deno run -A bench/auth/password_costs.ts [--runs 5]`): bcrypt at costs 10-14 (hashes from
 * bcryptjs) and Argon2id at the settings named in docs/security.md (hashes from Debian's `argon2`
 * CLI, when installed), the median milliseconds of a wrong password through a PasswordPool of one
 * worker, and the worker's start. The figures behind the cost ceiling of password_hash.ts.
 */
import { parseArgs } from "node:util";
import bcrypt from "bcryptjs";
import { PasswordPool } from "../../gateway/middleware/auth/password_pool.ts";
import { checkMillis, hashProblem } from "../../gateway/middleware/auth/password_hash.ts";
import { findBinary, runCommand } from "../../tests/support/mod.ts";

const { values } = parseArgs({ args: Deno.args, options: { runs: { type: "string" } } });
const runs = Number(values.runs ?? 5);
const pool = new PasswordPool(1, 64);

/** Median milliseconds of `runs` wrong-password checks of `hash`. */
async function median(hash: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await pool.verify("wrong", hash);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

try {
  const started = performance.now();
  await pool.verify("x", bcrypt.hashSync("x", 4));
  console.log(
    `first check, with the worker's start: ${(performance.now() - started).toFixed(0)} ms`,
  );
  const rows: string[][] = [];
  for (const cost of [10, 11, 12, 13, 14]) {
    const hash = bcrypt.hashSync("pw", cost);
    rows.push([`bcrypt ${cost}`, (await median(hash)).toFixed(0), verdict(hash)]);
  }
  if (findBinary("argon2")) {
    for (const [m, t] of [[4096, 3], [12288, 3], [19456, 2], [47104, 1], [65536, 1], [65536, 3]]) {
      const r = await runCommand("sh", [
        "-c",
        `printf pw | argon2 saltsaltsalt16by -id -e -k ${m} -t ${t}`,
      ]);
      const hash = r.stdout.trim();
      rows.push([`argon2id m=${m},t=${t}`, (await median(hash)).toFixed(0), verdict(hash)]);
    }
  } else {
    console.log("argon2 not installed (apt-get install argon2): Argon2 rows left out");
  }
  console.log("| hash | ms per check (median) | estimate | at load |");
  console.log("|---|---:|---:|---|");
  for (const [name, ms, at] of rows) console.log(`| ${name} | ${ms} | ${at} |`);
} finally {
  pool.close();
}

/** The estimate password_hash.ts uses, and whether a file with this hash loads. */
function verdict(hash: string): string {
  return `${checkMillis(hash).toFixed(0)} | ${hashProblem(hash) === null ? "accepted" : "refused"}`;
}
