import assert from "node:assert/strict";
import { apiErrorOf, describeApiError, HttpClient, networkReason, redact } from "./http.ts";
import { Output } from "./output.ts";

Deno.test("http: diagnostics per level, secrets hidden at every level", async () => {
  const err: string[] = [];
  const out = new Output({ stdout: () => {}, stderr: (t) => err.push(t) });
  const fetchFn = () =>
    Promise.resolve(
      Response.json({ machine_token: "SECRET-MACHINE", ok: 1 }, {
        headers: { "x-request-id": "r1" },
      }),
    );
  const http = new HttpClient(out, fetchFn);
  const send = () =>
    http.send({
      method: "POST",
      url: "http://x/api",
      headers: { authorization: "Bearer SECRET-USER" },
      json: { password: "SECRET-PW", name: "n" },
      peer: "x",
    });
  await send();
  assert.equal(err.join(""), "", "silent at level 0");
  out.configure(1, false);
  await send();
  assert.match(err.join(""), /^\* POST http:\/\/x\/api\n\* 200 in \d+ ms\n$/);
  err.length = 0;
  out.configure(3, false);
  const res = await send();
  const text = err.join("");
  assert.match(
    text,
    /\*\* request headers: accept: application\/json, authorization: \[redacted\], content-type: application\/json/,
  );
  assert.match(text, /\*\*\* request body: \{"password":"\[redacted\]","name":"n"\}/);
  assert.match(text, /\*\*\* response body: \{"machine_token":"\[redacted\]","ok":1\}/);
  assert(!text.includes("SECRET"), "no secret in diagnostics");
  assert.deepEqual(res.body, { machine_token: "SECRET-MACHINE", ok: 1 });
});

Deno.test("http: unreachable peers become one readable error", async () => {
  const out = new Output({ stdout: () => {}, stderr: () => {} });
  const refused = new HttpClient(
    out,
    () => Promise.reject(new TypeError("error sending request: Connection refused (os error 111)")),
  );
  await assert.rejects(
    () => refused.send({ method: "GET", url: "http://127.0.0.1:1/x", peer: "gateway 'a'" }),
    /cannot reach gateway 'a' at http:\/\/127\.0\.0\.1:1\/x: connection refused/,
  );
  assert.equal(networkReason(new DOMException("t", "TimeoutError")), "timed out");
  assert.equal(networkReason(new TypeError("dns error: failed to lookup address")), "unknown host");
});

Deno.test("http: error bodies in the API shape, the OAuth shape, or none", () => {
  const res = (status: number, body: unknown, text = JSON.stringify(body)) => ({
    status,
    headers: new Headers(),
    text,
    body,
  });
  const api = apiErrorOf(
    res(403, { error: { code: "cloud_disabled", message: "off", request_id: "r" } }),
  );
  assert.deepEqual(api, { code: "cloud_disabled", message: "off", requestId: "r" });
  assert.equal(describeApiError(api), "off (cloud_disabled, request id r)");
  assert.deepEqual(apiErrorOf(res(400, { error: "slow_down", error_description: "wait" })), {
    code: "slow_down",
    message: "wait",
  });
  assert.deepEqual(apiErrorOf(res(502, undefined, "<html>bad gateway</html>")), {
    code: "http_502",
    message: "<html>bad gateway</html>",
  });
  assert.deepEqual(redact([{ deviceCode: "x", device_code: "y", nested: { api_token: "z" } }]), [
    { deviceCode: "x", device_code: "[redacted]", nested: { api_token: "[redacted]" } },
  ]);
});
