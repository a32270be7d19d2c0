// Keeps the last `max` bytes of a stream (an exec's stdout or stderr).
export class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - (this.chunks[0]?.length ?? 0) >= this.max) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    if (all.length <= this.max) return all.toString("utf8");
    let start = all.length - this.max;
    // Do not start in the middle of a UTF-8 sequence.
    while (start < all.length && ((all[start] ?? 0) & 0xc0) === 0x80) start++;
    return all.subarray(start).toString("utf8");
  }
}
