// Whether an image the engine could not get will come on a retry. The engine answering "no such
// image", "denied" or "no such registry" is the task as written (task_error: retrying repeats it);
// a timeout, a reset, a registry's 5xx or 429, a full disk is the machine (sandbox_setup: retried).
// The engine's own silence (socket gone, hung up) never reaches here: callers mark it transport.

/** The answers we have seen for an image that is not there, from Podman and Docker. */
const MISSING = [
  /manifest unknown/i,
  /name unknown/i,
  /repository does not exist/i,
  /pull access denied/i,
  /\bdenied\b/i,
  /unauthorized|authentication required/i,
  /\bnot found\b/i,
  /does not exist/i,
  /no such image/i,
  // Podman and Docker both report a registry host that does not resolve this way (Go's resolver).
  /no such host/i,
  // A registry that refuses the connection outright: nothing listens there.
  /connection refused/i,
  /invalid reference format/i,
  /short-name/i,
  /no matching manifest|no image found in manifest list/i,
];

/** Failures that can pass; they win over MISSING, so a registry's "503 ... not found" is transient. */
const TRANSIENT = [
  /timeout|timed out|deadline exceeded/i,
  /connection reset|broken pipe|\bEOF\b/i,
  /temporary failure|try again|server misbehaving/i,
  /too many requests|toomanyrequests|status:? 429/i,
  /status:? 5\d\d|internal server error|bad gateway|service unavailable|gateway time-?out/i,
];

/** The machine's own trouble (storage, memory), reported by the engine whatever step was running. */
const MACHINE =
  /no space left|disk quota|database is locked|cannot allocate memory|too many open files|permission denied|read-only file system/i;

export type ImageFailureKind = "missing" | "transient";

/** How an error the engine reported for a pull (or a FROM) reads; unknown answers count as transient. */
export function imageFailureKind(engineMessage: string): ImageFailureKind {
  if (isMachineFailure(engineMessage)) return "transient";
  return MISSING.some((re) => re.test(engineMessage)) ? "missing" : "transient";
}

/**
 * Errors the engine reports that are the machine's or the network's, whatever step was running:
 * storage and memory trouble, timeouts, resets, a registry that is busy or failing.
 */
export function isMachineFailure(engineMessage: string): boolean {
  return MACHINE.test(engineMessage) || TRANSIENT.some((re) => re.test(engineMessage));
}
