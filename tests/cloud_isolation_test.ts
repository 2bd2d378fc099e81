/**
 * The team isolation matrix: team B calls every route of the API with team A's ids. Reading,
 * changing or deleting A's records answers 404, creating B records that reference A's records is
 * refused, lists never show A's records, and not one KV entry of team A changes. Then shares:
 * they grant exactly what they say, in the API and in the web UI (read-only pages, owners named,
 * nothing else of the owner shown). Invitations belong to their team like everything else. A route
 * added later without a case here fails this test.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  approveMcpClient,
  call,
  createExamples,
  makeUser,
  type TestCloud,
  uiRequest,
  uiSession,
  withCloud,
} from "./cloud_harness.ts";
import { UPDATE_EXAMPLES } from "../cloud/api/mod.ts";
import { K, RESOURCE_KINDS, type ResourceKind } from "../cloud/store/mod.ts";
import { decodeTokenClaims } from "../shared/tokens.ts";

const LIMITS = { rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never };

/** Every KV entry of a team (and its global records), with versionstamps. */
async function snapshot(cloud: TestCloud, teamId: string, userId: string): Promise<string> {
  const kv = cloud.server.services.store.kv;
  const rows: unknown[] = [];
  for await (const e of kv.list({ prefix: K.teamPrefix(teamId) })) {
    rows.push([e.key, e.value, e.versionstamp]);
  }
  for (const key of [K.team(teamId), K.user(userId)]) {
    const e = await kv.get(key);
    rows.push([e.key, e.value, e.versionstamp]);
  }
  return JSON.stringify(rows, (_k, v) => typeof v === "bigint" ? v.toString() : v);
}

function mentions(body: string, ids: string[]): string[] {
  return ids.filter((id) => body.includes(id));
}

