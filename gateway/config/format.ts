/** Human output of configuration problems: one per line, `file:line: path: message`. */
import type { ConfigProblem } from "../../shared/gateway_config/mod.ts";

/** One problem as `file:line: path: message` (line and path left out when unknown). */
export function formatProblem(problem: ConfigProblem): string {
  const where = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`;
  return problem.path
    ? `${where}: ${problem.path}: ${problem.message}`
    : `${where}: ${problem.message}`;
}

/** Every problem, one per line. */
export function formatProblems(problems: ConfigProblem[]): string {
  return problems.map(formatProblem).join("\n");
}
