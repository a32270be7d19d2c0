// How a stream ends when not every planned job finished: each carries the exit code the CLI uses.

/** The run ended as an infrastructure failure: its process died before every planned job finished. */
export class JobProcessGone extends Error {
  override name = "JobProcessGone";
  readonly exitCode = 1;
}

/**
 * The run stopped starting rollouts (summary.json `stopped`: the endpoint kept failing, or the user's
 * configuration cannot work). Also an infrastructure end, so a subclass: whoever handles a dead run
 * handles this one, with the same exit code.
 */
export class RunStopped extends JobProcessGone {
  override name = "RunStopped";
}

export class StreamTimeout extends Error {
  override name = "StreamTimeout";
  readonly exitCode = 3;
}
