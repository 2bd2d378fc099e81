/**
 * The per-address check budget: an address that used up its checks gets 429 with Retry-After
 * before anything is hashed; other addresses, and remembered answers, are not affected.
 */
import bcrypt from "bcryptjs";
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { Body, RequestEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import { BasicAuthMiddleware, type BasicAuthOptions } from "./basic_auth.ts";
import { CheckBudget } from "./check_budget.ts";
import { passwordMatches } from "./password_hash.ts";

function request(user: string, password: string, remoteAddr?: string): RequestEnvelope {
  return new RequestEnvelope({
    id: "t",
    protocol: "http",
    method: "GET",
    path: "/x",
    endpoint: "api",
    headers: new Headers({ authorization: `Basic ${btoa(`${user}:${password}`)}` }),
    body: Body.empty(),
    remoteAddr,
  });
}

const OPTIONS: BasicAuthOptions = {
  htpasswd_path: "unused",
  realm: "r",
  forward_credentials: false,
  address_checks_per_minute: 6,
  address_check_burst: 3,
  max_addresses: 100,
};

Deno.test("basic_auth: an address past its check budget gets 429 before any hashing", async () => {
  const users = new Map([["ada", bcrypt.hashSync("right", 4)]]);
  let hashed = 0;
  const pool = {
    verify: (password: string, hash: string) => {
      hashed++;
      return Promise.resolve(passwordMatches(password, hash));
    },
    release: () => {},
  };
  let now = 1_000_000;
  const budget = new CheckBudget(
    { perMinute: 6, burst: 3, maxAddresses: 100 },
    undefined,
    () => now,
  );
  const mw = new BasicAuthMiddleware("auth", users, OPTIONS, { pool, budget });
  const outcome = (req: RequestEnvelope) =>
    mw.onRequest(req).then(() => 200, (e: GatewayError) => e.status);

  await mw.onRequest(request("ada", "right", "10.0.0.1")); // a check: 2 left
  assertEquals(await outcome(request("ada", "wrong-1", "10.0.0.1")), 401);
  assertEquals(await outcome(request("nobody", "x", "10.0.0.1")), 401); // unknown users spend too
  assertEquals(hashed, 3);

  const err = await assertRejects(() => mw.onRequest(request("ada", "wrong-2", "10.0.0.1")));
  const refused = err as GatewayError;
  assertEquals([refused.status, refused.code, refused.headers], [
    429,
    "too_many_password_checks",
    { "retry-after": "10" }, // 6 per minute: a check every 10 s
  ]);
  assertEquals(hashed, 3, "nothing was hashed for the refused attempt");
  // A remembered answer costs nothing, so a client that logged in keeps working.
  assertEquals(await outcome(request("ada", "right", "10.0.0.1")), 200);
  // Another address has a budget of its own; ip_filter's client.ip wins over the peer.
  assertEquals(await outcome(request("ada", "wrong-3", "10.0.0.2")), 401);
  const proxied = request("ada", "wrong-4", "10.0.0.1");
  proxied.metadata["client.ip"] = "192.0.2.7";
  assertEquals(await outcome(proxied), 401);
  assertEquals(hashed, 5);

  now += 10_000; // one check is back
  assertEquals(await outcome(request("ada", "wrong-5", "10.0.0.1")), 401);
  assertEquals(await outcome(request("ada", "wrong-6", "10.0.0.1")), 429);
  assertEquals(hashed, 6);
});

Deno.test("check budget: every worker spends from the same shared buckets", () => {
  const memory = new SharedArrayBuffer(CheckBudget.bytesFor(10));
  const options = { perMinute: 1, burst: 2, maxAddresses: 10 };
  const [a, b] = [new CheckBudget(options, memory), new CheckBudget(options, memory)];
  const req = request("ada", "x", "10.0.0.9");
  a.spend(req);
  b.spend(req);
  let status = 0;
  try {
    a.spend(req);
  } catch (err) {
    status = (err as GatewayError).status;
  }
  assertEquals(status, 429);
});
