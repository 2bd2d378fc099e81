/**
 * The cloud checks a middleware record with the gateway's own schema: the gateway's authentication
 * middleware are accepted as the gateway accepts them, and refused with the gateway's messages.
 */
import { assertEquals } from "../../tests/assert.ts";
import type { MiddlewareRecord } from "../store/mod.ts";
import { checkMiddleware } from "./checks.ts";

function record(type: string, options: Record<string, unknown>): MiddlewareRecord {
  return {
    id: crypto.randomUUID(),
    team_id: crypto.randomUUID(),
    name: "auth",
    revision: 1,
    created_at: "",
    updated_at: "",
    description: "",
    type,
    options,
    transform_id: null,
  } as unknown as MiddlewareRecord;
}

Deno.test("checkMiddleware: the security middleware as the gateway's schema has them", () => {
  const digest = "sha256:" + "ab".repeat(32);
  assertEquals(checkMiddleware(record("api_key", { keys: { lab_system: digest } })), []);
  assertEquals(checkMiddleware(record("basic_auth", { htpasswd_path: "data/users.htpasswd" })), []);
  const plain = checkMiddleware(record("api_key", { keys: { lab_system: "the-key-itself" } }));
  assertEquals(plain.map((p) => p.field), ["options.keys.lab_system"]);
  const none = checkMiddleware(record("basic_auth", {}));
  assertEquals(none.map((p) => p.field), ["options.htpasswd_path"]);
  const jwt = { jwks_url: "https://login.example.org/jwks", issuer: "https://login.example.org" };
  assertEquals(
    checkMiddleware(record("jwt_auth", { ...jwt, audience: ["fhir"], smart: true })),
    [],
  );
  const hs = checkMiddleware(
    record("jwt_auth", { ...jwt, audience: ["fhir"], algorithms: ["HS256"] }),
  );
  assertEquals(hs.map((p) => p.field), ["options.algorithms[0]"]);
  assertEquals(checkMiddleware(record("rate_limit", { requests_per_second: 5 })), []);
  assertEquals(checkMiddleware(record("ip_filter", { allow: ["10.0.0.0/8"] })), []);
});
