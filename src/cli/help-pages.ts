// Every command's Examples, Environment and Exit codes (help.ts lays them out). The exit codes are
// the ones docs/ promise; the variables are the ones the command reads.
import type { HelpSections } from "./help.js";

const DEBUG = { BENCHFLOW_DEBUG: "set to 1: an unexpected error also prints its stack trace" };
const USAGE = "bad input: an unknown or malformed flag, a missing or malformed file or folder";
const ENGINE = {
  DOCKER_HOST:
    "the container engine (unix:///path or tcp://host:port); set but not answering is an error, not a fallback",
};

export const ROOT_HELP: HelpSections = {
  examples: [
    "npx bench run examples/tasks/half-life -a oracle --trials 4 -j 2 --jobs-dir jobs/group",
    "npx bench tasks check examples/tasks",
    "npx bench train convert jobs/group -o train/rows.jsonl --group-advantage grpo",
    "npx bench run --help  # each command's own flags, examples and exit codes",
  ],
  env: DEBUG,
  exitCodes: { 0: "done", 1: "the command ran and something failed (see each command)", 2: USAGE },
};

export const RUN_HELP: HelpSections = {
  notes: [
    "-m with an agent that calls no model (oracle, nop) is a warning, not an error: a control run keeps\n" +
      "the policy run's command line with only -a changed; the model is neither used nor recorded.",
  ],
  examples: [
    "npx bench run examples/tasks/hello -a oracle  # the task's own solution: a correct task scores 1.0",
    "npx bench run examples/tasks/half-life -a oracle --trials 4 -j 2 --jobs-dir jobs/group",
    "npx bench run examples/tasks -a bench-agent -m vllm/my-policy --base-url http://gpu:8000/v1 --trials 8",
    "npx bench run examples/tasks -a oracle --include 'h*' --dry-run  # the plan as JSON, nothing run",
    "npx bench run examples/tasks -a oracle --job-name 2026-01-31__12-00-00  # resume that run",
    "npx bench run examples/tasks -a oracle --executor slurm --slurm-partition cpu  # each trial a SLURM job",
  ],
  defaults: {
    "--job-name": "the start time, e.g. 2026-01-31__12-00-00 (a new job each run)",
    "--sandbox": "$BENCHFLOW_SANDBOX, else auto: container when an engine answers, else namespace",
    "--parallel-jobs": "1, one after another",
    "--max-concurrent-trials": "max(-j, 4 x cores)",
    "--endpoint-first-byte-timeout": "600",
    "--endpoint-idle-timeout": "300",
    "--endpoint-retries": "2",
    "--fail-fast-calls": "3",
    "--max-call-mib": "$BENCHFLOW_MAX_CALL_MIB, else 64",
    "--max-recorded-mib": "$BENCHFLOW_MAX_RECORDED_MIB, else 1024",
    "--fail-fast-rollouts": "max(3, -j)",
    "--skill-mode": "with-skill",
    "--verifier-hardening": "on",
    "--verifier-environment-mode": "each task's [verifier] environment_mode (shared)",
    "--base-url":
      "$BENCHFLOW_PROVIDER_BASE_URL; for a hosted provider's model its own variable, else its URL",
    "--api-key": "$BENCHFLOW_PROVIDER_API_KEY; for a hosted provider's model its own key variable",
    "--temperature": "$BENCHFLOW_TEMPERATURE, else the endpoint's",
    "--top-p": "$BENCHFLOW_TOP_P, else the endpoint's",
    "--max-tokens": "$BENCHFLOW_MAX_TOKENS, else the endpoint's",
    "--reasoning-effort": "$BENCHFLOW_REASONING_EFFORT, else the agent's",
    "--seed": "$BENCHFLOW_SEED, else none (the endpoint draws)",
    "--executor": "$BENCHFLOW_EXECUTOR, else local",
    "--slurm-partition": "$BENCHFLOW_SLURM_PARTITION, else the cluster's",
    "--slurm-account": "$BENCHFLOW_SLURM_ACCOUNT, else yours",
    "--slurm-sbatch-arg": "$BENCHFLOW_SLURM_SBATCH_ARGS (space-separated), else none",
    "--gateway-host": "$BENCHFLOW_SLURM_GATEWAY_HOST, else this host's address on the nodes' network",
  },
  env: {
    BENCHFLOW_SANDBOX: "the default of --sandbox: auto, namespace or container",
    ...ENGINE,
    BENCHFLOW_PROVIDER_BASE_URL: "the policy's endpoint when --base-url is not given (also via --agent-env)",
    BENCHFLOW_PROVIDER_API_KEY: "the policy's key when --api-key is not given (only the gateway sees it)",
    OPENAI_API_KEY:
      "a hosted provider's key, read for its own models only: likewise ANTHROPIC_API_KEY, DEEPSEEK_API_KEY,\n" +
      "OPENROUTER_API_KEY, TOGETHER_API_KEY, FIREWORKS_API_KEY, GROQ_API_KEY, MISTRAL_API_KEY, XAI_API_KEY,\n" +
      "GEMINI_API_KEY (and each one's *_BASE_URL): docs/a-model-you-serve.md, Hosted models",
    BENCHFLOW_TEMPERATURE:
      "--temperature when not given; likewise BENCHFLOW_TOP_P, BENCHFLOW_MAX_TOKENS, BENCHFLOW_SEED",
    BENCHFLOW_ENDPOINT_FIRST_BYTE_TIMEOUT:
      "--endpoint-first-byte-timeout when not given; likewise BENCHFLOW_ENDPOINT_IDLE_TIMEOUT,\n" +
      "BENCHFLOW_ENDPOINT_RETRIES and BENCHFLOW_FAIL_FAST_CALLS for their flags",
    BENCHFLOW_CAPTURE_TOKEN_LOGPROBS: "1: as --capture-tokens",
    BENCHFLOW_CAPTURE_TOKEN_IDS:
      "1: ask any endpoint for token ids; 0: never (default: vllm/ and sglang/ models)",
    BENCHFLOW_CAPTURE_TOP_LOGPROBS: "top_logprobs to ask for with --capture-tokens",
    BENCHFLOW_AGENT_CACHE: "where agent CLIs are installed (default ~/.cache/benchflow/agents)",
    BENCHFLOW_EXECUTOR: "the default of --executor: local or slurm",
    BENCHFLOW_SLURM_PARTITION:
      "--slurm-partition when not given; likewise BENCHFLOW_SLURM_ACCOUNT, BENCHFLOW_SLURM_SBATCH_ARGS\n" +
      "and BENCHFLOW_SLURM_GATEWAY_HOST for their flags",
    BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS: "1: an unknown task.toml key is a warning, not an error",
    ...DEBUG,
  },
  exitCodes: {
    0: "every trial finished: scored, or failed by the policy",
    1: "a trial ended in an infrastructure error, a task_error or a verifier error; or the run stopped because the endpoint kept failing (finish it with --job-name)",
    2: `${USAGE}, broken tasks, a locked job; or the endpoint refused the configuration (config_error)`,
    130: "interrupted (SIGINT): trials in flight end as interrupted",
    143: "terminated (SIGTERM)",
  },
};

