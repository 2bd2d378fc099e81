/**
 * A FHIR R4 server stand-in for access-control tests: it holds several patients' resources and
 * answers whatever it is asked, with no access control of its own and the habits of real servers
 * an attacker leans on. Parameters it does not know (`_filter`, `_has`, chains) are ignored, so
 * such a search answers every resource of the type; a history takes no `patient` parameter; a
 * conditional update or delete acts on every match; `_include`/`_revinclude` add the resources
 * referred to. Versions, `ETag` and `If-Match` (412) behave as the FHIR RESTful API says, so a
 * gateway that binds a write to the version it checked can be seen doing so.
 */

/** A FHIR resource as JSON. */
export type FhirResource = Record<string, unknown> & { resourceType: string; id?: string };

/** One request the stand-in received. */
export interface FhirStandInRequest {
  method: string;
  /** Path below the server base, and the query string (`?…` or ``). */
  path: string;
  search: string;
  headers: Headers;
  body: string;
}

/** A running stand-in. */
export interface FhirStandIn {
  /** Base URL of the FHIR API (`http://127.0.0.1:<port>/fhir`). */
  url: string;
  /** Every request, in order. */
  received: FhirStandInRequest[];
  /** Every version of each resource, oldest first, by `Type/id` (null: a deletion). */
  versions: Map<string, (FhirResource | null)[]>;
  /** The current version of `Type/id`, or undefined when absent or deleted. */
  current(ref: string): FhirResource | undefined;
  stop(): Promise<void>;
}

const FHIR_JSON = { "content-type": "application/fhir+json" };
/** Search parameters the stand-in knows, and the element each reads. */
const ELEMENT_OF: Record<string, string> = {
  patient: "subject",
  subject: "subject",
  performer: "performer",
  target: "target",
};

