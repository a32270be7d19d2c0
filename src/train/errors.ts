// How a stream ends when not every planned job finished: each carries the exit code the CLI uses.
export class JobProcessGone extends Error {
  override name = "JobProcessGone";
  readonly exitCode = 1;
}

export class StreamTimeout extends Error {
  override name = "StreamTimeout";
  readonly exitCode = 3;
}
