// `npm run bench`: every speed and memory target of the project, each next to a baseline measured
// in the same run (the machines are noisy: read ratios and medians). `npm run bench -- run` runs one section.

import { benchAgents } from "./agents.js";
import { benchCompose } from "./compose.js";
import { benchContainer } from "./container.js";
import { benchEndpoint } from "./endpoint.js";
import { benchGateway } from "./gateway.js";
import { benchHardening } from "./hardening.js";
import { printRows } from "./report.js";
import { benchRun } from "./run.js";
import { benchScale } from "./scale.js";
import { benchTrain } from "./train.js";
import { benchView } from "./view.js";

const sections: Record<string, { title: string; run: () => Promise<import("./report.js").BenchRow[]> }> = {
  run: { title: "bench run on the namespace sandbox (issue: bench run)", run: benchRun },
  container: {
    title: "container sandbox vs the same work on the engine directly (issue: container sandbox)",
    run: benchContainer,
  },
  compose: {
    title: "a two-service compose trial's start-up vs the same containers by hand (issue: runtime semantics)",
    run: benchCompose,
  },
  train: { title: "bench train: convert and stream (issue: training data)", run: benchTrain },
  agents: {
    title: "real agents: start time per trial, sandbox ready to first model call (issue: real agents)",
    run: benchAgents,
  },
  gateway: {
    title: "the recording gateway vs calling the policy directly (issue: a model you serve)",
    run: benchGateway,
  },
  hardening: {
    title: "what verifier hardening and a separate verifier add to one trial (issue: reward hacking)",
    run: benchHardening,
  },
  scale: {
    title: "a group of 8 at --parallel-jobs 8 vs one job after another (issue: groups at scale)",
    run: benchScale,
  },
  view: {
    title: "bench view: first page and server memory, 1,000 and 10,000 rollouts (issue: see a run)",
    run: benchView,
  },
  endpoint: {
    title: "a failed endpoint is never a reward: endpoint down to provider_error (issue: failures)",
    run: benchEndpoint,
  },
};

const wanted = process.argv.slice(2);
for (const [key, section] of Object.entries(sections)) {
  if (wanted.length > 0 && !wanted.includes(key)) continue;
  try {
    printRows(section.title, await section.run());
  } catch (err) {
    process.stdout.write(`\n## ${section.title}\nfailed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