Deno.test("team isolation: every route answers 404 for another team's records, which stay unchanged", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const c = await makeUser(cloud, "carol@example.com", "C");
    const recs = await createExamples(cloud, a.apiToken);
    const aGateway = recs.gateways;
    const aMachine = (await call(cloud, "POST", "/api/gateway/authorize", {
      token: a.apiToken,
      body: { gateway_code: aGateway.code },
    })).json;
    const aJti = decodeTokenClaims(aMachine.machine_token)!.jti!;
    const aTokenId =
      (await call(cloud, "GET", "/api/tokens", { token: a.userToken })).json.items[0].id;
    const aShare = (await call(cloud, "POST", "/api/shares", {
      token: a.apiToken,
      body: {
        resource_kind: "transforms",
        resource_id: recs.transforms.id,
        team_id: c.team.id,
        access: "write",
      },
    })).json;
    await call(cloud, "PUT", "/api/gateway/config/local", {
      token: aMachine.machine_token,
      body: "# a's config\n",
      headers: { "content-type": "text/plain" },
    });
    // A pending invitation of A, to an address without an account.
    const aInvitation = (await call(cloud, "POST", "/api/team/invitations", {
      token: a.apiToken,
      body: { email: "newcomer@example.com" },
    })).json;
    // B has its own gateway and machine token.
    const bMachine = (await call(cloud, "POST", "/api/gateway/authorize", {
      token: b.apiToken,
      body: { gateway_code: "b-gw" },
    })).json;
    const aIds = [
      a.team.id,
      ...RESOURCE_KINDS.map((k) => recs[k].id as string),
      aJti,
      aTokenId,
      aShare.id,
      aInvitation.id,
    ];
    const before = await snapshot(cloud, a.team.id, a.user.id);

    const registry = cloud.server.registry;
    const covered = new Set<string>();
    const kindOf = (path: string) => path.split("/")[2] as ResourceKind;
    const paramValue = (path: string, name: string): string => {
      if (name === "jti") return aJti;
      if (name === "userId") return a.user.id;
      if (path.startsWith("/api/tokens/")) return aTokenId;
      if (path.startsWith("/api/shares/")) return aShare.id;
      if (path.startsWith("/api/team/invitations/")) return aInvitation.id;
      if (path.startsWith("/api/gateway/transforms/")) return recs.transforms.id;
      return recs[kindOf(path)].id;
    };
    // Routes without ids that write: what B sends, and what it must get.
    const writes: Record<string, { token: string; body?: unknown; status: number; code?: string }> =
      {
        "put /api/me/current-team": {
          token: b.userToken,
          body: { team_id: a.team.id },
          status: 404,
        },
        "post /api/teams": { token: b.userToken, body: { name: "B2" }, status: 201 },
        "post /api/team/members": {
          token: b.apiToken,
          body: { email: "carol@example.com" },
          status: 200,
        },
        "post /api/tokens": { token: b.userToken, body: { name: "b" }, status: 201 },
        "post /api/team/invitations": {
          token: b.apiToken,
          body: { email: "dave@example.com" },
          status: 201,
        },
        // A's invitation code in B's hands: refused, B is not the invited address.
        "post /api/invitations/accept": {
          token: b.userToken,
          body: { code: aInvitation.code },
          status: 403,
          code: "forbidden",
        },
        "post /api/gateway/authorize": {
          token: b.apiToken,
          body: { gateway_code: aGateway.code },
          status: 201,
        },
        "post /api/transforms/preview": {
          token: b.apiToken,
          body: { spec: [{ operation: "shift", spec: { a: "b" } }], input: { a: 1 } },
          status: 200,
        },
        "post /api/shares": {
          token: b.apiToken,
          body: {
            resource_kind: "pipelines",
            resource_id: recs.pipelines.id,
            team_id: b.team.id,
            access: "write",
          },
          status: 404,
        },
        "post /api/gateways": { token: b.apiToken, body: { code: "b-second" }, status: 201 },
        "post /api/services": {
          token: b.apiToken,
          body: { name: recs.services.name, endpoint_types: ["http"] },
          status: 201,
        },
        "post /api/networks": {
          token: b.apiToken,
          body: { name: recs.networks.name },
          status: 201,
        },
        "post /api/transforms": {
          token: b.apiToken,
          body: { name: recs.transforms.name, spec: [{ operation: "shift", spec: { x: "y" } }] },
          status: 201,
        },
        "post /api/endpoints": {
          token: b.apiToken,
          body: {
            name: "e",
            service_id: recs.services.id,
            type: "fhir",
            options: { path_prefix: "/x" },
          },
          status: 422,
          code: "reference_missing",
        },
        "post /api/backends": {
          token: b.apiToken,
          body: { name: "b", service_id: recs.services.id, type: "echo" },
          status: 422,
          code: "reference_missing",
        },
        "post /api/middleware": {
          token: b.apiToken,
          body: { name: "m", type: "transform", transform_id: recs.transforms.id },
          status: 422,
          code: "reference_missing",
        },
        "post /api/pipelines": {
          token: b.apiToken,
          body: {
            name: "p",
            gateway_id: recs.gateways.id,
            endpoint_ids: [recs.endpoints.id],
            backend_ids: [recs.backends.id],
          },
          status: 422,
          code: "reference_missing",
        },
      };
    const machineRoutes: Record<string, unknown> = {
      "post /api/gateway/config/apply": { version: 1, status: "applied" },
      "post /api/gateway/status": { health: "healthy", software_version: "1", uptime_secs: 1 },
      "put /api/gateway/config/local": "# b\n",
    };

    for (const route of registry.routes) {
      const key = `${route.method} ${route.path}`;
      if (route.auth.includes("none")) {
        covered.add(key); // public routes: discovery, health, device login; no team data
        continue;
      }
      const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
      if (route.auth.includes("machine")) {
        const path = route.path.replace(/:([A-Za-z]+)/g, (_, n) => paramValue(route.path, n));
        const body = machineRoutes[key];
        if (
          body === undefined && route.method !== "get" && route.path !== "/api/gateway/token/renew"
        ) continue;
        await call(cloud, "GET", "/api/gateway/config", { token: bMachine.machine_token }); // version 1 exists for B
        const res = await call(cloud, route.method.toUpperCase(), path, {
          token: bMachine.machine_token,
          body,
          headers: typeof body === "string" ? { "content-type": "text/plain" } : {},
        });
        if (params.length) assertEquals(res.status, 404, `${key} as B's gateway: ${res.text}`);
        else {
          assert(res.status === 200, `${key}: ${res.status} ${res.text}`);
          assertEquals(mentions(res.text, aIds), [], `${key} leaks team A ids`);
          if (res.json?.gateway_id) assertEquals(res.json.gateway_id, bMachine.gateway_id);
        }
        covered.add(key);
        continue;
      }
      for (const token of [b.apiToken, b.userToken]) {
        if (params.length) {
          const path = route.path.replace(/:([A-Za-z]+)/g, (_, n) => paramValue(route.path, n));
          const kind = kindOf(route.path);
          const body = route.method === "patch" ? UPDATE_EXAMPLES[kind] : undefined;
          const res = await call(cloud, route.method.toUpperCase(), path, { token, body });
          assertEquals(res.status, 404, `${key} as team B: ${res.status} ${res.text}`);
          assertEquals(res.json.error.code, "not_found");
        } else if (route.method === "get") {
          const res = await call(cloud, "GET", route.path, { token });
          assertEquals(res.status, 200, `${key}: ${res.text}`);
          assertEquals(mentions(res.text, aIds), [], `${key} leaks team A ids`);
        } else {
          const w = writes[key];
          assert(w, `no isolation case for ${key}: add one`);
          if (token !== w.token) continue;
          const res = await call(cloud, route.method.toUpperCase(), route.path, {
            token,
            body: w.body,
          });
          assertEquals(res.status, w.status, `${key}: ${res.text}`);
          if (w.code) assertEquals(res.json.error.code, w.code);
          if (route.path === "/api/gateway/authorize") assert(res.json.gateway_id !== aGateway.id);
        }
      }
      covered.add(key);
    }
    const all = registry.routes.map((r) => `${r.method} ${r.path}`);
    assertEquals(all.filter((r) => !covered.has(r)), [], "every route is in the matrix");
    assertEquals(
      await snapshot(cloud, a.team.id, a.user.id),
      before,
      "team A's KV entries are unchanged",
    );
  }, LIMITS);
});

