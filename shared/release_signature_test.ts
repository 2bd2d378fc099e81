import assert from "node:assert/strict";
import {
  generateReleaseKey,
  releaseKeyProblem,
  signRelease,
  verifyRelease,
} from "./release_signature.ts";

Deno.test("release signatures: verify with the signer's key only, and only the signed bytes", async () => {
  const publisher = await generateReleaseKey();
  const stranger = await generateReleaseKey();
  const sums = new TextEncoder().encode(`${"ab".repeat(32)}  gateway-1.0.0-linux-x86_64.tar.gz\n`);
  const signature = await signRelease(publisher.privateKey, sums);
  assert.equal(await verifyRelease([publisher.publicKey], sums, signature), true);
  assert.equal(
    await verifyRelease([stranger.publicKey, publisher.publicKey], sums, signature),
    true,
  );
  assert.equal(await verifyRelease([stranger.publicKey], sums, signature), false);
  const changed = sums.slice();
  changed[0] ^= 1;
  assert.equal(await verifyRelease([publisher.publicKey], changed, signature), false);
  assert.equal(await verifyRelease([publisher.publicKey], sums, "not base64!"), false);
  assert.equal(await verifyRelease([], sums, signature), false);
  assert.equal(releaseKeyProblem(publisher.publicKey), null);
  assert.match(releaseKeyProblem(btoa("short"))!, /32 bytes/);
});
