/**
 * The cloud links to a gateway's operations console, and nothing else of it: the gateway's status
 * report carries `[management] console_url` (absent when unset or when the console is off), the
 * cloud accepts only an http(s) URL there, and the gateway's page shows the link.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, startTestCloud, uiRequest, uiSession } from "./cloud_harness.ts";
import { statusReport, type StatusSource } from "../gateway/cloud_client/status_report.ts";
import { createMetrics } from "../gateway/observability/mod.ts";

function source(management: { console_url?: string; console?: boolean }): StatusSource {
  return {
    version: "1.0.0",
    startedAt: new Date(0),
    ready: () => true,
    pipelines: () => [],
    metrics: createMetrics(),
    config: () => ({ management }),
  };
}

Deno.test("status report: the console's URL when configured, never when off or unset", () => {
  const url = "https://gw-1.hospital.internal:9090/admin/console";
  assertEquals(statusReport(source({ console_url: url }), null, false, 1000).console_url, url);
  assertEquals(statusReport(source({}), null, false, 1000).console_url, undefined);
  assertEquals(
    statusReport(source({ console_url: url, console: false }), null, false, 1000).console_url,
    undefined,
  );
});

Deno.test("cloud: the gateway page links to the console it reported; other schemes refused", async () => {
  const cloud = await startTestCloud();
  try {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const gw = (await call(cloud, "POST", "/api/gateway/authorize", {
      token: ada.apiToken,
      body: { gateway_code: "edge-1" },
    })).json;
    const report = (consoleUrl: string) =>
      call(cloud, "POST", "/api/gateway/status", {
        token: gw.machine_token,
        body: {
          ...statusReport(source({ console_url: consoleUrl }), null, false, Date.now()),
        },
      });
    for (const bad of ["javascript:alert(1)", "data:text/html,x", "not a url"]) {
      const refused = await report(bad);
      assertEquals(refused.status, 422, bad);
      assertMatch(refused.text, /console_url/);
    }
    const url = "https://gw-1.hospital.internal:9090/admin/console";
    assertEquals((await report(url)).status, 200);

    const session = await uiSession(cloud, ada.user);
    const page = await uiRequest(cloud, session, `/gateways/${gw.gateway_id}`);
    assertEquals(page.status, 200);
    assertMatch(
      page.text,
      /<a href="https:\/\/gw-1\.hospital\.internal:9090\/admin\/console" rel="noopener noreferrer" referrerpolicy="no-referrer" data-testid="console-link">/,
    );
    assert(!page.text.includes("javascript:"), "no script URL on the page");
  } finally {
    await cloud.stop();
  }
});