export const TASKS_HELP: HelpSections = {
  examples: ["npx bench tasks check examples/tasks"],
  exitCodes: { 0: "done", 1: "a task has a problem", 2: USAGE },
};

export const TASKS_CHECK_HELP: HelpSections = {
  examples: [
    "npx bench tasks check examples/tasks/hello",
    "npx bench tasks check examples/tasks my-tasks/  # several paths: every task of each",
  ],
  env: {
    BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS: "1: an unknown task.toml key is a warning, not a problem",
  },
  exitCodes: {
    0: "no task has a problem (notes and warnings are printed)",
    1: "a task has a problem",
    2: USAGE,
  },
};

export const DOCTOR_HELP: HelpSections = {
  examples: ["npx bench doctor", "DOCKER_HOST=unix:///run/podman/podman.sock npx bench doctor"],
  env: ENGINE,
  exitCodes: {
    0: "a sandbox works here",
    1: "no sandbox can run here (the fix for each is printed)",
    2: "an unknown flag",
  },
};

export const BUILD_HELP: HelpSections = {
  examples: ["npx bench build examples/tasks/jq-report", "npx bench build examples/tasks --force"],
  env: ENGINE,
  exitCodes: {
    0: "every image is built or up to date",
    1: "a build failed (each task's line says why)",
    2: USAGE,
  },
};

