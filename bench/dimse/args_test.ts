/** The DIMSE benchmark's command line. */
import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { parseArgs } from "./args.ts";

Deno.test("bench/dimse arguments: defaults, positionals, --rounds, --help, errors", async () => {
  assertEquals(parseArgs([]), {
    instances: 1000,
    finds: 300,
    rounds: 3,
    gatewayEnv: {},
    help: false,
  });
  assertEquals(
    parseArgs(["200", "0", "--rounds", "5", "--gateway-env", "A=1=2", "--gateway-env=B="]),
    {
      instances: 200,
      finds: 0,
      rounds: 5,
      gatewayEnv: { A: "1=2", B: "" },
      help: false,
    },
  );
  await assertRejects(() => parseArgs(["--gateway-env", "=x"]), /NAME=VALUE/);
  assertEquals(parseArgs(["--rounds=1", "--help"]).help, true);
  assertEquals(parseArgs(["--profile", "/tmp/p"]).profile, "/tmp/p");
  assertEquals(parseArgs(["--profile=/tmp/q"]).profile, "/tmp/q");
  await assertRejects(() => parseArgs(["--profile"]), /--profile takes a directory/);
  await assertRejects(() => parseArgs(["--fast"]), /unknown argument --fast/);
  await assertRejects(() => parseArgs(["0"]), /instances must be an integer >= 1/);
  await assertRejects(() => parseArgs(["--rounds", "x"]), /--rounds must be/);
});