Deno.test("team isolation: shares grant exactly read, or read and write, and are revocable", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const recs = await createExamples(cloud, a.apiToken);
    const bSvc = (await call(cloud, "POST", "/api/services", {
      token: b.apiToken,
      body: { name: "s", endpoint_types: ["http"] },
    })).json;
    const bEp = (await call(cloud, "POST", "/api/endpoints", {
      token: b.apiToken,
      body: { name: "e", service_id: bSvc.id, type: "http", options: { path_prefix: "/b" } },
    })).json;
    const share = async (kind: string, id: string, access: string) =>
      await call(cloud, "POST", "/api/shares", {
        token: a.apiToken,
        body: { resource_kind: kind, resource_id: id, team_id: b.team.id, access },
      });
    const readShare = await share("transforms", recs.transforms.id, "read");
    assertEquals(readShare.status, 201);
    const writeShare = (await share("pipelines", recs.pipelines.id, "write")).json;
    assertEquals((await share("gateways", recs.gateways.id, "read")).status, 201);
    assertEquals(
      (await share("transforms", recs.transforms.id, "write")).status,
      409,
      "one share per record and team",
    );
    assertEquals((await share("transforms", crypto.randomUUID(), "read")).status, 404);
    const selfShare = await call(cloud, "POST", "/api/shares", {
      token: a.apiToken,
      body: {
        resource_kind: "networks",
        resource_id: recs.networks.id,
        team_id: a.team.id,
        access: "read",
      },
    });
    assertEquals(selfShare.status, 404);

    const incoming =
      (await call(cloud, "GET", "/api/shares/incoming", { token: b.apiToken })).json.items;
    assertEquals(
      incoming.map((s: { resource_kind: string; access: string }) =>
        `${s.resource_kind}:${s.access}`
      ).sort(),
      ["gateways:read", "pipelines:write", "transforms:read"],
    );

    // Read share: GET only.
    const t = await call(cloud, "GET", `/api/transforms/${recs.transforms.id}`, {
      token: b.apiToken,
    });
    assertEquals([t.status, t.json.access, t.json.spec], [200, "read", recs.transforms.spec]);
    const tPatch = await call(cloud, "PATCH", `/api/transforms/${recs.transforms.id}`, {
      token: b.apiToken,
      body: { description: "mine now" },
    });
    assertEquals([tPatch.status, tPatch.json.error.code], [403, "forbidden"]);
    assertEquals(
      (await call(cloud, "DELETE", `/api/transforms/${recs.transforms.id}`, { token: b.apiToken }))
        .status,
      403,
    );
    assertEquals(
      (await call(cloud, "GET", `/api/transforms/${recs.transforms.id}`, { token: a.apiToken }))
        .json.description,
      recs.transforms.description,
    );
    // A shared gateway is readable, but its configuration, reports and tokens are not.
    const gw = await call(cloud, "GET", `/api/gateways/${recs.gateways.id}`, { token: b.apiToken });
    assertEquals([gw.status, gw.json.access, gw.json.code], [200, "read", "edge-berlin-1"]);
    for (const sub of ["config", "reported-config", "tokens"]) {
      assertEquals(
        (await call(cloud, "GET", `/api/gateways/${recs.gateways.id}/${sub}`, {
          token: b.apiToken,
        })).status,
        404,
        sub,
      );
    }

    // Write share: GET and PATCH, references still resolved in the owner's team, never DELETE.
    const p = await call(cloud, "PATCH", `/api/pipelines/${recs.pipelines.id}`, {
      token: b.apiToken,
      body: { description: "edited by B" },
    });
    assertEquals([p.status, p.json.access, p.json.description], [200, "write", "edited by B"]);
    assertEquals(
      (await call(cloud, "GET", `/api/pipelines/${recs.pipelines.id}`, { token: a.apiToken })).json
        .description,
      "edited by B",
    );
    const foreignRef = await call(cloud, "PATCH", `/api/pipelines/${recs.pipelines.id}`, {
      token: b.apiToken,
      body: { endpoint_ids: [bEp.id] },
    });
    assertEquals([foreignRef.status, foreignRef.json.error.code], [422, "reference_missing"]);
    assertEquals(
      (await call(cloud, "DELETE", `/api/pipelines/${recs.pipelines.id}`, { token: b.apiToken }))
        .status,
      403,
    );
    assertEquals(
      (await call(cloud, "GET", `/api/pipelines/${recs.pipelines.id}/toml`, { token: b.apiToken }))
        .status,
      404,
    );
    const audit =
      (await call(cloud, "GET", "/api/audit?action=pipeline.updated", { token: a.apiToken })).json
        .items;
    assertEquals(audit[0].actor.label, "test (bob@example.com)", "A's audit log names B's change");

    // Not shared: still 404. Lists of B never include A's records.
    for (const kind of ["endpoints", "backends", "middleware", "services", "networks"]) {
      assertEquals(
        (await call(cloud, "GET", `/api/${kind}/${recs[kind as ResourceKind].id}`, {
          token: b.apiToken,
        })).status,
        404,
        kind,
      );
    }
    const bPipelines =
      (await call(cloud, "GET", "/api/pipelines", { token: b.apiToken })).json.items;
    assertEquals(bPipelines, []);

    // B cannot revoke A's share; A can, and access ends at once.
    assertEquals(
      (await call(cloud, "DELETE", `/api/shares/${writeShare.id}`, { token: b.apiToken })).status,
      404,
    );
    assertEquals(
      (await call(cloud, "DELETE", `/api/shares/${writeShare.id}`, { token: a.apiToken })).status,
      204,
    );
    assertEquals(
      (await call(cloud, "GET", `/api/pipelines/${recs.pipelines.id}`, { token: b.apiToken }))
        .status,
      404,
    );
    assertEquals(
      (await call(cloud, "PATCH", `/api/pipelines/${recs.pipelines.id}`, {
        token: b.apiToken,
        body: { description: "again" },
      })).status,
      404,
    );
    // Deleting a shared record removes its shares.
    const delT = await call(cloud, "DELETE", `/api/middleware/${recs.middleware.id}`, {
      token: a.apiToken,
    });
    assertEquals(delT.status, 409, "still used by the pipeline");
    await call(cloud, "PATCH", `/api/pipelines/${recs.pipelines.id}`, {
      token: a.apiToken,
      body: { middleware_ids: [] },
    });
    assertEquals(
      (await call(cloud, "DELETE", `/api/middleware/${recs.middleware.id}`, { token: a.apiToken }))
        .status,
      204,
    );
    assertEquals(
      (await call(cloud, "DELETE", `/api/transforms/${recs.transforms.id}`, { token: a.apiToken }))
        .status,
      204,
    );
    const left =
      (await call(cloud, "GET", "/api/shares/incoming", { token: b.apiToken })).json.items;
    assertEquals(left.map((s: { resource_kind: string }) => s.resource_kind), ["gateways"]);
    assertEquals(
      (await call(cloud, "GET", "/api/shares", { token: a.apiToken })).json.items.length,
      1,
    );
  }, LIMITS);
});