export const POLICY_HELP: HelpSections = {
  examples: ["npx bench policy scripted --script examples/policies/hello.json --port 8000"],
  exitCodes: { 0: "done", 2: USAGE },
};

export const SCRIPTED_HELP: HelpSections = {
  examples: [
    "npx bench policy scripted --script examples/policies/hello.json --port 8000",
    "npx bench run examples/tasks/hello -a bench-agent -m vllm/scripted --base-url http://127.0.0.1:8000/v1",
  ],
  exitCodes: {
    0: "stopped by SIGINT or SIGTERM",
    2: `${USAGE} (a script that does not parse, a port in use)`,
  },
};

const TOKENIZER_ENV = {
  HF_HUB_CACHE:
    "where a Hugging Face --tokenizer id is looked up (else $HF_HOME/hub, ~/.cache/huggingface/hub)",
  HF_HOME: "the Hugging Face home, for its hub/ cache",
};

export const TRAIN_HELP: HelpSections = {
  examples: [
    "npx bench train convert jobs/group -o train/rows.jsonl --group-advantage grpo",
    "npx bench train stream jobs/group --group-size 4 --format text",
    "npx bench train validate train/rows.jsonl",
  ],
  exitCodes: { 0: "done", 1: "the data has a problem (see each command)", 2: USAGE },
};

export const CONVERT_HELP: HelpSections = {
  examples: [
    "npx bench train convert jobs/group -o train/rows.jsonl",
    "npx bench train convert jobs/group -o train/rows.jsonl --group-advantage grpo --manifest train/manifest.json",
    "npx bench train convert jobs/group -o train/trl.jsonl --format trl-sft --row-mode exchange",
  ],
  defaults: { "--redact": "on", "--tokenizer-revision": "main" },
  env: TOKENIZER_ENV,
  exitCodes: {
    0: "the rows (and the manifest) were written",
    1: "the data has a problem (a malformed llm_trajectory.jsonl, --expected-rows not met); nothing is written",
    2: `${USAGE}; a folder with no rollout in it; --out or --manifest over an input`,
  },
};

export const STREAM_HELP: HelpSections = {
  notes: [
    "A path that does not exist yet is waited for (a run that has not made its folder), saying so on\n" +
      "stderr; with --no-follow it is an error (exit 2).",
  ],
  examples: [
    "npx bench train stream jobs/group --group-size 4",
    "npx bench train stream jobs/group --no-follow --format text  # what has finished, once",
  ],
  defaults: { "--follow": "on", "--timeout": "none: until every planned job has finished" },
  exitCodes: {
    0: "every planned job finished (with --no-follow: the scan is done)",
    1: "the run's process died, or it stopped starting trials",
    2: `${USAGE}; a missing path with --no-follow; a malformed llm_trajectory.jsonl`,
    3: "--timeout came first",
  },
};

export const VALIDATE_HELP: HelpSections = {
  examples: [
    "npx bench train validate train/rows.jsonl",
    "npx bench train validate train/rows.jsonl --expected-rows 4 --source-jobs jobs/group",
  ],
  defaults: { "--format": "each row's own", "--tokenizer-revision": "main" },
  env: TOKENIZER_ENV,
  exitCodes: {
    0: "every row is valid",
    1: "a row is not valid or not JSON, --expected-rows or --require-tool-calls not met",
    2: `${USAGE} (an unknown --format, no such file)`,
  },
};

