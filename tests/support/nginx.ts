/** Running Debian's nginx on loopback as an upstream or a comparison proxy. */

import { findBinary } from "./peers.ts";
import { freePort } from "./ports.ts";
import { spawnCaptured, waitReady } from "./process.ts";
import { removeDir, tempDir } from "./temp.ts";
import { canConnect } from "./wait.ts";

/** Options of {@link startNginx}. */
export interface NginxOptions {
  /**
   * Directives inside `http { }`, normally one `server` block that must `listen
   * 127.0.0.1:{{port}}`. `{{port}}` is replaced by a free port and `{{dir}}` by the temp dir.
   */
  conf: string;
  /** Directives at the main level (default `worker_processes 1;`). */
  main?: string;
  /** How long to wait for the port to accept connections (default 15 000 ms). */
  readyTimeoutMs?: number;
}

/** A running nginx. */
export interface NginxProcess {
  /** The port nginx listens on. */
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Its prefix directory (config, logs, temp files; removed by `stop()`). */
  dir: string;
  /** The nginx master process. */
  process: Deno.ChildProcess;
  /** Error log and console output, for failure messages. */
  output(): Promise<string>;
  /** Stops nginx (SIGTERM, then SIGKILL after 10 s) and removes the temp dir. */
  stop(): Promise<Deno.CommandStatus>;
  /** Same as `stop()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The full nginx.conf around `http` directives, with logs and temp paths inside `dir`. */
export function nginxConfig(dir: string, port: number, http: string, main: string): string {
  const fill = (text: string) =>
    text.replaceAll("{{port}}", String(port)).replaceAll("{{dir}}", dir);
  // As root, workers would switch to `nobody`; keep them as root so they can use the temp dir.
  const user = Deno.uid() === 0 ? "user root;\n" : "";
  return `${user}${fill(main)}
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${fill(http)}
}
`;
}

/** Starts `nginx -p <tmp> -c <tmp>/nginx.conf -g "daemon off; pid ...;"` on a free port. */
export async function startNginx(options: NginxOptions): Promise<NginxProcess> {
  const binary = findBinary("nginx") ?? "/usr/sbin/nginx";
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = await tempDir("gw-nginx-");
    const port = freePort();
    const confPath = `${dir}/nginx.conf`;
    const conf = nginxConfig(dir, port, options.conf, options.main ?? "worker_processes 1;");
    await Deno.writeTextFile(confPath, conf);
    const process = spawnCaptured(
      binary,
      [
        "-p",
        `${dir}/`,
        "-e",
        `${dir}/error.log`,
        "-c",
        confPath,
        "-g",
        `daemon off; pid ${dir}/nginx.pid;`,
      ],
      { afterStop: () => removeDir(dir) },
    );
    const errorLog = async () => {
      try {
        return `--- nginx error.log ---\n${await Deno.readTextFile(`${dir}/error.log`)}\n`;
      } catch {
        return "";
      }
    };
    try {
      await waitReady(process, {
        name: "nginx",
        check: () => canConnect(port),
        description: `it listened on 127.0.0.1:${port}`,
        timeoutMs: options.readyTimeoutMs ?? 15_000,
        details: errorLog,
      });
    } catch (error) {
      lastError = error as Error;
      if (lastError.message.includes("Address already in use")) continue;
      throw lastError;
    }
    return {
      port,
      url: `http://127.0.0.1:${port}`,
      dir,
      process: process.child,
      output: async () => `${await errorLog()}${process.output()}`,
      stop: process.stop,
      [Symbol.asyncDispose]: async () => {
        await process.stop();
      },
    };
  }
  throw lastError!;
}
