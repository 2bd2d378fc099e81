/**
 * Invitations over the REST API and the web UI's forms: only owners invite, list and revoke; the
 * code is shown once and stored only as a hash; it works once, for the invited address only,
 * until it expires or is revoked; a newer invitation to the address replaces a pending one.
 * Creating a team does not switch to it.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, uiRequest, uiSession, withCloud } from "./cloud_harness.ts";

const LIMITS = { rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never };

Deno.test("invitations: owners invite; the code works once, for its address, until it ends", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const grace = await makeUser(cloud, "grace@example.com", "Compilers");
    const bob = await makeUser(cloud, "bob@example.com", "Cardiology");
    const invite = (email: string, extra: Record<string, unknown> = {}, token = ada.apiToken) =>
      call(cloud, "POST", "/api/team/invitations", { token, body: { email, ...extra } });
    const accept = (code: string, token: string) =>
      call(cloud, "POST", "/api/invitations/accept", { token, body: { code } });

    const made = await invite("Grace@Example.com", { role: "owner" });
    assertEquals(made.status, 201, made.text);
    assertEquals(made.headers.get("cache-control"), "no-store");
    assertMatch(made.json.code, /^gwi_[A-Za-z0-9_-]{43}$/);
    assertEquals(made.json.url, `${cloud.baseUrl}/invitations/accept?code=${made.json.code}`);
    assertEquals([made.json.email, made.json.role, made.json.state], [
      "grace@example.com",
      "owner",
      "pending",
    ]);
    assertEquals(
      Date.parse(made.json.expires_at) - Date.parse(made.json.created_at),
      7 * 86_400_000,
      "7 days by default",
    );
    assertEquals("hash" in made.json, false);
    // Only the hash is stored: the code appears in no KV entry.
    for await (const e of cloud.server.services.store.kv.list({ prefix: [] })) {
      assert(
        !JSON.stringify(e, (_k, v) => typeof v === "bigint" ? String(v) : v)
          .includes(made.json.code.slice(4)),
        `the code is in ${JSON.stringify(e.key)}`,
      );
    }
    const listed = await call(cloud, "GET", "/api/team/invitations", { token: ada.apiToken });
    assertEquals(listed.json.items.length, 1);
    assertEquals(["code" in listed.json.items[0], "url" in listed.json.items[0]], [false, false]);

    // Refusals: members and other teams' owners cannot manage A's invitations; bad input.
    await call(cloud, "POST", "/api/team/members", {
      token: ada.apiToken,
      body: { email: "bob@example.com" },
    });
    const bobInA = (await call(cloud, "PUT", "/api/me/current-team", {
      token: bob.userToken,
      body: { team_id: ada.team.id },
    })).json.access_token;
    assertEquals((await invite("x@example.com", {}, bobInA)).status, 403, "members do not invite");
    assertEquals(
      (await call(cloud, "GET", "/api/team/invitations", { token: bobInA })).status,
      403,
    );
    assertEquals(
      (await call(cloud, "DELETE", `/api/team/invitations/${made.json.id}`, { token: bobInA }))
        .status,
      403,
    );
    assertEquals(
      (await call(cloud, "DELETE", `/api/team/invitations/${made.json.id}`, {
        token: grace.apiToken,
      })).status,
      404,
      "another team's invitation is not found",
    );
    const member = await invite("bob@example.com");
    assertEquals([member.status, member.json.error.code], [409, "conflict"]);
    assertEquals((await invite("x@example.com", { expires_in_days: 31 })).status, 422);
    assertEquals((await invite("not an address")).status, 422);

    // Accepting: user tokens only, the invited account only.
    const viaApiToken = await accept(made.json.code, grace.apiToken);
    assertEquals(viaApiToken.status, 403);
    const wrongUser = await accept(made.json.code, bob.userToken);
    assertEquals([wrongUser.status, wrongUser.json.error.code], [403, "forbidden"]);
    assertMatch(wrongUser.json.error.message, /for grace@example\.com/);
    const unknown = await accept(`gwi_${"x".repeat(43)}`, grace.userToken);
    assertEquals([unknown.status, unknown.json.error.code], [404, "not_found"]);
    const joined = await accept(made.json.code, grace.userToken);
    assertEquals(joined.status, 200, joined.text);
    assertEquals(joined.json, {
      team: { id: ada.team.id, name: "Radiology", role: "owner" },
      already_member: false,
    });
    const me = await call(cloud, "GET", "/api/me", { token: grace.userToken });
    assertEquals(me.json.user.current_team_id, grace.team.id, "joining does not switch");
    assertEquals(
      me.json.teams.map((t: { name: string; role: string }) => `${t.name}:${t.role}`).sort(),
      ["Compilers:owner", "Radiology:owner"],
    );
    const twice = await accept(made.json.code, grace.userToken);
    assertEquals([twice.status, twice.json.error.code], [410, "invitation_used"]);

    // Revoked, replaced, expired.
    const toRevoke = await invite("judy@example.com");
    const revoked = await call(cloud, "DELETE", `/api/team/invitations/${toRevoke.json.id}`, {
      token: ada.apiToken,
    });
    assertEquals([revoked.status, revoked.json.state], [200, "revoked"]);
    const judy = await makeUser(cloud, "judy@example.com", "J");
    const afterRevoke = await accept(toRevoke.json.code, judy.userToken);
    assertEquals([afterRevoke.status, afterRevoke.json.error.code], [410, "invitation_revoked"]);
    const first = await invite("judy@example.com");
    const second = await invite("judy@example.com", { expires_in_days: 1 });
    const replaced = await accept(first.json.code, judy.userToken);
    assertEquals(replaced.json.error.code, "invitation_revoked", "a newer invitation replaces it");
    cloud.clock.advance(86_400_000 + 1000);
    // A day later the user tokens have expired too: Judy signs in again.
    const s = cloud.server.services;
    const judyAgain = (await s.jwt.issueUserToken(judy.user, judy.team, 3600)).token;
    const late = await accept(second.json.code, judyAgain);
    assertEquals([late.status, late.json.error.code], [410, "invitation_expired"]);
    const states = await call(cloud, "GET", "/api/team/invitations?state=expired", {
      token: ada.apiToken,
    });
    assertEquals(states.json.items.map((x: { id: string }) => x.id), [second.json.id]);
    assertEquals(
      (await call(cloud, "GET", "/api/team/invitations?state=sent", { token: ada.apiToken }))
        .status,
      422,
    );
    const audit = await call(cloud, "GET", "/api/audit?action=invitation.", {
      token: ada.apiToken,
    });
    assertEquals(audit.status, 200, audit.text);
    assertEquals(
      new Set(audit.json.items.map((e: { action: string }) => e.action)),
      new Set(["invitation.created", "invitation.accepted", "invitation.revoked"]),
    );
  }, LIMITS);
});

Deno.test("invitations in the UI: owners only, the link shown once, a new account from the link", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const ui = await uiSession(cloud, ada.user);
    const created = await uiRequest(cloud, ui, "/teams/invitations", {
      email: "grace@example.com",
      role: "member",
      expires_in_days: "7",
    });
    assertEquals(created.status, 200);
    const link = /data-testid="invitation-link">([^<]+)</.exec(created.text)![1];
    const code = new URL(link.replaceAll("&amp;", "&")).searchParams.get("code")!;
    assert(!(await uiRequest(cloud, ui, "/teams")).text.includes(code), "shown once");

    // Anonymous: the page offers sign-in and sign-up; a form without its CSRF cookie is refused.
    const anonymous = await fetch(`${cloud.url}/invitations/accept?code=${code}`);
    const html = await anonymous.text();
    assertEquals(anonymous.status, 200);
    assertMatch(html, /Sign in as grace@example\.com/);
    const cookie = anonymous.headers.getSetCookie()[0].split(";")[0];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1];
    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${cloud.url}/invitations/accept`, {
        method: "POST",
        redirect: "manual",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin: cloud.url,
          ...headers,
        },
        body: new URLSearchParams(form),
      });
    const noCookie = await post({ _csrf: csrf, code, name: "Grace", password: "long enough pw" });
    assertEquals(noCookie.status, 403);
    await noCookie.body?.cancel();
    const short = await post({ _csrf: csrf, code, name: "Grace", password: "short" }, { cookie });
    assertEquals(short.status, 400);
    assertMatch(await short.text(), /password/);
    const ok = await post({ _csrf: csrf, code, name: "Grace", password: "long enough pw" }, {
      cookie,
    });
    assertEquals([ok.status, ok.headers.get("location")], [303, "/gateways"]);
    const session = ok.headers.getSetCookie().find((c) => c.startsWith("gw_session="))!;
    const gateways = await fetch(`${cloud.url}/gateways`, {
      headers: { cookie: session.split(";")[0] },
    });
    assertMatch(await gateways.text(), /Gateways of Radiology/);
    const grace = await cloud.server.services.store.identity.userByEmail("grace@example.com");
    assertEquals(
      (await cloud.server.services.store.identity.teamsOf(grace!.id)).map((t) => t.team.name),
      ["Radiology"],
      "the invited account has the inviting team only",
    );
    const again = await post({ _csrf: csrf, code, name: "Grace", password: "long enough pw" }, {
      cookie,
    });
    assertEquals(again.status, 410);
    assertMatch(await again.text(), /already used/);

    // An existing account signed in: Join, and its current team stays.
    const henry = await makeUser(cloud, "henry@example.com", "Pathology");
    const forHenry = await call(cloud, "POST", "/api/team/invitations", {
      token: ada.apiToken,
      body: { email: "henry@example.com" },
    });
    const henryUi = await uiSession(cloud, henry.user);
    const henryPath = `/invitations/accept?code=${forHenry.json.code}`;
    assertMatch((await uiRequest(cloud, henryUi, henryPath)).text, /Join Radiology<\/button>/);
    const henryJoined = await uiRequest(cloud, henryUi, "/invitations/accept", {
      code: forHenry.json.code,
    });
    assertEquals(henryJoined.status, 200);
    assertMatch(henryJoined.text, /You are now a member of Radiology/);
    assertMatch(henryJoined.text, /data-testid="current-team">Pathology</);
    // Ada's own session opening Henry's link: not hers to accept.
    const notAda = await uiRequest(cloud, ui, henryPath);
    assertEquals(notAda.status, 410, "used already");

    // Members see no invitation forms and cannot post them.
    const bob = await makeUser(cloud, "bob@example.com", "Cardiology");
    await call(cloud, "POST", "/api/team/members", {
      token: ada.apiToken,
      body: { email: "bob@example.com" },
    });
    await cloud.server.services.store.identity.switchTeam(bob.user.id, ada.team.id);
    const bobUi = await uiSession(cloud, bob.user);
    const teams = await uiRequest(cloud, bobUi, "/teams");
    assert(!teams.text.includes('action="/teams/invitations"'), "no invitation form");
    const refused = await uiRequest(cloud, bobUi, "/teams/invitations", {
      email: "x@example.com",
    });
    assertEquals(refused.status, 400);
    assertMatch(refused.text, /Only team owners manage invitations/);

    // Creating a team leaves the current one.
    const team = await uiRequest(cloud, ui, "/teams", { name: "Research" });
    assertEquals(team.status, 200);
    assertMatch(team.text, /data-testid="current-team">Radiology</);
    assertEquals(
      (await cloud.server.services.store.identity.user(ada.user.id))!.current_team_id,
      ada.team.id,
    );
    const viaApi = await call(cloud, "POST", "/api/teams", {
      token: ada.userToken,
      body: { name: "Oncology" },
    });
    assertEquals(viaApi.status, 201);
    const me = await call(cloud, "GET", "/api/me", { token: ada.userToken });
    assertEquals(me.json.user.current_team_id, ada.team.id);
  }, LIMITS);
});

Deno.test("invitations with sign-up turned off: only existing accounts accept", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const made = await call(cloud, "POST", "/api/team/invitations", {
      token: ada.apiToken,
      body: { email: "grace@example.com" },
    });
    const page = await fetch(made.json.url.replace(cloud.baseUrl, cloud.url));
    const html = await page.text();
    assertMatch(html, /Sign-up is turned off here/);
    assert(!html.includes("Create account and join"), "no sign-up form");
  }, { ...LIMITS, signup: false });
});