export const COVERAGE_HELP: HelpSections = {
  examples: ["npx bench train token-coverage jobs/group", "npx bench train token-coverage jobs/group --json"],
  exitCodes: {
    0: "the report was printed, whatever it found",
    1: "a finished rollout's llm_trajectory.jsonl is malformed",
    2: USAGE,
  },
};

export const TRAIN_RUN_HELP: HelpSections = {
  examples: ["npx bench train run sft --config sft.toml --data train/rows.jsonl --dry-run"],
  exitCodes: { 0: "done", 2: USAGE },
};

export const SFT_HELP: HelpSections = {
  examples: [
    "npx bench train run sft --config sft.toml --data train/rows.jsonl --prime-rl-dir ~/prime-rl --dry-run",
    "npx bench train run sft --config sft.toml --data train/rows.jsonl --target-examples 1000 --follow",
  ],
  defaults: {
    "--output-dir": "<work-dir>/prime-rl-output",
    "--prime-rl-dir": "the current directory",
    "--sync-scheduler-to-max-steps": "on",
  },
  exitCodes: {
    0: "the trainer ran and exited 0",
    N: "the trainer's own status (128 + N when killed by signal N); train-run.json says failed",
    1: "refused before launching (a flag combination upstream refuses, a missing config or data, no uv on PATH)",
    2: `${USAGE} (a --backend other than prime-rl, a count that is not a whole number)`,
  },
};

/** --group-by of `bench view` and `bench results`: the run's groups, as `bench train` groups them. */
export const SUMMARY_GROUP_BY_HELP =
  "keys from task, agent, model, task_digest, job, policy_version, run, sampling (default: bench train's, the group identity: task,agent,model,run,task_digest,policy_version,sampling)";

export const VIEW_HELP: HelpSections = {
  notes: [
    "Loopback only by default: a --host other than 127.0.0.1 or ::1 warns that every trajectory,\n" +
      "prompt and tool output becomes visible to the network. Pages update while a run writes the folder.",
  ],
  examples: [
    "npx bench view jobs/group  # then open the printed URL",
    "npx bench view jobs --port 8080 --advantage loo",
    "npx bench view jobs/group --export group.html  # one self-contained page to share",
  ],
  exitCodes: {
    0: "stopped with Ctrl-C, or the export was written",
    1: "the server failed",
    2: `${USAGE}; the port is in use; a bad --group-by or --advantage`,
  },
};

export const RESULTS_HELP: HelpSections = {
  examples: [
    "npx bench results jobs/group",
    "npx bench results jobs/group --advantage loo --json  # the numbers bench view shows, as JSON",
  ],
  exitCodes: {
    0: "printed",
    1: "the folder could not be read",
    2: `${USAGE}; a bad --group-by or --advantage`,
  },
};

export const TASKS_AUDIT_HELP: HelpSections = {
  notes: [
    "Each exploit is a generic agent (a planted reward file, a conftest.py, a stub on PATH, an empty\n" +
      "deliverable, ...) run as the task's agent user; it is ACCEPTED when the verifier scores it above\n" +
      "the task's nop. Only exploits whose predicate fits the task run (docs/write-a-task.md lists them).",
  ],
  examples: [
    "npx bench tasks audit examples/tasks --sandbox namespace",
    "npx bench tasks audit my-task --json > audit.json",
  ],
  env: { BENCHFLOW_SANDBOX: "the sandbox when --sandbox is not given (auto, namespace or container)" },
  exitCodes: {
    0: "no verifier accepted an exploit",
    1: "a verifier accepted an exploit (each task's block names it and its hole)",
    2: USAGE,
  },
};
