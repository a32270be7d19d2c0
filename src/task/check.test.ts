import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { checkTask } from "./check.js";
import { MINIMAL_SPLIT_TASK, removeRoot, tempRoot, writeTask } from "./testing/task-dir.js";

describe("checkTask", () => {
  let root: string;
  before(async () => {
    root = await tempRoot();
  });
  after(() => removeRoot(root));

  it("lists every problem of a task at once", async () => {
    const dir = await writeTask(root, "broken", {
      "task.toml":
        '[verifier]\ntimout_sec = 5\n[agent]\ntimeout_sec = "soon"\n[environment]\ngpu_types = ["a100"]\n',
      "instruction.md": "\n",
      "tests/test.sh": "  \n",
      "solution/README.md": "no solve.sh here",
    });
    const report = await checkTask(dir);
    assert.equal(report.task, "broken");
    const expected = [
      /task\.toml: unknown key verifier\.timout_sec; did you mean timeout_sec\?/,
      /task\.toml: agent\.timeout_sec must be a number of seconds greater than 0 \(got "soon"\)/,
      /instruction\.md is empty/,
      /broken\/environment\/: missing/,
      /broken\/tests\/test\.sh: empty/,
      /broken\/solution\/solve\.sh: missing/,
    ];
    assert.equal(report.problems.length, expected.length, report.problems.join("\n"));
    for (const [i, re] of expected.entries()) assert.match(report.problems[i] ?? "", re);
    assert.ok(report.warnings.some((w) => w.includes("environment.gpu_types is accepted but not acted on")));
  });

  it("reports a missing Dockerfile, a missing verifier and a malformed config together", async () => {
    const dir = await writeTask(root, "bare", {
      "task.toml": "[agent\n",
      "instruction.md": "Do it.",
      environment: null,
    });
    const { problems } = await checkTask(dir);
    assert.equal(problems.length, 3, problems.join("\n"));
    assert.match(problems[0] ?? "", /bare\/task\.toml:1:\d+: malformed TOML/);
    assert.match(problems[1] ?? "", /bare: no verifier; add tests\/test\.sh \(or verifier\/test\.sh\)/);
    assert.match(problems[2] ?? "", /bare\/environment\/Dockerfile: missing/);
  });

  it("reports an empty verifier/ even when tests/ would do", async () => {
    const dir = await writeTask(root, "shadowed", { ...MINIMAL_SPLIT_TASK, verifier: null });
    const { problems } = await checkTask(dir);
    assert.deepEqual(problems.length, 1);
    assert.match(
      problems[0] ?? "",
      /verifier\/test\.sh: missing \(verifier\/ exists, so tests\/ is ignored\)/,
    );
  });

  it("passes a clean task and an executable bit is not required", async () => {
    const report = await checkTask(await writeTask(root, "clean", MINIMAL_SPLIT_TASK));
    assert.deepEqual(report, { task: "clean", problems: [], warnings: [], notes: [] });
  });

  it("reports the fixture tasks that are broken on purpose", async () => {
    const fixtures = path.resolve("test/fixtures/tasks");
    for (const [name, fragment] of [
      ["bad-toml", "malformed TOML"],
      ["bad-yaml", "malformed YAML"],
      ["unknown-key", "verifier.timout_sec"],
      ["no-test-script", "tests/test.sh: missing"],
    ] as const) {
      const { problems } = await checkTask(path.join(fixtures, name));
      assert.equal(problems.length, 1, `${name}: ${problems.join("\n")}`);
      assert.ok(problems[0]?.includes(fragment), `${name}: ${problems[0]}`);
    }
  });

  it("notes what a run does that the files alone do not say", async () => {
    const dir = await writeTask(root, "intent", {
      ...MINIMAL_SPLIT_TASK,
      "task.toml": [
        "[environment]",
        'docker_image = "example/prebuilt:1"',
        "[[environment.mcp_servers]]",
        'name = "docs"',
        'transport = "streamable-http"',
        'url = "http://docs:8000/mcp"',
        "[[steps]]",
        'name = "one"',
        "[[steps]]",
        'name = "two"',
        "",
      ].join("\n"),
      "environment/docker-compose.yaml":
        "services:\n  main:\n    depends_on:\n      docs:\n        condition: service_healthy\n  docs:\n    build: ./docs\n",
      "steps/one/instruction.md": "First.\n",
      "steps/one/tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "steps/two/instruction.md": "Second.\n",
      "steps/two/tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
    });
    await fs.rm(path.join(dir, "solution"), { recursive: true });
    const { notes, problems } = await checkTask(dir);
    assert.equal(problems.length, 2, problems.join("\n"));
    assert.ok(problems.every((p) => p.includes("no solution/solve.sh to fall back on")));
    const all = notes.join("\n");
    assert.match(
      all,
      /docker-compose\.yaml: 2 service\(s\) \(main, docs\); the agent runs in "main", which waits for docs \(healthy\)/,
    );
    assert.match(all, /2 steps \(one, two\) in one sandbox/);
    assert.match(all, /MCP servers docs \(streamable-http: http:\/\/docs:8000\/mcp\)/);
    assert.match(all, /docker_image "example\/prebuilt:1" is set, so .*Dockerfile is not used/);
    assert.match(all, /no solution \(solution\/solve\.sh\)/);
    assert.ok(
      problems.some((p) => p.includes("solve.sh: missing")),
      problems.join("\n"),
    );
  });
});
