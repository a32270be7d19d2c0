// Concurrency limits, in one place: `mapLimit` runs a list a few at a time (reading thousands of
// rollout folders at once would exhaust file handles; a job's rollouts run `concurrency` at a time);
// `Limiter` is a gate shared by callers that come and go (image builds), whose limit can change.

/** `fn` over `items`, at most `limit` at a time (at least one), started in order; results in order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (t: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** At most `limit` tasks at once; the rest wait in order. */
export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private limit: number) {}

  setLimit(n: number): void {
    this.limit = Math.max(1, Math.floor(n));
    while (this.active < this.limit && this.waiting.length > 0) this.next();
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await work();
    } finally {
      if (this.waiting.length > 0) this.next(false);
      else this.active--;
    }
  }

  private next(grow = true): void {
    const wake = this.waiting.shift();
    if (!wake) return;
    if (grow) this.active++;
    wake();
  }
}
