/** Questions on the terminal; without a terminal there is nobody to ask. */

/** Asks questions (tests pass a fake). */
export interface Prompter {
  /** True when a person can answer (stdin is a terminal). */
  readonly interactive: boolean;
  /** Prints `question` and reads one line; null at end of input. */
  ask(question: string): Promise<string | null>;
}

/** Reads one line from `reader` (up to a newline or the end), without reading further bytes. */
export async function readLine(reader: { read(p: Uint8Array): Promise<number | null> }): Promise<
  string | null
> {
  const bytes: number[] = [];
  const one = new Uint8Array(1);
  for (;;) {
    const n = await reader.read(one);
    if (n === null || n === 0) {
      return bytes.length ? new TextDecoder().decode(new Uint8Array(bytes)) : null;
    }
    if (one[0] === 0x0a) break;
    bytes.push(one[0]);
  }
  return new TextDecoder().decode(new Uint8Array(bytes)).replace(/\r$/, "");
}

/** The terminal: questions on stderr (stdout stays clean for results), answers from stdin. */
export function terminalPrompter(): Prompter {
  return {
    interactive: Deno.stdin.isTerminal(),
    async ask(question) {
      await Deno.stderr.write(new TextEncoder().encode(question));
      return await readLine(Deno.stdin);
    },
  };
}

/** Asks a yes/no question; `defaultYes` decides an empty answer. */
export async function confirm(
  prompter: Prompter,
  question: string,
  defaultYes = false,
): Promise<boolean> {
  const answer = await prompter.ask(`${question} ${defaultYes ? "[Y/n]" : "[y/N]"} `);
  if (answer === null) return false;
  const a = answer.trim().toLowerCase();
  if (a === "") return defaultYes;
  return a === "y" || a === "yes";
}
