/**
 * The ports of the embedded default from `--port` / `--management-port`, or from
 * `GATEWAY_PORT` / `GATEWAY_MANAGEMENT_PORT` when a flag is not given. A config file names its
 * own ports: the flags are refused with `--config`, and the variables are ignored (with a note).
 */
import type { DefaultPorts } from "./default.ts";

/** The variables that stand in for `--port` and `--management-port`. */
export const PORT_ENV = { port: "GATEWAY_PORT", managementPort: "GATEWAY_MANAGEMENT_PORT" };

/** The flags as parsed (text, or absent). */
export interface PortFlags {
  port?: string;
  "management-port"?: string;
}

/** The ports, with a note for the operator; or the problem that stops the start. */
export type PortChoice =
  | { ok: true; ports: DefaultPorts; note?: string }
  | { ok: false; problem: string };

/** Chooses the embedded default's ports from `flags`, then `env`. */
export function chooseDefaultPorts(
  flags: PortFlags,
  env: (name: string) => string | undefined,
  withConfig: boolean,
): PortChoice {
  const sources: [keyof DefaultPorts, string, string | undefined][] = [
    ["port", "--port", flags.port],
    ["managementPort", "--management-port", flags["management-port"]],
  ];
  if (withConfig) {
    const flag = sources.find(([, , value]) => value !== undefined);
    if (flag) {
      return {
        ok: false,
        problem: `${flag[1]} applies to the embedded default only: with --config, set the ports ` +
          "in the file ([network.<name>] port, [management] port)",
      };
    }
    const set = sources.map(([key]) => PORT_ENV[key]).filter((name) => env(name)?.trim());
    return {
      ok: true,
      ports: {},
      ...(set.length ? { note: `${set.join(" and ")} ignored: --config names its own ports` } : {}),
    };
  }
  const ports: DefaultPorts = {};
  for (const [key, flag, value] of sources) {
    const fromEnv = env(PORT_ENV[key])?.trim() || undefined;
    const text = value ?? fromEnv;
    if (text === undefined) continue;
    const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
    if (!(n >= 1 && n <= 65535)) {
      const source = value !== undefined ? flag : PORT_ENV[key];
      return {
        ok: false,
        problem: `${source}: expected a TCP port (1-65535), found ${JSON.stringify(text)}`,
      };
    }
    ports[key] = n;
  }
  return { ok: true, ports };
}
