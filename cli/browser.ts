/**
 * Opening a URL in the user's browser: `$BROWSER` when set, else `xdg-open` (Linux and other
 * Unixes), `open` (macOS) or `start` (Windows). Failing to open one is never fatal: the caller
 * prints the URL anyway.
 */
import { type Env, isTruthy } from "./env.ts";

/** Environment variable that turns browser opening off. */
export const NO_BROWSER_ENV = "GWCLI_NO_BROWSER";

/** The outcome of an attempt. */
export type BrowserResult =
  | { opened: true; command: string }
  | { opened: false; reason: string; command?: string };

/** Opens URLs (tests pass a fake). */
export type BrowserOpener = (url: string) => Promise<BrowserResult>;

/** The command line that opens `url`, or null when opening is turned off. */
export function browserCommand(
  url: string,
  env: Env,
  os: typeof Deno.build.os = Deno.build.os,
): { command: string; args: string[] } | null {
  if (isTruthy(env(NO_BROWSER_ENV))) return null;
  const custom = env("BROWSER")?.trim();
  if (custom) {
    if (custom.toLowerCase() === "none") return null;
    const [command, ...args] = custom.split(":")[0].split(/\s+/);
    const withUrl = args.some((a) => a.includes("%s"))
      ? args.map((a) => a.replaceAll("%s", url))
      : [...args, url];
    return { command, args: withUrl };
  }
  switch (os) {
    case "darwin":
      return { command: "open", args: [url] };
    case "windows":
      // `start` is a cmd built-in; the empty title keeps a quoted URL from becoming the title,
      // and `^&` keeps cmd from splitting the URL at `&`.
      return { command: "cmd", args: ["/c", "start", '""', url.replaceAll("&", "^&")] };
    default:
      return { command: "xdg-open", args: [url] };
  }
}

/** Opens `url`; waits up to `waitMs` for the opener (a browser that keeps running counts as opened). */
export function systemBrowser(env: Env, waitMs = 5_000): BrowserOpener {
  return async (url) => {
    const line = browserCommand(url, env);
    if (!line) return { opened: false, reason: `turned off by ${NO_BROWSER_ENV} or BROWSER=none` };
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(line.command, {
        args: line.args,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
    } catch (err) {
      const reason = err instanceof Deno.errors.NotFound
        ? `${line.command} is not installed`
        : (err as Error).message;
      return { opened: false, reason, command: line.command };
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"running">((resolve) => {
      timer = setTimeout(() => resolve("running"), waitMs);
    });
    const status = await Promise.race([child.status, timeout]);
    clearTimeout(timer);
    if (status === "running") {
      child.unref();
      return { opened: true, command: line.command };
    }
    return status.success ? { opened: true, command: line.command } : {
      opened: false,
      reason: `${line.command} exited with code ${status.code}`,
      command: line.command,
    };
  };
}
