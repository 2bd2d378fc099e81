/** The state directory's lock: one holder at a time, the holder's pid named, gone with release. */
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { loadConfigText } from "../config/mod.ts";
import {
  needsStateLock,
  STATE_LOCK_FILE,
  StateDirLocked,
  stateDirOf,
  StateLock,
} from "./state_lock.ts";

Deno.test("state lock: a second holder is refused at once, naming the pid; released, it is free", async () => {
  const dir = `${await Deno.makeTempDir({ prefix: "state-lock-" })}/state`;
  try {
    const held = await StateLock.acquire(dir);
    assertEquals(held.dir, dir);
    assertEquals((await Deno.readTextFile(`${dir}/${STATE_LOCK_FILE}`)).trim(), String(Deno.pid));
    // A lock is per open file: a second acquire in this same process is refused as well.
    const refused = await assertRejects(() => StateLock.acquire(dir), /in use by another gateway/);
    assert(refused instanceof StateDirLocked);
    assertEquals([refused.dir, refused.pid], [dir, Deno.pid]);
    assert(refused.message.includes(`${dir} is in use by another gateway (pid ${Deno.pid})`));
    held.release();
    const again = await StateLock.acquire(dir);
    again.release();
  } finally {
    await Deno.remove(dir.slice(0, -"/state".length), { recursive: true });
  }
});

Deno.test("state lock: needed by a gateway that keeps state, not by one that shares none", async () => {
  const base = "[management]\nenabled = false\n";
  const needs = async (toml: string, env: Record<string, string> = {}) => {
    const { config, problems } = await loadConfigText(base + toml, "gateway.toml", {
      baseDir: "/srv/gw",
    });
    assertEquals(problems, []);
    return needsStateLock(config!, (name) => env[name]);
  };
  assertEquals(await needs(""), false);
  assertEquals(await needs('[audit]\nfile = "audit.jsonl"\n'), true);
  assertEquals(
    await needs(
      '[backends.b]\nservice = "http"\n[backends.b.options]\nbase_url = "http://127.0.0.1:1"\n' +
        "[backends.b.queue]\n" +
        '[endpoints.e]\nservice = "http"\n[endpoints.e.options]\npath_prefix = "/e"\n' +
        '[pipelines.p]\nendpoints = ["e"]\nbackends = ["b"]\n',
    ),
    true,
  );
  assertEquals(await needs('[cloud]\nenabled = true\nurl = "https://cloud.example"\n'), true);
  // The management token generated into the state directory, unless the environment gives one.
  const management = "[management]\nenabled = true\n";
  const { config } = await loadConfigText(management, "gateway.toml", { baseDir: "/srv/gw" });
  assertEquals(needsStateLock(config!, () => undefined), true);
  assertEquals(needsStateLock(config!, () => "x".repeat(32)), false);
  assertEquals(stateDirOf(config!, "/srv/gw"), "/srv/gw/state");
});
