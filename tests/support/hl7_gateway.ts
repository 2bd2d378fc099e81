/**
 * A test gateway that takes HL7 v2 over MLLP: the `hl7` endpoint's TOML on a free loopback port,
 * and an in-process gateway with that endpoint, started from the rest of its configuration.
 *
 * @example
 * ```ts ignore
 * const { gw, port } = await startMllpGateway(`
 * [backends.ehr]
 * service = "http"
 * [backends.ehr.options]
 * base_url = "http://127.0.0.1:8080"
 *
 * [pipelines.hl7]
 * endpoints = ["mllp"]
 * backends = ["ehr"]
 * `);
 * const client = await MllpTestClient.connect(port);
 * ```
 */
import { startTestGateway, type TestGateway } from "../harness.ts";
import { freePort } from "./ports.ts";

/** Options of the `hl7` endpoint's TOML. */
export interface MllpEndpointOptions {
  /** The endpoint's name (default `mllp`). */
  name?: string;
  /** More lines of `[endpoints.<name>.options]` (TLS paths, limits, ack modes). */
  options?: string;
}

/** `[endpoints.<name>]` of service `hl7` listening on 127.0.0.1:`port`. */
export function mllpEndpointToml(port: number, opts: MllpEndpointOptions = {}): string {
  const name = opts.name ?? "mllp";
  return `
[endpoints.${name}]
service = "hl7"
[endpoints.${name}.options]
bind_addr = "127.0.0.1"
port = ${port}
${opts.options ?? ""}
`;
}

/** A gateway started by {@link startMllpGateway}. */
export interface MllpGateway {
  gw: TestGateway;
  /** The port of its MLLP endpoint. */
  port: number;
}

/**
 * Starts a test gateway (in this process) whose `hl7` endpoint listens on a free loopback port,
 * followed by `rest`: the backends, pipelines and other sections, the endpoint named as in
 * `opts.name` (default `mllp`). `opts.gateway` goes to `startTestGateway`.
 */
export async function startMllpGateway(
  rest: string,
  opts: MllpEndpointOptions & { gateway?: Parameters<typeof startTestGateway>[1] } = {},
): Promise<MllpGateway> {
  const port = freePort();
  const gw = await startTestGateway(mllpEndpointToml(port, opts) + rest, opts.gateway);
  return { gw, port };
}
