// At most `limit` tasks at once; the rest wait in order.
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
