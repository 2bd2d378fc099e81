/**
 * The DIMSE TLS listener with required client certificates, against node:tls clients holding
 * certificates openssl made: one of the trusted CA is served; another CA's, an expired one and
 * none are closed before any DIMSE, and the log reason says which (not "socket hang up").
 */
import { X509Certificate } from "node:crypto";
import tls from "node:tls";
import { assertEquals, assertMatch } from "../../../tests/assert.ts";
import {
  type IssuedCert,
  makeTestCa,
  removeDir,
  requirePeer,
  tempDir,
} from "../../../tests/support/mod.ts";
import { DimseListener } from "./server.ts";

/** What became of one client's connection: served, or refused with the logged reason. */
type Outcome = { served: true } | { refused: string };

Deno.test({
  name: "DIMSE TLS listener: a refused client certificate is logged with its reason",
  ignore: !requirePeer("openssl", "openssl", "openssl"),
  fn: async () => {
    const dir = await tempDir("dimse-tls-");
    const ca = await makeTestCa(dir, "modalities");
    const stranger = await makeTestCa(dir, "stranger");
    const server = await ca.server("gateway");
    const certs = {
      trusted: await ca.client("modality", "MODALITY1"),
      foreign: await stranger.client("foreign", "FOREIGN1"),
      expired: await ca.client("expired", "OLD1", { expired: true }),
    };
    // Each connection's outcome, in the order the listener sees them (one client at a time).
    let settle: ((o: Outcome) => void) | undefined;
    const listener = await DimseListener.listen({
      hostname: "127.0.0.1",
      port: 0,
      tls: {
        cert: server.cert,
        key: await Deno.readTextFile(server.keyPath),
        clientCa: await Deno.readTextFile(ca.certPath),
      },
      onConnection: (conn) => {
        conn.socket.destroy();
        settle?.({ served: true });
      },
      onTlsError: (err) => settle?.({ refused: err.message }),
    });
    const attempt = async (cert?: IssuedCert): Promise<Outcome> => {
      const outcome = new Promise<Outcome>((resolve) => settle = resolve);
      const socket = tls.connect({
        host: "127.0.0.1",
        port: listener.port,
        servername: "localhost",
        ca: await Deno.readTextFile(ca.certPath),
        ...(cert ? { cert: cert.cert, key: await Deno.readTextFile(cert.keyPath) } : {}),
      });
      socket.on("error", () => {});
      try {
        return await outcome;
      } finally {
        socket.destroy();
      }
    };
    try {
      assertEquals(await attempt(certs.trusted), { served: true });
      const foreign = await attempt(certs.foreign);
      assertMatch(
        "refused" in foreign ? foreign.refused : "",
        /^unknown issuer: the client certificate "CN=FOREIGN1" is issued by "CN=stranger test CA", which is not a CA of tls_client_ca_path$/,
      );
      // `-days 0` ends the certificate the second it starts; it is valid through that second.
      const end = new X509Certificate(certs.expired.cert).validToDate.getTime();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, end + 1000 - Date.now())));
      const expired = await attempt(certs.expired);
      assertMatch(
        "refused" in expired ? expired.refused : "",
        /^certificate expired: the client certificate "CN=OLD1" expired at \d{4}-/,
      );
      assertEquals(await attempt(), {
        refused: "no client certificate (peer sent no certificates)",
      });
    } finally {
      await listener.close();
      await removeDir(dir);
    }
  },
});
