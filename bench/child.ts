// A measurement in a process of its own (a fresh heap, its own RSS): `node --import tsx FILE --child
// MODE ...ARGS`, whose one line of stdout is its JSON report.
import { spawn } from "node:child_process";

export function reportFromChild<T>(file: string, args: string[], nodeFlags: string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...nodeFlags, "--import", "tsx", file, "--child", ...args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let text = "";
    p.stdout.on("data", (d: Buffer) => {
      text += d.toString();
    });
    p.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(text) as T) : reject(new Error(`${args[0]} exited ${code}`)),
    );
  });
}
