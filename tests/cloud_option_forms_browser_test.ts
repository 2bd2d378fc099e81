/**
 * The option forms of the cloud UI in Debian's Chromium: the options of endpoints, backends and
 * middleware are typed fields drawn from the gateway's configuration registry (the chosen type's
 * shown, enums as selects, credentials as `${VAR}` fields, help from the schema); what they post
 * is stored as the options the JSON path gives, editing keeps working through either path, and
 * the pages pass axe-core.
 */
import type { Page } from "playwright-core";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, startTestCloud } from "./cloud_harness.ts";
import { axeProblems, signInUi } from "./support/chromium.ts";
import { launchLeanChromium } from "./support/chromium_lean.ts";
import { requirePeer } from "./support/mod.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");

/** Submits the resource form and waits for the page it leads to. */
async function save(page: Page, label: string): Promise<void> {
  await Promise.all([page.waitForLoadState("load"), page.click(`button:text-is("${label}")`)]);
}

/** The options the edit page's JSON field shows (what the cloud stored). */
async function storedOptions(page: Page): Promise<unknown> {
  return JSON.parse(await page.inputValue("#f-options"));
}

Deno.test({
  name: "web UI in Chromium: option forms from the configuration schema",
  ignore: !HAS_CHROMIUM,
  sanitizeResources: false,
  fn: async () => {
    const cloud = await startTestCloud();
    const browser = await launchLeanChromium();
    try {
      const ada = await makeUser(cloud, "ada@example.com", "Radiology");
      const service = await call(cloud, "POST", "/api/services", {
        token: ada.apiToken,
        body: {
          name: "imaging",
          endpoint_types: ["http", "fhir"],
          backend_types: ["dicom_scu", "storage"],
        },
      });
      assertEquals(service.status, 201, service.text);
      const { page } = browser;
      const base = cloud.url;
      await signInUi(page, base, "ada@example.com", ada.password);

      // An endpoint: only the chosen type's fields show; the typed field is what is stored.
      await page.goto(`${base}/endpoints/new`);
      await page.fill("#f-name", "patients");
      await page.selectOption("#f-service_id", { label: "imaging" });
      assert(!await page.isVisible("[data-testid=options-for-fhir]"), "nothing chosen yet");
      await page.selectOption("#f-type", "fhir");
      assert(await page.isVisible("[data-testid=options-for-fhir]"));
      assert(!await page.isVisible("[data-testid=options-for-http]"));
      assertMatch(
        (await page.textContent("#f-options-fhir-path_prefix-help"))!,
        /Path the endpoint serves.*Required\./,
      );
      await page.fill("#f-options-fhir-path_prefix", "/fhir");
      assertEquals(await axeProblems(page), [], "accessibility of the endpoint form");
      await save(page, "Create endpoint");
      await page.waitForURL(/\/endpoints\/[0-9a-f-]{36}\/edit$/);
      assertEquals(await storedOptions(page), { path_prefix: "/fhir" });
      assertEquals(await page.inputValue("#f-options-fhir-path_prefix"), "/fhir");
      // Editing the typed field while the JSON is untouched saves the field...
      await page.fill("#f-options-fhir-path_prefix", "/r4");
      await save(page, "Save");
      assertEquals(await storedOptions(page), { path_prefix: "/r4" });
      // ...and editing the JSON (the advanced path) saves the JSON.
      await page.fill("#f-options", '{ "path_prefix": "/r5" }');
      await save(page, "Save");
      assertEquals(await storedOptions(page), { path_prefix: "/r5" });
      assertEquals(await page.inputValue("#f-options-fhir-path_prefix"), "/r5");

      // A DIMSE backend: numbers, an enum as a select, a yes/no.
      await page.goto(`${base}/backends/new`);
      await page.fill("#f-name", "pacs");
      await page.selectOption("#f-service_id", { label: "imaging" });
      await page.selectOption("#f-type", "dicom_scu");
      const modes = await page.$$eval(
        "#f-options-dicom_scu-dimse_retrieve_mode option",
        (options) => options.map((o) => (o as unknown as { value: string }).value),
      );
      assertEquals(modes, ["", "get", "move"]);
      await page.fill("#f-options-dicom_scu-aet", "ORTHANC");
      await page.fill("#f-options-dicom_scu-host", "pacs.local");
      await page.fill("#f-options-dicom_scu-port", "4242");
      await page.selectOption("#f-options-dicom_scu-dimse_retrieve_mode", "move");
      await page.fill("#f-options-dicom_scu-incoming_store_port", "11113");
      await page.selectOption("#f-options-dicom_scu-use_tls", "false");
      assertEquals(await axeProblems(page), [], "accessibility of the backend form");
      await save(page, "Create backend");
      await page.waitForURL(/\/backends\/[0-9a-f-]{36}\/edit$/);
      assertEquals(await storedOptions(page), {
        aet: "ORTHANC",
        host: "pacs.local",
        port: 4242,
        dimse_retrieve_mode: "move",
        use_tls: false,
        incoming_store_port: 11113,
      });

      // A storage backend: credentials are `${VAR}` fields; a literal one is refused beside it.
      await page.goto(`${base}/backends/new`);
      await page.fill("#f-name", "archive");
      await page.selectOption("#f-service_id", { label: "imaging" });
      await page.selectOption("#f-type", "storage");
      assertMatch(
        (await page.textContent("[data-testid=options-for-storage] .secret-ref"))!,
        /^\$\{\s*\}$/,
      );
      await page.fill("#f-options-storage-root", "s3://archive/incoming");
      await page.fill("#f-options-storage-write_pattern", "{uuid}.json");
      await page.fill("#f-options-storage-region", "eu-central-1");
      await page.fill("#f-options-storage-access_key_id", "S3_KEY_ID");
      await page.fill("#f-options-storage-secret_access_key", "not a variable");
      await save(page, "Create backend");
      assertMatch((await page.textContent("#f-options-err"))!, /a credential cannot be stored/);
      assertEquals(
        await page.getAttribute("#f-options-storage-secret_access_key", "aria-invalid"),
        "true",
      );
      assertEquals(await page.inputValue("#f-options-storage-root"), "s3://archive/incoming");
      await page.fill("#f-options-storage-secret_access_key", "S3_SECRET");
      await save(page, "Create backend");
      await page.waitForURL(/\/backends\/[0-9a-f-]{36}\/edit$/);
      assertEquals(await storedOptions(page), {
        root: "s3://archive/incoming",
        write_pattern: "{uuid}.json",
        region: "eu-central-1",
        access_key_id: "${S3_KEY_ID}",
        secret_access_key: "${S3_SECRET}",
      });
      assertEquals(await page.inputValue("#f-options-storage-secret_access_key"), "S3_SECRET");

      // Middleware: lists one per line, named values as checkboxes.
      await page.goto(`${base}/middleware/new`);
      await page.fill("#f-name", "only_reads");
      await page.selectOption("#f-type", "request_filter");
      await page.fill("#f-options-request_filter-methods", "GET\nHEAD");
      await page.check("input[name='options.request_filter.dicomweb_services'][value=qido]");
      await page.check("input[name='options.request_filter.dicomweb_services'][value=wado]");
      assertEquals(await axeProblems(page), [], "accessibility of the middleware form");
      await save(page, "Create middleware");
      await page.waitForURL(/\/middleware\/[0-9a-f-]{36}\/edit$/);
      assertEquals(await storedOptions(page), {
        methods: ["GET", "HEAD"],
        dicomweb_services: ["qido", "wado"],
      });
      assert(
        await page.isChecked("input[name='options.request_filter.dicomweb_services'][value=wado]"),
      );
    } finally {
      await browser.close();
      await cloud.stop();
    }
  },
});
