// A small ustar writer (with PAX records for long names) for build contexts and uploads: the engine
// takes and gives files only as tar streams, and spawning `tar` per copy would cost a process.
import { createReadStream, promises as fs } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";

export interface TarEntry {
  /** POSIX path inside the archive, no leading slash. */
  name: string;
  type: "file" | "dir" | "symlink";
  mode: number;
  /** Host file to copy (files), or literal bytes. */
  source?: string;
  data?: Buffer;
  size?: number;
  linkname?: string;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len)
    len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

function header(name: string, type: string, mode: number, size: number, linkname = ""): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, "utf8");
  block.write(octal(mode & 0o7777, 8), 100, "ascii");
  block.write(octal(0, 8), 108, "ascii");
  block.write(octal(0, 8), 116, "ascii");
  block.write(octal(size, 12), 124, "ascii");
  block.write(octal(Math.floor(Date.now() / 1000), 12), 136, "ascii");
  block.write("        ", 148, "ascii");
  block.write(type, 156, "ascii");
  block.write(linkname, 157, 100, "utf8");
  block.write("ustar\u000000", 257, "ascii");
  block.write("root", 265, "ascii");
  block.write("root", 297, "ascii");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

function headersFor(entry: TarEntry, size: number): Buffer[] {
  const typeFlag = entry.type === "file" ? "0" : entry.type === "dir" ? "5" : "2";
  const name = entry.type === "dir" && !entry.name.endsWith("/") ? `${entry.name}/` : entry.name;
  const link = entry.linkname ?? "";
  const long = Buffer.byteLength(name) > 100 || Buffer.byteLength(link) > 100;
  if (!long) return [header(name, typeFlag, entry.mode, size, link)];
  const pax = Buffer.from(paxRecord("path", name) + (link ? paxRecord("linkpath", link) : ""));
  return [
    header("PaxHeader", "x", 0o644, pax.length),
    pax,
    padding(pax.length),
    header(name.slice(-99), typeFlag, entry.mode, size, link.slice(0, 100)),
  ];
}

async function* chunksOf(entries: Iterable<TarEntry> | AsyncIterable<TarEntry>): AsyncGenerator<Buffer> {
  for await (const entry of entries) {
    const size = entry.type === "file" ? (entry.data?.length ?? entry.size ?? 0) : 0;
    yield* headersFor(entry, size);
    if (entry.type !== "file") continue;
    let written = 0;
    if (entry.data) {
      yield entry.data;
      written = entry.data.length;
    } else if (entry.source && size > 0) {
      // Read exactly the size we declared, so a file growing meanwhile cannot corrupt the stream.
      for await (const chunk of createReadStream(entry.source, { start: 0, end: size - 1 })) {
        written += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
    }
    if (written < size) yield Buffer.alloc(size - written);
    yield padding(size);
  }
  yield Buffer.alloc(BLOCK * 2);
}

export function tarStream(entries: Iterable<TarEntry> | AsyncIterable<TarEntry>): Readable {
  return Readable.from(chunksOf(entries), { objectMode: false });
}

/** Entries for a host file or folder, named under `prefix` (a folder's contents land under it). */
export async function entriesOf(hostPath: string, prefix: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  const root = await fs.lstat(hostPath);
  const clean = prefix.replace(/^\/+|\/+$/g, "");
  async function visit(abs: string, name: string): Promise<void> {
    const st = await fs.lstat(abs);
    if (st.isSymbolicLink())
      entries.push({ name, type: "symlink", mode: 0o777, linkname: await fs.readlink(abs) });
    else if (st.isFile()) entries.push({ name, type: "file", mode: st.mode, source: abs, size: st.size });
    else if (st.isDirectory()) {
      entries.push({ name, type: "dir", mode: st.mode });
      for (const child of (await fs.readdir(abs)).sort())
        await visit(path.join(abs, child), `${name}/${child}`);
    }
  }
  if (root.isDirectory()) {
    for (const child of (await fs.readdir(hostPath)).sort()) {
      await visit(path.join(hostPath, child), clean ? `${clean}/${child}` : child);
    }
  } else await visit(hostPath, clean);
  return entries;
}
