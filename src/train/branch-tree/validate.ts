// `bench train validate --format branch-tree`: child rows hold together (prefix + continuation
// is messages, advantage is reward - value) and pass the message checks every format gets;
// a pair's prompt followed by either side is a valid conversation and the chosen side won.
import { isRecord } from "../../util/jsonl.js";
import { checkMessages, declaredToolNames } from "../validate/messages.js";
import type { RowCheck } from "../validate/validate.js";
import { BRANCH_SCHEMA_VERSION } from "./rows.js";

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function childProblems(row: Record<string, unknown>, problems: string[]): RowCheck {
  for (const k of ["prefix", "continuation", "messages"])
    if (!Array.isArray(row[k])) problems.push(`${k} must be a list of messages`);
  const [prefix, continuation, messages] = [list(row.prefix), list(row.continuation), list(row.messages)];
  if (continuation.length === 0) problems.push("continuation is empty");
  if (JSON.stringify([...prefix, ...continuation]) !== JSON.stringify(messages))
    problems.push("messages must be prefix followed by continuation");
  for (const k of ["reward", "value", "advantage"])
    if (!finite(row[k])) problems.push(`${k} must be a number`);
  if (row.value_stderr !== null && !finite(row.value_stderr))
    problems.push("value_stderr must be a number or null");
  if (
    finite(row.reward) &&
    finite(row.value) &&
    finite(row.advantage) &&
    !close(row.advantage, row.reward - row.value)
  )
    problems.push(`advantage ${row.advantage} is not reward - value (${row.reward} - ${row.value})`);
  if (!Number.isInteger(row.depth) || (row.depth as number) < 0)
    problems.push("depth must be a whole number");
  if (typeof row.fork_id !== "string" || !row.fork_id) problems.push("fork_id must be a non-empty string");
  const tools = declaredToolNames(row.tools, problems);
  const check = checkMessages(messages, tools, { objectArguments: false });
  return { problems: [...problems, ...check.problems], toolCalls: check.toolCalls };
}

function pairProblems(row: Record<string, unknown>, problems: string[]): RowCheck {
  for (const k of ["chosen_reward", "rejected_reward", "margin"])
    if (!finite(row[k])) problems.push(`${k} must be a number`);
  const [hi, lo, margin] = [row.chosen_reward, row.rejected_reward, row.margin];
  if (finite(hi) && finite(lo) && finite(margin)) {
    if (!(hi > lo)) problems.push(`chosen_reward ${hi} is not above rejected_reward ${lo}`);
    if (!close(margin, hi - lo)) problems.push(`margin ${margin} is not chosen_reward - rejected_reward`);
  }
  if (typeof row.same_request !== "boolean") problems.push("same_request must be true or false");
  const tools = declaredToolNames(row.tools, problems);
  let toolCalls = 0;
  for (const side of ["chosen", "rejected"]) {
    if (list(row[side]).length === 0) problems.push(`${side} must be a non-empty list of messages`);
    const check = checkMessages([...list(row.prompt), ...list(row[side])], tools, { objectArguments: false });
    problems.push(...check.problems.map((p) => `${side}: ${p}`));
    toolCalls += check.toolCalls;
  }
  return { problems, toolCalls };
}

export function checkBranchRow(row: unknown): RowCheck {
  if (!isRecord(row)) return { problems: ["a branch-tree row must be an object"], toolCalls: 0 };
  const problems: string[] = [];
  if (row.schema_version !== BRANCH_SCHEMA_VERSION)
    problems.push(
      `schema_version must be ${BRANCH_SCHEMA_VERSION}, not ${JSON.stringify(row.schema_version)}`,
    );
  if (row.kind === "branch_child") return childProblems(row, problems);
  if (row.kind === "branch_pair") return pairProblems(row, problems);
  return {
    problems: [`kind must be branch_child or branch_pair, not ${JSON.stringify(row.kind)}`],
    toolCalls: 0,
  };
}
