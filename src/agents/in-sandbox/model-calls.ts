// What the gateway recorded for this rollout: how many model calls, and when the first began.
import { promises as fs } from "node:fs";
import path from "node:path";
import { TRAJECTORY } from "../../jobs-dir/layout.js";

export interface GatewayRecord {
  calls: number;
  /** Epoch ms of the earliest recorded request, or null when there was none. */
  firstCallAt: number | null;
}

export async function gatewayRecordOf(rolloutDir: string): Promise<GatewayRecord> {
  const file = path.join(rolloutDir, TRAJECTORY);
  const text = await fs.readFile(file, "utf8").catch(() => "");
  let calls = 0;
  let firstCallAt: number | null = null;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    calls++;
    // The request's timestamp leads each line; no need to parse megabytes of token ids.
    const t = Date.parse(/"timestamp":"([^"]+)"/.exec(line.slice(0, 400))?.[1] ?? "");
    if (Number.isFinite(t) && (firstCallAt === null || t < firstCallAt)) firstCallAt = t;
  }
  return { calls, firstCallAt };
}
