import assert from "node:assert/strict";
import { substituteEnv } from "./env.ts";

const ENV: Record<string, string> = {
  HOST: "pacs.local",
  QUOTE: 'say "hi" \\ now',
  MULTI: "line1\nline2",
  EMPTY: "",
  APOS: "it's",
};
const env = (name: string) => ENV[name];

Deno.test("substituteEnv: replaces references inside string values only", () => {
  const text = [
    "# ${NOT_SUBSTITUTED} in a comment",
    'host = "${HOST}:104"',
    "'${KEY}' = 'literal ${HOST}'",
    'list = ["${HOST}", "x"]',
    'inline = { a = "${HOST}" }',
  ].join("\n");
  const result = substituteEnv(text, "gw.toml", env);
  assert.deepEqual(result.problems, []);
  assert.equal(
    result.text,
    [
      "# ${NOT_SUBSTITUTED} in a comment",
      'host = "pacs.local:104"',
      "'${KEY}' = 'literal pacs.local'",
      'list = ["pacs.local", "x"]',
      'inline = { a = "pacs.local" }',
    ].join("\n"),
  );
});

Deno.test("substituteEnv: values are escaped for the string they land in", () => {
  const result = substituteEnv('a = "${QUOTE}"\nb = """${MULTI}"""\n', "gw.toml", env);
  assert.deepEqual(result.problems, []);
  assert.equal(result.text, 'a = "say \\"hi\\" \\\\ now"\nb = """line1\\nline2"""\n');
});

Deno.test("substituteEnv: fallbacks and the $${ escape", () => {
  const result = substituteEnv(
    'a = "${MISSING:-fallback}"\nb = "${EMPTY:-was empty}"\nc = "${EMPTY}"\nd = "$${HOST} and $${"\n',
    "gw.toml",
    env,
  );
  assert.deepEqual(result.problems, []);
  assert.equal(result.text, 'a = "fallback"\nb = "was empty"\nc = ""\nd = "${HOST} and ${"\n');
});

Deno.test("substituteEnv: unset, malformed and unrepresentable references are problems", () => {
  const text = [
    "[backends.db.options]",
    'password = "${DB_PASSWORD}"',
    "list = [",
    '  "${ALSO_MISSING}",',
    "]",
    'bad = "${1X}"',
    'open = "${HOST"',
    "lit = '${APOS}'",
  ].join("\n");
  const result = substituteEnv(text, "gw.toml", env);
  assert.deepEqual(result.problems, [
    {
      file: "gw.toml",
      line: 2,
      path: "backends.db.options.password",
      message: "environment variable `DB_PASSWORD` is not set",
    },
    {
      file: "gw.toml",
      line: 4,
      path: "backends.db.options.list[0]",
      message: "environment variable `ALSO_MISSING` is not set",
    },
    {
      file: "gw.toml",
      line: 6,
      path: "backends.db.options.bad",
      message: "invalid variable reference `${1X}`: use ${NAME} or ${NAME:-fallback}",
    },
    {
      file: "gw.toml",
      line: 7,
      path: "backends.db.options.open",
      message: "unterminated `${`: close it with `}`, or write `$${` for a literal `${`",
    },
    {
      file: "gw.toml",
      line: 8,
      path: "backends.db.options.lit",
      message:
        `the value of \`APOS\` cannot be written in a literal ('...') string; use a basic ("...") string`,
    },
  ]);
  assert.equal(result.text, text, "unresolved references stay as written");
});

Deno.test("substituteEnv: the line of a reference inside a multi-line string", () => {
  const result = substituteEnv('a = """\nfirst\n${NOPE}\n"""', "gw.toml", env);
  assert.deepEqual(result.problems.map((p) => p.line), [3]);
});
