// The manifest lists every group and every source, so it grows with the job. Those two lists go to
// side files as the conversion runs (one entry a line) and are spliced into the manifest at the end,
// so memory stays flat however many rollouts there are.
import { randomBytes } from "node:crypto";
import { createReadStream, promises as fs } from "node:fs";
import path from "node:path";
import { opt } from "../../options.js";
import type { Manifest, ManifestGroup } from "../../schemas/train-manifest.js";
import { floatJson } from "../../util/float-json.js";
import { makeParent } from "./row-writer.js";

const SOURCES = "\u0000sources\u0000";
const GROUPS = "\u0000groups\u0000";

class SideList {
  count = 0;
  private constructor(
    readonly file: string,
    private readonly handle: fs.FileHandle,
    private readonly indent: string,
  ) {}

  static async open(file: string, indent: string): Promise<SideList> {
    return new SideList(file, await fs.open(file, "w"), indent);
  }

  async add(value: unknown): Promise<void> {
    const text = floatJson(value, { indent: 2, sortKeys: true, depth: this.indent.length / 2 });
    await this.handle.write(`${this.count === 0 ? "" : ",\n"}${this.indent}${text}`);
    this.count++;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

export class ManifestSink {
  /** Kept in memory only when the caller asked for them (the library's default, not the CLI's). */
  readonly groups: ManifestGroup[] = [];
  readonly sources: string[] = [];
  private constructor(
    private readonly keep: boolean,
    private readonly file?: string,
    private readonly tmp?: string,
    private readonly side?: { sources: SideList; groups: SideList },
  ) {}

  static async open(file: string | undefined, keep: boolean): Promise<ManifestSink> {
    if (!file) return new ManifestSink(keep);
    await makeParent(file, opt("manifest"));
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString("hex")}`);
    const side = {
      sources: await SideList.open(`${tmp}.sources`, "    "),
      groups: await SideList.open(`${tmp}.groups`, "      "),
    };
    return new ManifestSink(keep, file, tmp, side);
  }

  async addSource(source: string): Promise<void> {
    if (this.keep) this.sources.push(source);
    await this.side?.sources.add(source);
  }

  async addGroup(group: ManifestGroup): Promise<void> {
    if (this.keep) this.groups.push(group);
    await this.side?.groups.add(group);
  }

  /** Writes the manifest file (atomically), the side lists spliced in where they belong. */
  async finish(manifest: Manifest): Promise<void> {
    if (!this.file || !this.tmp || !this.side) return;
    await this.side.sources.close();
    await this.side.groups.close();
    const shell = { ...manifest, sources: SOURCES } as Record<string, unknown>;
    if (manifest.training_signal) shell.training_signal = { ...manifest.training_signal, groups: GROUPS };
    // Upstream writes its manifest with indent=2 and sort_keys=True, and so do we, side lists too.
    const text = `${floatJson(shell, { indent: 2, sortKeys: true })}\n`;
    const handle = await fs.open(this.tmp, "w");
    try {
      let rest = text;
      for (const [mark, list, close] of [
        [SOURCES, this.side.sources, "  ]"],
        [GROUPS, this.side.groups, "    ]"],
      ] as const) {
        const at = rest.indexOf(JSON.stringify(mark));
        if (at === -1) continue;
        await handle.write(`${rest.slice(0, at)}[${list.count > 0 ? "\n" : ""}`);
        for await (const chunk of createReadStream(list.file)) await handle.write(chunk as Buffer);
        await handle.write(list.count > 0 ? `\n${close}` : "]");
        rest = rest.slice(at + JSON.stringify(mark).length);
      }
      await handle.write(rest);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(this.tmp, this.file);
    await this.cleanup();
  }

  async abort(): Promise<void> {
    if (!this.side) return;
    await this.side.sources.close().catch(() => undefined);
    await this.side.groups.close().catch(() => undefined);
    await this.cleanup();
    if (this.tmp) await fs.rm(this.tmp, { force: true });
  }

  private async cleanup(): Promise<void> {
    if (!this.side) return;
    await fs.rm(this.side.sources.file, { force: true });
    await fs.rm(this.side.groups.file, { force: true });
  }
}
