// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose variables are the subject here
// The compose file as we read it: interpolation's forms and errors, services and their fields,
// and every key we do not apply named in a warning.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { interpolate } from "./interpolate.js";
import { ComposeError, duration, parseCompose, shellSplit } from "./model.js";

const ctx = (env: Record<string, string> = {}) => ({
  file: "/task/environment/docker-compose.yaml",
  shown: "environment/docker-compose.yaml",
  env,
});

describe("compose interpolation", () => {
  const env = { SET: "v", EMPTY: "" };
  it("replaces $VAR and ${VAR}, applies defaults by compose's rules, and keeps $$ as $", () => {
    assert.equal(interpolate("$SET-${SET}", env, "x"), "v-v");
    assert.equal(interpolate("${EMPTY:-d} ${EMPTY-d} ${NONE-d} ${NONE:-d}", env, "x"), "d  d d");
    assert.equal(interpolate("${SET:+alt}${NONE:+alt}${EMPTY+alt}", env, "x"), "altalt");
    assert.equal(interpolate("${NONE:-${SET}}", env, "x"), "v");
    assert.equal(interpolate("cost: $$5 and $$SET", env, "x"), "cost: $5 and $SET");
  });

  it("fails on a variable that is unset with no default, naming it and where", () => {
    assert.throws(
      () => interpolate("${NONE}", env, "services.api.environment[0]"),
      /services\.api\.environment\[0\]: the variable NONE is not set/,
    );
    assert.throws(
      () => interpolate("${EMPTY:?give a key}", env, "k"),
      /the variable EMPTY is empty: give a key/,
    );
    assert.throws(() => interpolate("${SET", env, "k"), /without a closing/);
  });
});

describe("compose services", () => {
  it("reads sidecars and what main adds, and warns about everything not applied", () => {
    const project = parseCompose(
      {
        version: "3",
        volumes: { data: {} },
        services: {
          main: {
            build: ".",
            depends_on: { api: { condition: "service_healthy" } },
            environment: ["A=1"],
            ports: ["80"],
          },
          api: {
            build: { context: "./api", args: { V: 2 } },
            environment: { KEY: "${KEY:-none}", PASS: null },
            command: "serve --port '80 80'",
            healthcheck: { test: "curl -f localhost", interval: "1m30s", start_period: "500ms" },
            ports: ["5000:5000"],
          },
        },
      },
      ctx({ PASS: "through" }),
    );
    const api = project.sidecars[0];
    assert.equal(api?.build?.context, "/task/environment/api");
    assert.deepEqual(api?.build?.args, { V: "2" });
    assert.deepEqual(api?.environment, { KEY: "none", PASS: "through" });
    assert.deepEqual(api?.command, ["serve", "--port", "80 80"]);
    assert.deepEqual(api?.healthcheck, {
      argv: ["/bin/sh", "-c", "curl -f localhost"],
      intervalMs: 90_000,
      timeoutMs: 30_000,
      retries: 3,
      startPeriodMs: 500,
      startIntervalMs: 90_000,
    });
    assert.deepEqual(project.main.dependsOn, [{ service: "api", condition: "service_healthy" }]);
    assert.deepEqual(project.main.environment, { A: "1" });
    const warned = project.warnings.join("\n");
    assert.match(warned, /top-level volumes: is not applied/);
    assert.match(warned, /services\.main\.build is not used: the sandbox sets main's build itself/);
    assert.match(warned, /services\.main\.ports is not applied to main/);
    assert.match(warned, /services\.api\.ports is not applied \(services reach each other by name/);
  });

  it("refuses what cannot run: unknown dependencies, cycles, contexts outside environment/, bad conditions", () => {
    const bad: [unknown, RegExp][] = [
      [{ services: { main: { depends_on: ["db"] } } }, /depends_on names db, which is not a service/],
      [
        { services: { a: { image: "x", depends_on: ["b"] }, b: { image: "x", depends_on: ["a"] } } },
        /circle: a -> b -> a/,
      ],
      [
        { services: { a: { build: "../outside" } } },
        /services\.a\.build\.context: \.\.\/outside is outside environment\//,
      ],
      [
        { services: { a: { image: "x" }, main: { depends_on: { a: { condition: "healthy" } } } } },
        /condition: healthy is not one of/,
      ],
      [{ services: { a: { environment: ["X=1"] } } }, /services\.a: needs build: or image:/],
      [
        { services: { a: { image: "x", healthcheck: { test: ["CMD"] } } } },
        /healthcheck\.test: must start with "CMD"/,
      ],
      [{ services: {} }, /services: must be a mapping/],
    ];
    for (const [doc, message] of bad)
      assert.throws(
        () => parseCompose(doc, ctx()),
        (err: unknown) => err instanceof ComposeError && message.test(err.message),
      );
  });

  it("parses durations and shell-like command strings as compose does", () => {
    assert.equal(duration("2s", "x", 0), 2000);
    assert.equal(duration("1h2m3s4ms", "x", 0), 3_723_004);
    assert.equal(duration(5, "x", 0), 5000);
    assert.throws(() => duration("soon", "h.interval", 0), /h\.interval: "soon" is not a duration/);
    assert.deepEqual(shellSplit(`a "b c" 'd e' f\\ g "h\\"i" ''`, "x"), [
      "a",
      "b c",
      "d e",
      "f g",
      'h"i',
      "",
    ]);
    assert.throws(() => shellSplit(`a "b`, "x"), /unclosed "/);
  });
});