/** Starts the stand-in on a free loopback port holding `resources` (version 1 each). */
export function startFhirStandIn(resources: FhirResource[]): FhirStandIn {
  const versions = new Map<string, (FhirResource | null)[]>();
  const received: FhirStandInRequest[] = [];
  let created = 0;
  const store = (r: FhirResource): FhirResource => {
    const ref = `${r.resourceType}/${r.id}`;
    const list = versions.get(ref) ?? [];
    const stored = { ...r, meta: { versionId: String(list.length + 1) } };
    list.push(stored);
    versions.set(ref, list);
    return stored;
  };
  for (const r of resources) store(r);
  const current = (ref: string) => versions.get(ref)?.at(-1) ?? undefined;
  const all = (type?: string) =>
    [...versions.entries()]
      .filter(([ref]) => type === undefined || ref.startsWith(`${type}/`))
      .map(([, list]) => list.at(-1))
      .filter((r): r is FhirResource => r !== null && r !== undefined);

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const path = url.pathname.replace(/^\/fhir/, "");
    const body = await req.text();
    received.push({ method: req.method, path, search: url.search, headers: req.headers, body });
    const s = path.split("/").filter(Boolean).map(decodeURIComponent);
    const params = new URLSearchParams(url.search);
    if (req.method === "POST" && s.at(-1) === "_search") {
      for (const [k, v] of new URLSearchParams(body)) params.append(k, v);
      s.pop();
    }
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
      new Response(req.method === "HEAD" ? null : JSON.stringify(value), {
        status,
        headers: { ...FHIR_JSON, ...headers },
      });
    const outcome = (status: number, text: string) =>
      json(status, {
        resourceType: "OperationOutcome",
        issue: [{ severity: "error", code: "processing", diagnostics: text }],
      });
    const etag = (r: FhirResource) => `W/"${(r.meta as { versionId: string }).versionId}"`;
    const bundle = (type: string, entries: unknown[]) =>
      json(200, { resourceType: "Bundle", type, total: entries.length, entry: entries });
    const search = (type: string | undefined, p: URLSearchParams) => {
      let matches = all(type);
      for (const [name, value] of p) {
        const element = ELEMENT_OF[name.split(":")[0]];
        const want = value.startsWith("Patient/") ? value : `Patient/${value}`;
        if (name === "_id") matches = matches.filter((r) => r.id === value);
        else if (element) matches = matches.filter((r) => refersTo(r[element], want, value));
      }
      const included: FhirResource[] = [];
      for (const inc of p.getAll("_include")) {
        const element = ELEMENT_OF[inc.split(":")[1]] ?? inc.split(":")[1];
        for (const m of matches) {
          for (const ref of references(m[element])) {
            const r = current(ref);
            if (r && !included.includes(r)) included.push(r);
          }
        }
      }
      for (const rev of p.getAll("_revinclude")) {
        const [revType, param] = rev.split(":");
        for (const r of all(revType)) {
          const refs = references(r[ELEMENT_OF[param] ?? param]);
          if (matches.some((m) => refs.includes(`${m.resourceType}/${m.id}`))) included.push(r);
        }
      }
      return [...matches, ...included];
    };

    if (s.length === 1 && s[0] === "metadata") {
      const types = new Set([...versions.keys()].map((k) => k.split("/")[0]));
      return json(200, {
        resourceType: "CapabilityStatement",
        fhirVersion: "4.0.1",
        rest: [{
          mode: "server",
          resource: [...types].map((type) => ({
            type,
            searchParam: ["_id", "patient", "subject"].map((name) => ({ name })),
          })),
        }],
      });
    }
    if (s.some((p) => p.startsWith("$"))) {
      return bundle("searchset", all().map((r) => ({ resource: r })));
    }
    if (
      req.method === "GET" || req.method === "HEAD" ||
      req.method === "POST" && path.endsWith("_search")
    ) {
      if (s.at(-1) === "_history" && s.length <= 2) {
        return bundle(
          "history",
          all(s[0] === "_history" ? undefined : s[0]).map((r) => ({ resource: r })),
        );
      }
      if (s.length === 0) {
        return bundle("searchset", search(undefined, params).map((r) => ({ resource: r })));
      }
      if (s.length === 1) {
        return bundle("searchset", search(s[0], params).map((r) => ({ resource: r })));
      }
      if (s.length === 3 && s[0] === "Patient" && s[2] !== "_history") {
        const p = new URLSearchParams(params);
        p.append("patient", s[1]);
        return bundle("searchset", search(s[2], p).map((r) => ({ resource: r })));
      }
      const list = versions.get(`${s[0]}/${s[1]}`);
      if (!list) return outcome(404, `${s[0]}/${s[1]} is not known`);
      if (s[2] === "_history" && s.length === 3) {
        return bundle(
          "history",
          [...list].reverse().map((r) => r ? { resource: r } : { request: { method: "DELETE" } }),
        );
      }
      if (s[2] === "_history" && s.length === 4) {
        const r = list[Number(s[3]) - 1];
        return r ? json(200, r, { etag: etag(r) }) : outcome(404, "no such version");
      }
      const r = list.at(-1);
      return r ? json(200, r, { etag: etag(r) }) : outcome(410, "deleted");
    }
    if (req.method === "POST" && s.length === 1) {
      const condition = req.headers.get("if-none-exist");
      if (condition) {
        const found = search(s[0], new URLSearchParams(condition));
        if (found.length) return json(200, found[0]);
      }
      const r = JSON.parse(body) as FhirResource;
      const stored = store({ ...r, id: `new-${++created}` });
      return json(201, stored, { location: `${s[0]}/${stored.id}/_history/1`, etag: etag(stored) });
    }
    if (req.method === "PUT" || req.method === "DELETE" || req.method === "PATCH") {
      const targets = s.length === 1
        ? search(s[0], params).map((r) => `${r.resourceType}/${r.id}`)
        : [`${s[0]}/${s[1]}`];
      const ifMatch = req.headers.get("if-match");
      for (const ref of targets) {
        const now = current(ref);
        if (ifMatch && now && ifMatch !== etag(now)) return outcome(412, `${ref} has changed`);
      }
      let last: FhirResource | undefined;
      for (const ref of targets) {
        if (req.method === "DELETE") versions.get(ref)?.push(null);
        else if (req.method === "PUT") {
          last = store({ ...(JSON.parse(body) as FhirResource), id: ref.split("/")[1] });
        }
      }
      if (req.method === "DELETE") return new Response(null, { status: 204 });
      return last ? json(200, last, { etag: etag(last) }) : outcome(200, "patched");
    }
    return outcome(400, `${req.method} ${path} is not supported here`);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/fhir`,
    received,
    versions,
    current,
    stop: () => server.shutdown(),
  };
}

/** The references (`Type/id`) of a Reference or a list of them. */
function references(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list
    .map((v) => (v as { reference?: unknown } | undefined)?.reference)
    .filter((r): r is string => typeof r === "string");
}

/** True when a Reference (or list) names `ref`, or a bare `id` of any type (as servers do). */
function refersTo(value: unknown, ref: string, id: string): boolean {
  return references(value).some((r) => r === ref || r.endsWith(`/${id}`));
}
