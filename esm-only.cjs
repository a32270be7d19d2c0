// `require("benchflow")` lands here (package.json "exports", condition "require"): the package is
// ES modules only, and Node's own error for that does not say so or how to load it.
const error = new Error(
  'benchflow is ESM-only: use `import { Evaluation } from "benchflow"`, or `await import("benchflow")` from CommonJS',
);
error.code = "ERR_REQUIRE_ESM";
throw error;
