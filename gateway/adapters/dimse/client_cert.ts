/**
 * Why a DIMSE TLS listener refused a peer's client certificate, in words an operator can act on.
 * Deno's node:tls server reports a certificate it refuses during the handshake only as "socket
 * hang up" (and an unknown issuer, an expired certificate and a v1 one alike as
 * `UNABLE_TO_VERIFY_LEAF_SIGNATURE` after it); so the listener lets the handshake finish, asks
 * the socket whether the certificate verified, and names the reason with this.
 */
import { X509Certificate } from "node:crypto";

/** The peer certificate as node:tls's `getPeerCertificate(true)` gives it. */
export interface PeerCertificate {
  raw?: Uint8Array;
  issuerCertificate?: PeerCertificate;
}

/** The certificates of a PEM bundle (`tls_client_ca_path`). */
export function pemCertificates(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

/**
 * The reason a client certificate that did not verify was refused: none sent, an unknown issuer,
 * outside its validity, or (issued by a trusted CA and in date) not usable for client
 * authentication. `code` is node:tls's `authorizationError`.
 */
export function refusalReason(
  peer: PeerCertificate | undefined,
  trusted: readonly X509Certificate[],
  code: string | undefined,
  now: number = Date.now(),
): string {
  if (!peer?.raw?.length) return "no client certificate (peer sent no certificates)";
  const chain = sentChain(peer);
  const leaf = chain[0];
  const name = `client certificate "${leaf.subject.replaceAll("\n", ", ")}"`;
  if (!chainsToTrusted(chain, trusted)) {
    return `unknown issuer: the ${name} is issued by "${leaf.issuer.replaceAll("\n", ", ")}", ` +
      "which is not a CA of tls_client_ca_path";
  }
  if (now > leaf.validToDate.getTime()) {
    return `certificate expired: the ${name} expired at ${leaf.validToDate.toISOString()}`;
  }
  if (now < leaf.validFromDate.getTime()) {
    return `certificate not yet valid: the ${name} is valid from ${leaf.validFromDate.toISOString()}`;
  }
  return `certificate refused (${code ?? "not verified"}): the ${name} is issued by a CA of ` +
    "tls_client_ca_path and in date, but not usable for client authentication (it must be " +
    "X.509 v3 with the clientAuth extended key usage)";
}

/** The leaf and the intermediates the peer sent, in order (a self-signed link ends it). */
function sentChain(peer: PeerCertificate): X509Certificate[] {
  const chain: X509Certificate[] = [];
  for (let at: PeerCertificate | undefined = peer; at?.raw?.length && chain.length < 10;) {
    const cert = new X509Certificate(at.raw);
    if (chain.some((c) => c.fingerprint256 === cert.fingerprint256)) break;
    chain.push(cert);
    at = at.issuerCertificate;
  }
  return chain;
}

/** True when a link of `chain` is signed by one of `trusted` (or is one of them). */
function chainsToTrusted(chain: X509Certificate[], trusted: readonly X509Certificate[]): boolean {
  return chain.some((cert) =>
    trusted.some((ca) =>
      ca.fingerprint256 === cert.fingerprint256 ||
      (cert.checkIssued(ca) && cert.verify(ca.publicKey))
    )
  );
}
