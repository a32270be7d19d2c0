// Unpacks an archive the engine sends for `GET /containers/{id}/archive`: its first entry is the
// copied file or folder itself, which lands at hostPath. Nothing may escape hostPath: `..` and
// absolute names are refused, and symlinks are made last so no later entry writes through one.
import { createWriteStream, promises as fs } from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";

const BLOCK = 512;

class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private done = false;
  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<void> {
    while (this.length < n && !this.done) {
      const next = await this.source.next();
      if (next.done) this.done = true;
      else {
        this.buffered.push(next.value);
        this.length += next.value.length;
      }
    }
  }

  /** Exactly n bytes, or fewer at the end of the stream. */
  async read(n: number): Promise<Buffer> {
    await this.fill(n);
    const first = this.buffered[0];
    if (first && first.length >= n) {
      if (first.length === n) this.buffered.shift();
      else this.buffered[0] = first.subarray(n);
      this.length -= n;
      return first.subarray(0, n);
    }
    const all = Buffer.concat(this.buffered);
    this.buffered = all.length > n ? [all.subarray(n)] : [];
    this.length = Math.max(0, all.length - n);
    return all.subarray(0, n);
  }

  /** Up to n bytes in pieces as they arrive. */
  async *pieces(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.length === 0) await this.fill(1);
      if (this.length === 0) return;
      const chunk = await this.read(Math.min(left, this.length));
      left -= chunk.length;
      yield chunk;
    }
  }
}

function text(block: Buffer, start: number, len: number): string {
  const raw = block.subarray(start, start + len);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? raw.length : end).toString("utf8");
}

function num(block: Buffer, start: number, len: number): number {
  return Number.parseInt(text(block, start, len).trim() || "0", 8);
}

function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    const len = space < 0 ? 0 : Number(data.subarray(i, space).toString("ascii"));
    if (!(len > 0)) break;
    const record = data.subarray(space + 1, i + len - 1).toString("utf8");
    const eq = record.indexOf("=");
    out[record.slice(0, eq)] = record.slice(eq + 1);
    i += len;
  }
  return out;
}

function safeJoin(root: string, rel: string): string | null {
  const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return null;
  return parts.length === 0 ? root : path.join(root, ...parts);
}

export interface ArchiveEntry {
  /** Without leading or trailing slashes. */
  name: string;
  /** "0" file, "5" folder, "2" symlink; other tar types pass through. */
  type: string;
  mode: number;
  size: number;
  linkname: string;
  /** The file's bytes in pieces; data a consumer leaves unread is skipped. */
  body: () => AsyncGenerator<Buffer>;
}

const padOf = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

/** The entries of a tar stream, one at a time (PAX and GNU long names resolved). */
export async function* readArchive(stream: Readable): AsyncGenerator<ArchiveEntry> {
  const reader = new ByteReader(stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>);
  let pax: Record<string, string> = {};
  for (;;) {
    const block = await reader.read(BLOCK);
    if (block.length < BLOCK || block.every((b) => b === 0)) break;
    const type = text(block, 156, 1) || "0";
    const size = pax.size ? Number(pax.size) : num(block, 124, 12);
    const prefix = text(block, 345, 155);
    const name = pax.path ?? (prefix ? `${prefix}/${text(block, 0, 100)}` : text(block, 0, 100));
    const linkname = pax.linkpath ?? text(block, 157, 100);
    pax = {};
    if (type === "x" || type === "L" || type === "K") {
      const data = await reader.read(size);
      await reader.read(padOf(size));
      if (type === "x") pax = parsePax(data);
      else pax = { [type === "L" ? "path" : "linkpath"]: text(data, 0, data.length) };
      continue;
    }
    let left = type === "5" || type === "2" ? 0 : size;
    async function* body(): AsyncGenerator<Buffer> {
      for await (const piece of reader.pieces(left)) {
        left -= piece.length;
        yield piece;
      }
    }
    yield {
      name: name.replace(/^\/+/, "").replace(/\/+$/, ""),
      type,
      mode: num(block, 100, 8),
      size,
      linkname,
      body,
    };
    for await (const _ of reader.pieces(left + padOf(size))) void _;
  }
  // Drain whatever follows the end blocks so the connection can be reused.
  for await (const _ of reader.pieces(Number.MAX_SAFE_INTEGER)) void _;
}

/** Extracts a container archive so that its first (top) entry becomes hostPath. */
export async function extractTo(stream: Readable, hostPath: string): Promise<void> {
  const links: { at: string; target: string }[] = [];
  let top: string | null = null;
  for await (const entry of readArchive(stream)) {
    top ??= entry.name.split("/")[0] ?? "";
    const { name } = entry;
    const rel = name === top ? "" : name.startsWith(`${top}/`) ? name.slice(top.length + 1) : null;
    const dest = rel === null ? null : safeJoin(hostPath, rel);
    if (dest === null) continue;
    if (entry.type === "5") await fs.mkdir(dest, { recursive: true, mode: 0o755 });
    else if (entry.type === "2") links.push({ at: dest, target: entry.linkname });
    else if (entry.type === "0") {
      await fs.mkdir(path.dirname(dest), { recursive: true });
      await fs.rm(dest, { force: true, recursive: true });
      const out = createWriteStream(dest, { mode: entry.mode & 0o777 });
      for await (const piece of entry.body()) {
        if (!out.write(piece)) await new Promise<void>((r) => out.once("drain", () => r()));
      }
      await new Promise<void>((resolve, reject) =>
        out.end((err?: Error | null) => (err ? reject(err) : resolve())),
      );
    }
  }
  for (const link of links) {
    await fs.mkdir(path.dirname(link.at), { recursive: true });
    await fs.rm(link.at, { force: true, recursive: true });
    await fs.symlink(link.target, link.at);
  }
}
