/** @jsxImportSource hono/jsx */
/** Device approval: the page gwcli's `login` opens (`/device?user_code=…`). */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { clientIp } from "../api/mod.ts";
import {
  decideDevice,
  DEVICE_CLIENTS,
  formatUserCode,
  normalizeUserCode,
  pendingByUserCode,
} from "../auth/mod.ts";
import type { Services } from "../services.ts";
import { form, page } from "./guard.tsx";
import { Csrf, Flash, Layout } from "./layout.tsx";
import type { UiUser } from "./session.ts";

function enterCode(c: Context<AppEnv>, user: UiUser, error?: string, code?: string) {
  return c.html(
    <Layout title="Device login" user={user}>
      <div class="card narrow">
        <h1>Connect a device</h1>
        <p>Enter the code shown by gwcli.</p>
        <Flash kind="error" message={error} />
        <form method="post" action="/device">
          <Csrf token={user.session.csrf} />
          <label for="user_code">Code</label>
          <input
            id="user_code"
            name="user_code"
            value={code ?? ""}
            placeholder="XXXX-XXXX"
            autocomplete="off"
            required
          />
          <p>
            <button type="submit">Continue</button>
          </p>
        </form>
      </div>
    </Layout>,
    error ? 400 : 200,
  );
}

async function confirm(c: Context<AppEnv>, s: Services, user: UiUser, code: string) {
  const spent = s.limiter.take(`device-verify:${clientIp(c)}`, s.options.rateLimits.signInPerIp);
  if (!spent.allowed) {
    c.header("Retry-After", String(spent.retryAfterSeconds));
    return enterCode(c, user, `Too many attempts; wait ${spent.retryAfterSeconds} s.`, code);
  }
  const pending = await pendingByUserCode(s, code);
  if (!pending) return enterCode(c, user, "This code is unknown, expired or already used.", code);
  const userCode = formatUserCode(pending.user_code);
  return c.html(
    <Layout title="Approve device" user={user}>
      <div class="card narrow">
        <h1>Approve this device?</h1>
        <p>
          <strong>{DEVICE_CLIENTS[pending.client_id] ?? pending.client_id}</strong> asks to act as
          {" "}
          <strong>{user.user.email}</strong> in team{" "}
          <strong data-testid="device-team">{user.team.name}</strong>.
        </p>
        <p>Check that gwcli shows this code:</p>
        <p class="code" data-testid="device-code">{userCode}</p>
        <div class="row">
          <form method="post" action="/device/approve">
            <Csrf token={user.session.csrf} />
            <input type="hidden" name="user_code" value={userCode} />
            <button type="submit">Approve</button>
          </form>
          <form method="post" action="/device/deny">
            <Csrf token={user.session.csrf} />
            <input type="hidden" name="user_code" value={userCode} />
            <button type="submit" class="danger">Deny</button>
          </form>
        </div>
      </div>
    </Layout>,
  );
}

function decided(c: Context<AppEnv>, user: UiUser, approved: boolean, ok: boolean) {
  return c.html(
    <Layout title="Device login" user={user}>
      <div class="card narrow">
        {ok
          ? (
            <>
              <h1 data-testid="device-result">{approved ? "Device approved" : "Device denied"}</h1>
              <p>
                {approved
                  ? "You can close this window and return to gwcli."
                  : "gwcli will report that the login was denied."}
              </p>
            </>
          )
          : (
            <>
              <h1 data-testid="device-result">Code no longer valid</h1>
              <p>The code expired or was already used. Start the login again in gwcli.</p>
            </>
          )}
      </div>
    </Layout>,
    ok ? 200 : 400,
  );
}

/** Mounts `/device` and its forms. */
export function mountDevicePages(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/device",
    page(s, (c, user) => {
      const code = c.req.query("user_code");
      return code && normalizeUserCode(code).length === 8
        ? confirm(c, s, user, code)
        : enterCode(c, user, undefined, code);
    }),
  );
  ui.post("/device", form(s, (c, user, f) => confirm(c, s, user, f.user_code ?? "")));
  for (
    const [path, decision] of [["/device/approve", "approved"], ["/device/deny", "denied"]] as const
  ) {
    ui.post(
      path,
      form(s, async (c, user, f) => {
        const ok = await decideDevice(s, f.user_code ?? "", decision, user.user, user.team);
        return decided(c, user, decision === "approved", ok);
      }),
    );
  }
}