Deno.test("team isolation: every web UI page and form refuses another team's records", async () => {
  await withCloud(async (cloud) => {
    const s = cloud.server.services;
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const recs = await createExamples(cloud, a.apiToken);
    const aMachine = (await call(cloud, "POST", "/api/gateway/authorize", {
      token: a.apiToken,
      body: { gateway_code: recs.gateways.code },
    })).json;
    const aJti = decodeTokenClaims(aMachine.machine_token)!.jti!;
    const aTokenId =
      (await call(cloud, "GET", "/api/tokens", { token: a.userToken })).json.items[0].id;
    const aGrantId = await approveMcpClient(cloud, a.user, a.team);
    const aInvitation = (await call(cloud, "POST", "/api/team/invitations", {
      token: a.apiToken,
      body: { email: "newcomer@example.com" },
    })).json;
    const aIds = [
      a.team.id,
      ...RESOURCE_KINDS.map((k) => recs[k].id as string),
      aJti,
      aTokenId,
      aGrantId,
      aInvitation.id,
    ];
    const { id: sessionId, session } = await s.store.sessions.create(b.user.id, 3600);
    const cookie = `gw_session=${sessionId}`;
    const device = await (await fetch(`${cloud.url}/oauth/device/code`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "client_id=gwcli",
    })).json();
    const before = await snapshot(cloud, a.team.id, a.user.id);

    const page = async (method: string, path: string, form?: Record<string, string>) => {
      const res = await fetch(`${cloud.url}${path}`, {
        method,
        redirect: "manual",
        headers: {
          cookie,
          ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        },
        body: form ? new URLSearchParams({ _csrf: session.csrf, ...form }) : undefined,
      });
      return { status: res.status, text: await res.text() };
    };
    // What B posts to each form, and the status it must get.
    const forms: Record<string, { form: Record<string, string>; status: number; text?: RegExp }> = {
      "/sign-in": {
        form: { email: "bob@example.com", password: "wrong" },
        status: 400,
        text: /form expired/,
      },
      "/sign-up": {
        form: { email: "ada@example.com", name: "x", password: "long enough pw" },
        status: 400,
        text: /form expired/,
      },
      "/sign-out": { form: {}, status: 303 },
      "/device": {
        form: { user_code: device.user_code },
        status: 200,
        text: /in team <strong[^>]*>B</,
      },
      "/device/approve": { form: { user_code: device.user_code }, status: 200 },
      "/device/deny": {
        form: { user_code: device.user_code },
        status: 400,
        text: /no longer valid/,
      },
      "/teams/switch": {
        form: { team_id: a.team.id, back: "/teams" },
        status: 400,
        text: /not a member of that team/,
      },
      "/teams": { form: { name: "B2" }, status: 200 },
      "/teams/members": {
        form: { email: "carol@nowhere.example" },
        status: 400,
        text: /No account has this email/,
      },
      "/teams/members/remove": {
        form: { user_id: a.user.id },
        status: 400,
        text: /member not found/,
      },
      "/teams/invitations": { form: { email: "dave@example.com" }, status: 200 },
      "/teams/invitations/:id/revoke": {
        form: {},
        status: 400,
        text: /No such invitation in this team/,
      },
      "/invitations/accept": {
        form: { code: aInvitation.code },
        status: 403,
        text: /invitation is for newcomer@example\.com/,
      },
      "/tokens": { form: { name: "b-token", expires_in_days: "30" }, status: 200 },
      "/tokens/:id/revoke": { form: {}, status: 400, text: /No such token in this team/ },
      "/tokens/mcp/:id/revoke": {
        form: {},
        status: 400,
        text: /No such MCP client approval in this team/,
      },
      "/gateways/:id/tokens/:jti/revoke": { form: {}, status: 404 },
    };
    // The builder's forms: B's own drafts and records, and A's records by id (all 404).
    for (const kind of ["services", "endpoints", "backends", "middleware", "networks"]) {
      forms[`/${kind}/new`] = { form: {}, status: 422 };
    }
    forms["/gateways/new"] = { form: { code: "b-gateway" }, status: 303 };
    forms["/transforms/new"] = { form: { name: "t", spec: "[]" }, status: 200 };
    forms["/transforms/preview"] = { form: { spec: "[]", sample: "{}" }, status: 200 };
    forms["/pipelines/new"] = { form: { name: "p" }, status: 200 };
    for (const kind of RESOURCE_KINDS) {
      for (const action of ["edit", "delete", "share"]) {
        forms[`/${kind}/:id/${action}`] = { form: { team_id: b.team.id }, status: 404 };
      }
      forms[`/${kind}/:id/shares/:shareId/revoke`] = { form: {}, status: 404 };
    }
    forms["/gateways/:id/versions/:version/rollback"] = { form: {}, status: 404 };
    forms["/gateways/:id/versions/resume"] = { form: {}, status: 404 };
    const idFor = (path: string): string => {
      if (path.startsWith("/teams/invitations")) return aInvitation.id;
      if (path.startsWith("/tokens/mcp")) return aGrantId;
      if (path.startsWith("/tokens")) return aTokenId;
      const kind = path.split("/")[1] as ResourceKind;
      return (recs[kind]?.id as string | undefined) ?? recs.pipelines.id;
    };
    const fill = (path: string) =>
      path.replace(":jti", aJti).replace(":shareId", crypto.randomUUID()).replace(
        ":version",
        "1",
      ).replace(":id", idFor(path));
    const uiRoutes = cloud.server.app.routes.filter((r) =>
      r.method !== "ALL" &&
      !["/api/", "/oauth/", "/.well-known/", "/healthz", "/readyz"].some((p) =>
        r.path.startsWith(p)
      )
    );
    assert(uiRoutes.length >= 20, `found ${uiRoutes.length} UI routes`);
    // Sign-out last: it ends B's session.
    uiRoutes.sort((x, y) => Number(x.path === "/sign-out") - Number(y.path === "/sign-out"));
    for (const r of uiRoutes) {
      if (r.method === "GET") {
        const res = await page("GET", fill(r.path));
        if (r.path.includes(":")) assertEquals(res.status, 404, `GET ${r.path}`);
        else assert([200, 302, 404].includes(res.status), `GET ${r.path}: ${res.status}`);
        assertEquals(mentions(res.text, aIds), [], `GET ${r.path} shows team A ids`);
        continue;
      }
      const c = forms[r.path];
      assert(c, `no isolation case for the form ${r.path}: add one`);
      const res = await page("POST", fill(r.path), c.form);
      assertEquals(res.status, c.status, `POST ${r.path}: ${res.text.slice(0, 300)}`);
      if (c.text) assert(c.text.test(res.text), `POST ${r.path} answer: ${res.text.slice(0, 500)}`);
      assertEquals(mentions(res.text, aIds), [], `POST ${r.path} shows team A ids`);
    }
    assertEquals(
      await snapshot(cloud, a.team.id, a.user.id),
      before,
      "team A's KV entries are unchanged",
    );
  }, LIMITS);
});

