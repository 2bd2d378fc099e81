/**
 * Who may connect to the listeners no protocol authenticates: `allowed_source_addresses` on an
 * `hl7` (MLLP) and a `dicom_scp` (DIMSE) endpoint. A sender from an address outside the list is
 * closed before a byte is read, with a warning naming it, while one inside is served; a reload
 * applies a new list to new connections. The senders are @medplum/hl7's Hl7Client, a raw MLLP
 * socket bound to 127.0.0.2, and DCMTK's echoscu. (That a network-reachable listener with no
 * way of authenticating is refused at load is components/endpoint_hl7_test.ts.)
 */
import net from "node:net";
import { Hl7Message } from "@medplum/core";
import { Hl7Client } from "@medplum/hl7";
import { encodeMllpFrame, MllpFrameReader } from "../gateway/adapters/mllp/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { ackOf, hl7Message } from "./support/mllp.ts";
import { freePort, requirePeer, runCommand, waitFor, withManagementToken } from "./support/mod.ts";

const HAS_DCMTK = requirePeer("DCMTK", "echoscu", "dcmtk");

/** The JSON log lines of `gw` with `msg`. */
function logged(gw: TestGateway, msg: string): Record<string, unknown>[] {
  return gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);
}

/** Waits until `gw` logged `msg` for `remote_addr`. */
async function refusalLogged(gw: TestGateway, msg: string, remote: string): Promise<void> {
  await waitFor(() => Promise.resolve(logged(gw, msg).some((l) => l.remote_addr === remote)), {
    timeoutMs: 10_000,
    description: `${msg} for ${remote}`,
  });
}

/** Reloads `gw` with `toml` through the management API. */
async function reload(gw: TestGateway, toml: string): Promise<void> {
  await gw.writeConfig(toml);
  const res = await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }));
  assertEquals(res.status, 200, await res.text());
}

/**
 * One MLLP message from the local address `from` (node:net can choose it; loopback answers on
 * all of 127.0.0.0/8): the ACK's text, or null when the gateway closed the connection unanswered.
 */
function sendFrom(from: string, port: number, message: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const reader = new MllpFrameReader({ maxFrameBytes: 1 << 20 });
    const socket = net.connect({ host: "127.0.0.1", port, localAddress: from });
    socket.on("connect", () => socket.write(encodeMllpFrame(new TextEncoder().encode(message))));
    socket.on("data", (chunk: Uint8Array) => {
      const [frame] = reader.push(new Uint8Array(chunk));
      if (frame === undefined) return;
      socket.destroy();
      resolve(new TextDecoder().decode(frame));
    });
    socket.on("close", () => resolve(null));
    socket.on(
      "error",
      (err: Error & { code?: string }) => err.code === "ECONNRESET" ? resolve(null) : reject(err),
    );
  });
}

function hl7Config(port: number, allowed: string[]): string {
  return `
[endpoints.mllp]
service = "hl7"
[endpoints.mllp.options]
bind_addr = "127.0.0.1"
port = ${port}
allowed_source_addresses = ${JSON.stringify(allowed)}

[backends.main]
service = "echo"

[pipelines.hl7]
endpoints = ["mllp"]
backends = ["main"]
`;
}

Deno.test({
  name: "hl7 endpoint: allowed_source_addresses serves listed senders only, and follows reloads",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const port = freePort();
    const gw = await startTestGateway(hl7Config(port, ["127.0.0.2"]));
    const refused = "HL7 connection refused: address not in allowed_source_addresses";
    try {
      // Listed: acknowledged.
      const listed = await sendFrom("127.0.0.2", port, hl7Message("ADT^A01^ADT_A01", "SRC-1"));
      assert(listed !== null, "127.0.0.2 is listed and gets its ACK");
      assertEquals(ackOf(listed).code, "AA");
      // Not listed: 127.0.0.1 is closed unanswered, the refusal logged, nothing reaches the
      // pipeline.
      assertEquals(await sendFrom("127.0.0.1", port, hl7Message("ADT^A01", "SRC-2")), null);
      await refusalLogged(gw, refused, "127.0.0.1");
      const line = logged(gw, refused)[0];
      assertEquals([line.level, line.endpoint], ["warn", "mllp"]);
      assertEquals(
        logged(gw, "hl7 message").map((l) => l.control_id),
        ["SRC-1"],
        "only the listed sender's message reached the pipeline",
      );

      // A reload swaps the list: now a third-party sender from 127.0.0.1 is served and 127.0.0.2
      // refused.
      await reload(gw, hl7Config(port, ["127.0.0.1/32"]));
      const medplum = new Hl7Client({ host: "127.0.0.1", port });
      try {
        const ack = await medplum.sendAndWait(
          Hl7Message.parse(hl7Message("ADT^A01^ADT_A01", "SRC-3")),
          { timeoutMs: 10_000 },
        );
        assertEquals(ack.getSegment("MSA")?.getField(1)?.toString(), "AA");
      } finally {
        await medplum.close().catch(() => {});
      }
      assertEquals(await sendFrom("127.0.0.2", port, hl7Message("ADT^A01", "SRC-4")), null);
      await refusalLogged(gw, refused, "127.0.0.2");
    } finally {
      await gw.stop();
    }
  },
});

function scpConfig(port: number, allowed: string[]): string {
  return `
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${port}
allowed_source_addresses = ${JSON.stringify(allowed)}

[backends.main]
service = "echo"

[pipelines.dimse]
endpoints = ["scp"]
backends = ["main"]
`;
}

Deno.test({
  name: "dicom_scp endpoint: allowed_source_addresses refuses echoscu from elsewhere, reloads",
  ignore: !HAS_DCMTK,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const port = freePort();
    const gw = await startTestGateway(scpConfig(port, ["10.0.0.0/8", "fd00::/8"]));
    const echo = () =>
      runCommand("echoscu", ["-aet", "MODALITY", "-aec", "GWSCP", "127.0.0.1", String(port)], {
        timeoutMs: 20_000,
      });
    try {
      const refused = await echo();
      assert(refused.code !== 0, "127.0.0.1 is not listed");
      assertMatch(`${refused.stdout}\n${refused.stderr}`, /Association Request Failed|Peer/i);
      await refusalLogged(
        gw,
        "DICOM connection refused: address not in allowed_source_addresses",
        "127.0.0.1",
      );
      await reload(gw, scpConfig(port, ["127.0.0.0/8"]));
      const served = await echo();
      assertEquals(served.code, 0, `${served.stdout}\n${served.stderr}`);
    } finally {
      await gw.stop();
    }
  },
});
