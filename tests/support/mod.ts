/** Helpers for end-to-end and real-peer tests (and the benchmarks): processes, ports, peers. */

export { curl } from "./curl.ts";
export { type DicomScuPipeline, dicomScuPipelineToml, dicomwebPipelineToml } from "./dicom_toml.ts";
export {
  GATEWAY_ENV,
  type GatewayOptions,
  type GatewayProcess,
  startGateway,
  TEST_MANAGEMENT_TOKEN,
  testManagementToken,
  withManagementToken,
} from "./gateway.ts";
export { type NginxOptions, type NginxProcess, startNginx } from "./nginx.ts";
export { findBinary, hasPeer, isCi, requirePeer } from "./peers.ts";
export { freePort } from "./ports.ts";
export { fetchFresh, type FreshResponse } from "./fresh_fetch.ts";
export {
  type CapturedProcess,
  type CommandResult,
  runCommand,
  spawnCaptured,
  waitReady,
} from "./process.ts";
export { cpuMsOf, peakRssOf, resetPeakRss, rssOf } from "./rss.ts";
export {
  type ProtectedCommand,
  protectedCommand,
  protectSystemUnavailable,
} from "./protect_system.ts";
export { removeDir, tempDir } from "./temp.ts";
export { type IssuedCert, makeTestCa, type TestCa } from "./test_ca.ts";
export {
  type Filler,
  fillFilesystem,
  mountSmallFilesystem,
  type SmallFilesystem,
  type SmallFilesystemOptions,
} from "./tmpfs.ts";
export { canConnect, waitFor } from "./wait.ts";
export { type CpuStopwatch, cpuStopwatch, type LatencyProbe, latencyProbe } from "./latency.ts";
export { REPO_ROOT } from "./paths.ts";
export { type SecretService, startSecretService } from "./secret_service.ts";
export { withEnv, withTestHooks } from "./env.ts";
export { bestStall, loopTurnsDuring, measureStall, type StallMeasure } from "./event_loop.ts";
