/** Helpers shared by the codec tests (not part of the public face). */
import { equal, fail, ok } from "node:assert/strict";
import { DEFAULT_CONTENT_LIMITS } from "../../shared/gateway_config/mod.ts";
import type { ContentLimits } from "../../shared/gateway_config/mod.ts";
import { GatewayError } from "../../gateway/errors.ts";

const ENCODER = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return ENCODER.encode(text);
}

/** The default content limits with some overridden. */
export function limits(overrides: Partial<ContentLimits> = {}): ContentLimits {
  return { ...DEFAULT_CONTENT_LIMITS, ...overrides };
}

/** Run `fn` (sync or async) and assert it throws a GatewayError with this status and code. */
export async function expectError(
  fn: () => unknown,
  status: number,
  code: string,
  messageIncludes?: string,
): Promise<GatewayError> {
  let thrown: unknown;
  try {
    await fn();
  } catch (e) {
    thrown = e;
  }
  if (thrown === undefined) fail(`expected ${status} ${code}, nothing was thrown`);
  ok(thrown instanceof GatewayError, `expected a GatewayError, got ${String(thrown)}`);
  equal(thrown.code, code, `code (message: ${thrown.message})`);
  equal(thrown.status, status, `status of ${code}`);
  if (messageIncludes !== undefined) {
    ok(
      thrown.message.includes(messageIncludes),
      `message ${JSON.stringify(thrown.message)} should include ${JSON.stringify(messageIncludes)}`,
    );
  }
  return thrown;
}

/** SHA-256 of "abc" (FIPS 180-2 test vector). */
export const SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
/** SHA-256 of the empty string. */
export const SHA256_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/** SHA-256 of "hello world". */
export const SHA256_HELLO_WORLD =
  "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";
