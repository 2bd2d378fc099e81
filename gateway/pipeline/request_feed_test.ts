import assert from "node:assert/strict";
import { RequestFeed } from "./request_feed.ts";

Deno.test("request feed: watched only while someone listens; watchers hear the changes", () => {
  const feed = new RequestFeed();
  const changes: boolean[] = [];
  feed.onWatched((on) => changes.push(on));
  assert.equal(feed.watched, false);
  const seen: string[] = [];
  const stop1 = feed.subscribe((e) => seen.push(`1:${e.request_id}`));
  const stop2 = feed.subscribe((e) => seen.push(`2:${e.request_id}`));
  feed.finished("r1", "p", 200, 1.5, undefined, {
    method: "GET",
    path: "/x",
    query: "?secret=1",
    body: "never",
  });
  stop1();
  stop1();
  assert.equal(feed.watched, true);
  stop2();
  assert.equal(feed.watched, false);
  assert.deepEqual(seen, ["1:r1", "2:r1"]);
  assert.deepEqual(changes, [true, false]);
});

Deno.test("request feed: only access-log fields travel, a failing listener is its own", () => {
  const feed = new RequestFeed();
  const events: unknown[] = [];
  feed.subscribe(() => {
    throw new Error("a broken listener");
  });
  feed.subscribe((e) => events.push(e.fields));
  feed.finished("r1", "p", 502, 3, "backend_unavailable", {
    method: "POST",
    path: "/orders/{…}",
    query: "?patient=1",
    body: "content",
    status: 502,
  });
  assert.deepEqual(events, [{ method: "POST", path: "/orders/{…}" }]);
});

Deno.test("request feed: a worker's feed forwards in batches while the main thread watches", async () => {
  const feed = new RequestFeed();
  const batches: number[] = [];
  feed.forwardTo((events) => batches.push(events.length));
  feed.finished("r0", "p", 200, 1, undefined, {});
  await Promise.resolve();
  assert.deepEqual(batches, [], "nobody watches: nothing is sent");
  feed.remoteWatched = true;
  assert.equal(feed.watched, true);
  for (let i = 0; i < 3; i++) feed.finished(`r${i}`, "p", 200, 1, undefined, {});
  await Promise.resolve();
  assert.deepEqual(batches, [3], "one message per turn of the event loop");
});

Deno.test("request feed: last errors per pipeline, newest wins across isolates", () => {
  const worker = new RequestFeed();
  worker.forwardTo(() => {});
  const main = new RequestFeed();
  const error = (pipeline: string, at: string, code: string) => ({
    pipeline,
    at,
    status: 502,
    code,
    message: "m",
    request_id: "r",
  });
  worker.failed(error("p", "2026-01-01T00:00:02.000Z", "backend_timeout"));
  main.failed(error("p", "2026-01-01T00:00:01.000Z", "backend_unavailable"));
  main.addErrors(worker.takeUnsentErrors());
  assert.deepEqual(worker.takeUnsentErrors(), []);
  assert.equal(main.lastErrors()[0].code, "backend_timeout");
  main.addErrors([error("p", "2026-01-01T00:00:00.000Z", "older")]);
  assert.equal(main.lastErrors()[0].code, "backend_timeout");
});