/** The `<main>` of a page (the header's team switcher and sign-out are forms of every page). */
function mainOf(html: string): string {
  return /<main[^>]*>([\s\S]*)<\/main>/.exec(html)?.[1] ?? "";
}

Deno.test("team isolation: the web UI shows what another team shares, read-only, and nothing else of it", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const recs = await createExamples(cloud, a.apiToken);
    const share = async (kind: ResourceKind, access: "read" | "write") => {
      const res = await call(cloud, "POST", "/api/shares", {
        token: a.apiToken,
        body: { resource_kind: kind, resource_id: recs[kind].id, team_id: b.team.id, access },
      });
      assertEquals(res.status, 201, res.text);
    };
    await share("pipelines", "read");
    await share("transforms", "read");
    await share("gateways", "read");
    await share("endpoints", "write");
    const sharedIds = ["pipelines", "transforms", "gateways", "endpoints"].map((k) =>
      recs[k as ResourceKind].id as string
    );
    // Everything of A that was not shared: its team, its other records.
    const hidden = [
      a.team.id,
      ...RESOURCE_KINDS.map((k) => recs[k].id as string).filter((id) => !sharedIds.includes(id)),
    ];
    const ui = await uiSession(cloud, b.user);
    const before = await snapshot(cloud, a.team.id, a.user.id);

    // Lists: each shared record under B's own, with A's name.
    for (const kind of ["pipelines", "transforms", "gateways", "endpoints"] as const) {
      const list = await uiRequest(cloud, ui, `/${kind}`);
      assertEquals(list.status, 200, kind);
      const name = kind === "gateways" ? recs.gateways.code : recs[kind].name;
      assert(list.text.includes(`>${name}</a>`), `${kind}: lists ${name}`);
      assertMatch(list.text, /data-testid="owner-team">A<\/span>/, `${kind}: owner named`);
      assertEquals(mentions(list.text, hidden), [], `${kind} list shows A's other ids`);
      const only = await uiRequest(cloud, ui, `/${kind}?shared=exclude`);
      assert(!only.text.includes(`>${name}</a>`), `${kind}: "this team only" leaves it out`);
    }
    // Read shares: pages without a single control to type into or press.
    for (
      const path of [
        `/pipelines/${recs.pipelines.id}`,
        `/transforms/${recs.transforms.id}/edit`,
        `/gateways/${recs.gateways.id}`,
        `/gateways/${recs.gateways.id}/edit`,
      ]
    ) {
      const res = await uiRequest(cloud, ui, path);
      assertEquals(res.status, 200, path);
      const main = mainOf(res.text);
      assertMatch(main, /read-only/, path);
      assertMatch(main, /data-testid="owner-team">A</, path);
      for (const control of ["<input", "<textarea", "<select", "<button", "<form"]) {
        assert(!main.includes(control), `${path} has ${control}`);
      }
      assertEquals(mentions(res.text, hidden), [], `${path} shows A's other ids`);
    }
    // The pipeline names what B may see (the shared endpoint), and counts the rest.
    const pipeline = await uiRequest(cloud, ui, `/pipelines/${recs.pipelines.id}`);
    assert(pipeline.text.includes(recs.endpoints.name), "the shared endpoint is named");
    assert(!pipeline.text.includes(recs.backends.name), "an unshared backend is not named");
    assertMatch(pipeline.text, /1 not shared with your team/);
    // A write share: the form, with whose record it is, and neither sharing nor deleting.
    const endpoint = await uiRequest(cloud, ui, `/endpoints/${recs.endpoints.id}/edit`);
    assertEquals(endpoint.status, 200);
    assertMatch(endpoint.text, /read and write/);
    assert(!endpoint.text.includes("Delete this"), "no delete link");
    assert(!endpoint.text.includes(`/endpoints/${recs.endpoints.id}/share"`), "no share form");
    // Pages of the owner only: versions, the builder.
    for (
      const path of [
        `/gateways/${recs.gateways.id}/versions`,
        `/pipelines/${recs.pipelines.id}/edit`,
      ]
    ) {
      assertEquals((await uiRequest(cloud, ui, path)).status, 404, path);
    }

    // Forged posts on the read shares: refused, nothing of A changes.
    const forged: [string, Record<string, string>, number][] = [
      [`/transforms/${recs.transforms.id}/edit`, { name: "mine", spec: "[]", op: "save" }, 403],
      [`/transforms/${recs.transforms.id}/edit`, { spec: "[]", op: "preview" }, 403],
      [`/gateways/${recs.gateways.id}/edit`, { name: "mine" }, 403],
      [`/pipelines/${recs.pipelines.id}/edit`, { name: "mine", op: "publish" }, 404],
      [`/pipelines/${recs.pipelines.id}/delete`, {}, 404],
      [`/transforms/${recs.transforms.id}/delete`, {}, 404],
      [`/transforms/${recs.transforms.id}/share`, { team_id: b.team.id }, 404],
    ];
    for (const [path, form, status] of forged) {
      const res = await uiRequest(cloud, ui, path, form);
      assertEquals(res.status, status, `POST ${path}: ${res.text.slice(0, 200)}`);
      assertEquals(mentions(res.text, hidden), [], `POST ${path} shows A's other ids`);
    }
    for (const kind of ["pipelines", "transforms", "gateways"] as const) {
      const res = await call(cloud, "PATCH", `/api/${kind}/${recs[kind].id}`, {
        token: b.apiToken,
        body: { description: "mine" },
      });
      assertEquals([res.status, res.json.error.code], [403, "forbidden"], kind);
    }
    assertEquals(
      await snapshot(cloud, a.team.id, a.user.id),
      before,
      "team A's KV entries are unchanged",
    );

    // The write share through its form: A's references stay chosen (unnamed), the change lands.
    assert(
      endpoint.text.includes(`<option value="${recs.services.id}" selected="">`),
      "the endpoint's service stays chosen",
    );
    assertMatch(endpoint.text, /unchanged \(not shared with your team\)/);
    const edited = await uiRequest(cloud, ui, `/endpoints/${recs.endpoints.id}/edit`, {
      name: recs.endpoints.name,
      description: "edited by B",
      service_id: recs.services.id,
      type: recs.endpoints.type,
      options: JSON.stringify(recs.endpoints.options),
      network_ids: recs.endpoints.network_ids,
    });
    assertEquals(edited.status, 303, edited.text.slice(0, 300));
    const afterEdit = await call(cloud, "GET", `/api/endpoints/${recs.endpoints.id}`, {
      token: a.apiToken,
    });
    assertEquals(
      [afterEdit.json.description, afterEdit.json.service_id],
      ["edited by B", recs.services.id],
    );

    // The API lists the same: B's own, then A's shared, each with its team.
    const listed = await call(cloud, "GET", "/api/pipelines?shared=include", {
      token: b.apiToken,
    });
    assertEquals(
      listed.json.items.map((
        x: { id: string; access: string; team_name: string },
      ) => [x.id, x.access, x.team_name]),
      [[recs.pipelines.id, "read", "A"]],
    );
    const incoming = await call(cloud, "GET", "/api/shares/incoming", { token: b.apiToken });
    assertEquals(
      new Set(incoming.json.items.map((x: { team_name: string }) => x.team_name)),
      new Set(["A"]),
    );
    // Once the share ends, the record is gone from B's pages.
    const shares = (await call(cloud, "GET", "/api/shares", { token: a.apiToken })).json.items;
    const pipelineShare = shares.find((x: { resource_id: string }) =>
      x.resource_id === recs.pipelines.id
    );
    assertEquals(pipelineShare.target_team_name, "B");
    await call(cloud, "DELETE", `/api/shares/${pipelineShare.id}`, { token: a.apiToken });
    assertEquals((await uiRequest(cloud, ui, `/pipelines/${recs.pipelines.id}`)).status, 404);
    assert(!(await uiRequest(cloud, ui, "/pipelines")).text.includes(recs.pipelines.name));
  }, LIMITS);
});
