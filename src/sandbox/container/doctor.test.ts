// bench doctor on this machine: with the engine up the container checks pass; with DOCKER_HOST at
// a dead socket the engine check fails, names the fix, and the container sandbox is reported out.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatDoctor } from "../../cli/doctor-text.js";
import { runDoctor } from "../doctor.js";
import { engineOrSkip } from "./testing/kit.js";

async function withDockerHost<T>(value: string, work: () => Promise<T>): Promise<T> {
  const before = process.env.DOCKER_HOST;
  process.env.DOCKER_HOST = value;
  try {
    return await work();
  } finally {
    if (before === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = before;
  }
}

describe("bench doctor", () => {
  it("passes the container checks when the engine, base image and runtime work", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const report = await runDoctor();
    const byName = new Map(report.checks.map((c) => [c.name, c]));
    for (const name of ["container engine", "base image", "container runtime"]) {
      assert.equal(byName.get(name)?.ok, true, `${name}: ${byName.get(name)?.detail}`);
    }
    assert.equal(report.sandboxes.container, null);
    assert.match(formatDoctor(report), /--sandbox container: works/);
  });

  it("says the container sandbox cannot run, and how to fix it, when no engine answers", async () => {
    const report = await withDockerHost("unix:///nonexistent/benchflow-doctor.sock", runDoctor);
    const engine = report.checks.find((c) => c.name === "container engine");
    assert.equal(engine?.ok, false);
    assert.match(
      engine?.detail ?? "",
      /no container engine answers at unix:\/\/\/nonexistent\/benchflow-doctor\.sock/,
    );
    assert.match(engine?.fix ?? "", /scripts\/setup-podman\.sh/);
    assert.notEqual(report.sandboxes.container, null);
    const text = formatDoctor(report);
    assert.match(text, /FAIL {2}container engine/);
    assert.match(text, /fix: run scripts\/setup-podman\.sh/);
    assert.match(text, /--sandbox container: unavailable/);
    // The namespace checks still ran and are reported either way.
    assert.ok(report.checks.some((c) => c.name === "namespace sandbox"));
  });
});
