import assert from "node:assert/strict";
import { browserCommand, systemBrowser } from "./browser.ts";
import { envOf } from "./env.ts";

const URL_ = "https://c.example/device?user_code=AB&x=1";

Deno.test("browser: xdg-open, open, start; $BROWSER with or without %s; turned off", () => {
  const none = envOf({});
  assert.deepEqual(browserCommand(URL_, none, "linux"), { command: "xdg-open", args: [URL_] });
  assert.deepEqual(browserCommand(URL_, none, "freebsd"), { command: "xdg-open", args: [URL_] });
  assert.deepEqual(browserCommand(URL_, none, "darwin"), { command: "open", args: [URL_] });
  assert.deepEqual(browserCommand(URL_, none, "windows"), {
    command: "cmd",
    args: ["/c", "start", '""', "https://c.example/device?user_code=AB^&x=1"],
  });
  assert.deepEqual(browserCommand(URL_, envOf({ BROWSER: "firefox --new-tab" }), "linux"), {
    command: "firefox",
    args: ["--new-tab", URL_],
  });
  assert.deepEqual(browserCommand(URL_, envOf({ BROWSER: "w3m %s -o x:lynx" }), "linux"), {
    command: "w3m",
    args: [URL_, "-o", "x"],
  });
  assert.equal(browserCommand(URL_, envOf({ BROWSER: "none" }), "linux"), null);
  assert.equal(browserCommand(URL_, envOf({ GWCLI_NO_BROWSER: "1", BROWSER: "x" }), "linux"), null);
});

Deno.test({
  name: "browser: a missing opener, a failing one and a working one",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const missing = await systemBrowser(envOf({ BROWSER: "/nonexistent/browser" }))(URL_);
    assert.deepEqual(missing, {
      opened: false,
      reason: "/nonexistent/browser is not installed",
      command: "/nonexistent/browser",
    });
    const failing = await systemBrowser(envOf({ BROWSER: "false" }))(URL_);
    assert.deepEqual(failing, {
      opened: false,
      reason: "false exited with code 1",
      command: "false",
    });
    assert.deepEqual(await systemBrowser(envOf({ BROWSER: "true" }))(URL_), {
      opened: true,
      command: "true",
    });
    const lingering = await systemBrowser(envOf({ BROWSER: "sleep 5 %s" }), 100)("0");
    assert.deepEqual(
      lingering,
      { opened: true, command: "sleep" },
      "a browser still running counts as opened",
    );
  },
});
