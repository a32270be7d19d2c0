// `bench view --export FILE.html`: the whole run as one self-contained page (runs, groups and every
// rollout inlined; links are anchors; no script, nothing fetched). Rollouts are read and written one
// at a time into a temp file beside FILE, renamed into place when complete.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import { UserInputError } from "../errors.js";
import type { Normalisation } from "../jobs-dir/groups/advantage.js";
import { opt } from "../options.js";
import { html, trusted } from "./html/escape.js";
import { groupSection } from "./html/group-page.js";
import { page } from "./html/layout.js";
import { anchorId, exportLinks } from "./html/links.js";
import { rolloutSection } from "./html/rollout-page.js";
import { runsPage } from "./html/runs-page.js";
import { readRolloutDetail } from "./model/rollout-detail.js";
import { RunIndex } from "./model/run-index.js";
import { summaryFromIndex } from "./model/run-summary.js";

export interface ExportResult {
  file: string;
  rollouts: number;
  groups: number;
  bytes: number;
}

export async function exportRun(
  jobsDir: string,
  file: string,
  opts: { groupBy?: string; advantage?: Normalisation } = {},
): Promise<ExportResult> {
  if (!file.endsWith(".html"))
    throw new UserInputError(`${opt("export", file)}: give a file name ending in .html.`);
  const index = await RunIndex.open(jobsDir);
  const abs = path.resolve(file);
  if (abs === index.root || abs.startsWith(index.root + path.sep))
    throw new UserInputError(
      `${opt("export", file)} is inside the jobs folder ${jobsDir}; write it somewhere else.`,
    );
  const norm = opts.advantage ?? "grpo";
  const s = summaryFromIndex(index, { groupBy: opts.groupBy, advantage: norm });
  const links = exportLinks();
  // The page frame is split around a marker so the sections can be streamed between its halves.
  const MARK = `<!--sections-${randomBytes(6).toString("hex")}-->`;
  const frame = page(
    { title: `run ${path.basename(index.root)}`, home: "#runs" },
    html`${runsPage(s, links, { groups: 1, jobs: 1, size: Number.POSITIVE_INFINITY })}${trusted(MARK)}`,
  );
  const [head, tail] = frame.split(MARK) as [string, string];
  const tmp = path.join(path.dirname(abs), `.${path.basename(abs)}.${randomBytes(4).toString("hex")}.tmp`);
  const out = fs.createWriteStream(tmp);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, "drain");
  };
  try {
    await write(head);
    await write(`<h2>Groups</h2>`);
    for (const g of s.groups) await write(groupSection(g, links, norm, anchorId("group", g.url_id)).value);
    await write(`<h2>Rollouts</h2>`);
    for (const r of index.live())
      await write(rolloutSection(await readRolloutDetail(r), links, anchorId("rollout", r.relPath)).value);
    await write(tail);
    out.end();
    await once(out, "finish");
    fs.renameSync(tmp, abs);
  } catch (err) {
    out.destroy();
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { file: abs, rollouts: s.run.rollouts, groups: s.groups.length, bytes: fs.statSync(abs).size };
}
