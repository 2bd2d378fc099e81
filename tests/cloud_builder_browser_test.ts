/**
 * From an empty team to traffic, in Debian's Chromium through the web UI only: sign up, add a
 * gateway, a service, an endpoint, a JOLT transform (live preview as one types), a transform
 * middleware and a backend, build the pipeline (TOML and diff beside it) and publish it. Then a
 * real gateway process, authorized with a token made on the tokens page, pulls the configuration
 * and serves the pipeline. Every page passes axe-core with no serious or critical violation,
 * keyboard navigation reaches the builder's buttons. With UPDATE_DOCS=1 each page's screenshot is
 * written to docs/screenshots.
 */
import { generateIdentity } from "age-encryption";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, startTestCloud } from "./cloud_harness.ts";
import { freePort, requirePeer, startGateway, waitFor } from "./support/mod.ts";
import { axeProblems } from "./support/chromium.ts";
import { launchLeanChromium } from "./support/chromium_lean.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");
const SHOTS = Deno.env.get("UPDATE_DOCS")
  ? new URL("../docs/screenshots/", import.meta.url).pathname
  : undefined;

Deno.test({
  name: "web UI in Chromium: an empty team builds a pipeline that a real gateway pulls and serves",
  ignore: !HAS_CHROMIUM,
  sanitizeResources: false,
  fn: async () => {
    const cloud = await startTestCloud({
      rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never,
    });
    // Screenshots are for the docs: taken only when they are updated (UPDATE_DOCS=1).
    const shots = SHOTS;
    if (shots) await Deno.mkdir(shots, { recursive: true });
    const browser = await launchLeanChromium();
    let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
    const checked: string[] = [];
    try {
      const page = browser.page;
      const cspErrors: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
      });
      const base = cloud.url;
      /** Checks the page with axe and writes its screenshot. */
      const visit = async (name: string) => {
        await page.waitForLoadState("load");
        assertEquals(await axeProblems(page), [], `accessibility of ${name} (${page.url()})`);
        if (shots) await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
        checked.push(name);
      };
      const submit = async (label: string) => {
        await Promise.all([
          page.waitForLoadState("load"),
          page.click(`button:text-is("${label}")`),
        ]);
      };

      // Sign up: an empty team.
      await page.goto(`${base}/sign-up`);
      await visit("sign-up");
      await page.fill("#name", "Ada Lovelace");
      await page.fill("#email", "ada@example.com");
      await page.fill("#password", "analytical engine");
      await page.fill("#team", "Radiology");
      await page.click("button[type=submit]");
      await page.waitForURL(`${base}/gateways`);
      await visit("gateways-empty");

      // A gateway.
      await page.click("text=New gateway");
      await page.waitForURL(`${base}/gateways/new`);
      await visit("gateway-new");
      await page.fill("#f-code", "edge-1");
      await submit("Create gateway");
      await page.waitForURL(/\/gateways\/[0-9a-f-]{36}$/);

      // A service, with a problem first: the API's message is shown beside the field.
      await page.goto(`${base}/services/new`);
      await page.fill("#f-name", "fhir intake");
      await page.check("input[name=endpoint_types][value=http]");
      await page.check("input[name=backend_types][value=echo]");
      await submit("Create service");
      assertMatch((await page.textContent("#f-name-err"))!, /use letters, digits/);
      await visit("service-form-problem");
      await page.fill("#f-name", "fhir");
      await submit("Create service");
      await page.waitForURL(/\/services\/[0-9a-f-]{36}\/edit$/);
      await visit("service-edit");

      // An endpoint.
      await page.goto(`${base}/endpoints/new`);
      await page.fill("#f-name", "patients");
      await page.selectOption("#f-service_id", { label: "fhir" });
      await page.selectOption("#f-type", "http");
      await page.fill("#f-options", '{ "path_prefix": "/patients" }');
      await visit("endpoint-new");
      await submit("Create endpoint");
      await page.waitForURL(/\/endpoints\/[0-9a-f-]{36}\/edit$/);

      // A transform in the JOLT editor: the preview follows the sample as it is typed.
      await page.goto(`${base}/transforms/new`);
      await page.fill("#f-name", "patient_rename");
      const sample = JSON.parse((await page.inputValue("#f-sample"))!);
      sample.name[0].family = "Lovelace";
      await page.fill("#f-sample", JSON.stringify(sample, null, 2));
      await page.locator("[data-testid=jolt-output]", { hasText: "Lovelace" }).waitFor();
      await visit("transform-editor");
      await submit("Create transform");
      await page.waitForURL(/\/transforms\/[0-9a-f-]{36}\/edit$/);

      // The middleware that applies it, and the backend.
      await page.goto(`${base}/middleware/new`);
      await page.fill("#f-name", "rename");
      await page.selectOption("#f-type", "transform");
      await page.selectOption("#f-transform_id", { label: "patient_rename" });
      await page.fill("#f-options", '{ "apply": "left", "fail_on_error": true }');
      await submit("Create middleware");
      await page.waitForURL(/\/middleware\/[0-9a-f-]{36}\/edit$/);
      await page.goto(`${base}/backends/new`);
      await page.fill("#f-name", "echo");
      await page.selectOption("#f-service_id", { label: "fhir" });
      await page.selectOption("#f-type", "echo");
      await visit("backend-new");
      await submit("Create backend");
      await page.waitForURL(/\/backends\/[0-9a-f-]{36}\/edit$/);
      await page.goto(`${base}/endpoints`);
      await visit("endpoints-list");

      // The pipeline builder.
      await page.goto(`${base}/pipelines`);
      await page.click("text=New pipeline");
      await page.waitForURL(`${base}/pipelines/new`);
      await page.fill("#f-name", "patients");
      await page.selectOption("#f-gateway_id", { label: "edge-1" });
      await page.check("[data-testid=endpoint-choice] input[type=checkbox]");
      await page.selectOption("#add-mw", { label: "rename (transform)" });
      await submit("Add middleware");
      await page.selectOption("#add-be", { label: "echo (echo)" });
      await submit("Add backend");
      assertMatch(
        (await page.textContent("[data-testid=pipeline-toml]"))!,
        /\[pipelines\.patients\]/,
      );
      assertMatch(
        (await page.textContent("[data-testid=gateway-diff]"))!,
        /\+\[pipelines\.patients\]/,
      );
      assertMatch((await page.textContent("[data-testid=mw-list]"))!, /rename \(transform\)/);
      // Keyboard: from the top of the page, Tab reaches the skip link first and Publish later.
      await page.focus("body");
      await page.keyboard.press("Tab");
      assertEquals(
        await page.evaluate("document.activeElement?.textContent"),
        "Skip to content",
      );
      let reached = false;
      for (let i = 0; i < 80 && !reached; i++) {
        await page.keyboard.press("Tab");
        reached = await page.evaluate(`document.activeElement?.textContent === "Publish"`);
      }
      assert(reached, "Tab reaches the Publish button");
      await visit("pipeline-builder");
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/pipelines\/[0-9a-f-]{36}$/);
      await visit("pipeline");

      // A token for the gateway, from the tokens page.
      await page.goto(`${base}/tokens`);
      await page.fill("#token-name", "edge-1 install");
      await submit("Create token");
      const apiToken = (await page.textContent("[data-testid=new-token]"))!.trim();
      await visit("tokens");
      const authorized = await call(cloud, "POST", "/api/gateway/authorize", {
        token: apiToken,
        body: { gateway_code: "edge-1" },
      });
      assertEquals(authorized.status, 200, authorized.text);

      // A real gateway process pulls the published configuration and serves the pipeline.
      const dataPort = freePort();
      const mgmtPort = freePort();
      gateway = await startGateway({
        configText: `[network.main]\nbind = "127.0.0.1"\nport = ${dataPort}\n\n` +
          `[management]\nbind = "127.0.0.1"\nport = ${mgmtPort}\n\n` +
          `[cloud]\nenabled = true\nurl = "${cloud.url}"\nstatus_interval_secs = 1\n`,
        env: {
          GATEWAY_MACHINE_TOKEN: JSON.stringify(authorized.json),
          GATEWAY_ENCRYPTION_KEY: await generateIdentity(),
        },
      });
      let answer: { status: number; body: { data?: Record<string, unknown> } } | undefined;
      await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${dataPort}/patients`, {
          method: "POST",
          headers: { "content-type": "application/fhir+json" },
          body: JSON.stringify(sample),
        });
        answer = { status: res.status, body: await res.json().catch(() => ({})) };
        return res.status === 200;
      }, { timeoutMs: 30_000, intervalMs: 250, description: "the gateway serving /patients" });
      assertEquals(answer!.body.data?.lastName, "Lovelace", JSON.stringify(answer));
      assertEquals(answer!.body.data?.type, "Patient");

      // The versions page sees the gateway apply; the fleet page charts its reports.
      const gatewayId = authorized.json.gateway_id;
      await waitFor(async () => {
        await page.goto(`${base}/gateways/${gatewayId}/versions`);
        return (await page.textContent("[data-testid=versions]"))!.includes("applied");
      }, { timeoutMs: 20_000, intervalMs: 500, description: "the apply report" });
      await visit("versions");
      // Reports land one per minute in the series: move the cloud's clock on between two.
      const reports = async () =>
        (await cloud.server.services.store.statusSeries.since(
          authorized.json.team_id ?? (await call(cloud, "GET", "/api/me", { token: apiToken }))
            .json.team.id,
          gatewayId,
          0,
        )).length;
      await waitFor(async () => (await reports()) >= 1, {
        timeoutMs: 20_000,
        intervalMs: 250,
        description: "a status report",
      });
      cloud.clock.advance(61_000);
      await waitFor(async () => (await reports()) >= 2, {
        timeoutMs: 20_000,
        intervalMs: 250,
        description: "a second status report",
      });
      await page.goto(`${base}/fleet?hours=1`);
      assertEquals(await page.getAttribute("[data-testid=chart-requests]", "data-points"), "1");
      await visit("fleet");
      await page.goto(`${base}/gateways/${gatewayId}`);
      await visit("gateway");
      assertEquals(cspErrors, [], "nothing was refused by the content security policy");
    } finally {
      await gateway?.stop();
      await browser.close();
      await cloud.stop();
    }
    assert(checked.length >= 15, `checked ${checked.length} pages`);
  },
});
