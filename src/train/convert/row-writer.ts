// Rows go to a temporary file beside the output and replace it only when the whole conversion
// succeeded, so a failed run never leaves half a file or clobbers the last good one.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../../errors.js";
import { opt } from "../../options.js";
import { floatJson } from "../../util/float-json.js";
import { MakeDirsError, makeDirs } from "../../util/make-dirs.js";

const FLUSH_AT = 1 << 20;

export class RowWriter {
  private chunks: string[] = [];
  private size = 0;
  private constructor(
    private readonly file: string,
    private readonly tmp: string,
    private readonly handle: fs.FileHandle,
  ) {}

  static async open(file: string, option = opt("out")): Promise<RowWriter> {
    await makeParent(file, option);
    const tmp = path.join(
      path.dirname(file),
      `.${path.basename(file)}.${randomBytes(4).toString("hex")}.tmp`,
    );
    return new RowWriter(file, tmp, await fs.open(tmp, "w"));
  }

  async write(row: unknown): Promise<void> {
    const line = `${floatJson(row)}\n`;
    this.chunks.push(line);
    this.size += line.length;
    if (this.size >= FLUSH_AT) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.chunks.length === 0) return;
    const text = this.chunks.join("");
    this.chunks = [];
    this.size = 0;
    await this.handle.write(text);
  }

  async commit(): Promise<void> {
    await this.flush();
    await this.handle.sync();
    await this.handle.close();
    await fs.rename(this.tmp, this.file);
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await fs.rm(this.tmp, { force: true });
  }
}

/** The output's folder, made as `mkdir -p` would; a path that cannot hold it is bad input. */
export async function makeParent(file: string, option: string): Promise<void> {
  try {
    await makeDirs(path.dirname(file));
  } catch (err) {
    if (!(err instanceof MakeDirsError)) throw err;
    throw new UserInputError(
      `${option} ${file}: ${err.message}; write it somewhere else, for example train/rows.jsonl`,
    );
  }
}
