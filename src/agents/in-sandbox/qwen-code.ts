// Qwen Code (a Gemini CLI fork speaking OpenAI Chat Completions), run through its own ACP mode
// (`qwen --acp`): bench's ACP client drives it like the other ACP agents. It reads the gateway from
// OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL (the auth type "openai"). It would relaunch
// itself as a child Node process (for a larger heap), which would leave the declared agent idle and
// its model calls another process's: QWEN_CODE_NO_RELAUNCH keeps it one process.
import { acpDef } from "./acp.js";

// The newest release that runs on Node 20 (later ones need Node 22).
const QWEN_CODE_VERSION = "0.15.10";

export const qwenCodeDef = acpDef({
  name: "qwen-code",
  bundle: {
    name: "qwen-code",
    version: QWEN_CODE_VERSION,
    packages: [`@qwen-code/qwen-code@${QWEN_CODE_VERSION}`],
    withNode: true,
  },
  command: (l) => [
    `${l.bundleDir}/node/bin/node`,
    `${l.bundleDir}/node_modules/@qwen-code/qwen-code/cli.js`,
    "--acp",
    "--yolo",
    "--auth-type",
    "openai",
    "--model",
    l.model,
  ],
  how: "declare",
  glibc: true,
  skillsHome: ".qwen/skills",
  configFiles: () => [
    {
      path: ".qwen/settings.json",
      content: JSON.stringify({ usageStatisticsEnabled: false, telemetry: { enabled: false } }, null, 2),
    },
  ],
  env: (l, key) => ({
    OPENAI_BASE_URL: `${l.gatewayOrigin}/v1`,
    OPENAI_API_KEY: key,
    OPENAI_MODEL: l.model,
    QWEN_CODE_NO_RELAUNCH: "true",
    NO_COLOR: "1",
  }),
});
