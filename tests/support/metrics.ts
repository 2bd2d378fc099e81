/**
 * Test helper: a strict parser of the Prometheus text exposition format, so tests check the
 * rendered output by reading it back rather than by comparing strings.
 */

/** One sample line. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition. */
export interface Exposition {
  samples: Sample[];
  /** HELP text by family name (unescaped). */
  help: Map<string, string>;
  /** TYPE by family name. */
  types: Map<string, string>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function unescapeHelp(text: string): string {
  return text.replace(/\\(.)/g, (_, ch) => ch === "n" ? "\n" : ch);
}

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  const v = Number(text);
  if (text === "" || Number.isNaN(v)) throw new Error(`bad value in line: ${line}`);
  return v;
}

/** Parse the `{...}` label set at the start of `s`; returns the labels and the rest of the line. */
function parseLabels(s: string, line: string): [Record<string, string>, string] {
  const labels: Record<string, string> = {};
  let i = 1;
  while (s[i] !== "}") {
    const name = LABEL.exec(s.slice(i))?.[0];
    if (!name || s[i + name.length] !== "=" || s[i + name.length + 1] !== '"') {
      throw new Error(`bad label in line: ${line}`);
    }
    i += name.length + 2;
    let value = "";
    for (;;) {
      const ch = s[i++];
      if (ch === undefined) throw new Error(`unterminated label value in line: ${line}`);
      if (ch === '"') break;
      if (ch === "\\") {
        const esc = s[i++];
        if (esc === "n") value += "\n";
        else if (esc === "\\" || esc === '"') value += esc;
        else throw new Error(`bad escape \\${esc} in line: ${line}`);
      } else value += ch;
    }
    if (name in labels) throw new Error(`duplicate label ${name} in line: ${line}`);
    labels[name] = value;
    if (s[i] === ",") i++;
    else if (s[i] !== "}") throw new Error(`expected , or } in line: ${line}`);
  }
  return [labels, s.slice(i + 1)];
}

/** Parse exposition text; throws on any malformed line. */
export function parseExposition(text: string): Exposition {
  const out: Exposition = { samples: [], help: new Map(), types: new Map() };
  if (!text.endsWith("\n")) throw new Error("exposition must end with a line feed");
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      if (meta[1] === "HELP") out.help.set(meta[2], unescapeHelp(meta[3]));
      else out.types.set(meta[2], meta[3]);
      continue;
    }
    if (line.startsWith("#")) continue;
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`bad sample line: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) [labels, rest] = parseLabels(rest, line);
    if (!rest.startsWith(" ")) throw new Error(`expected a space before the value: ${line}`);
    const [value, timestamp, extra] = rest.slice(1).split(" ");
    if (extra !== undefined || (timestamp !== undefined && !/^-?\d+$/.test(timestamp))) {
      throw new Error(`bad sample line: ${line}`);
    }
    out.samples.push({ name, labels, value: parseValue(value, line) });
  }
  return out;
}

/** The value of the sample with this name and exactly these labels, or undefined. */
export function sampleValue(
  exp: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = Object.entries(labels);
  for (const s of exp.samples) {
    if (s.name !== name) continue;
    const have = Object.keys(s.labels);
    if (have.length !== want.length) continue;
    if (want.every(([k, v]) => s.labels[k] === v)) return s.value;
  }
  return undefined;
}
