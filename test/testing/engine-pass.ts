// CI runs the container tests twice, once per engine (Podman, then Docker: .ci/run). A suite of the
// namespace sandbox does not touch the engine, so the second pass leaves it out: it already ran.
const SECOND_PASS = process.env.BENCHFLOW_ENGINE_PASS === "second";

/** The `skip` option of a namespace-sandbox test or suite: set in the engine's second pass only. */
export function namespaceRan(sandbox: string): { skip?: string } {
  return SECOND_PASS && sandbox === "namespace"
    ? { skip: "the namespace sandbox ran in the first pass (BENCHFLOW_ENGINE_PASS=second)" }
    : {};
}
