// The task's storage limit as a disk of the sandbox's own: a sparse image file next to the scratch
// tree, formatted ext4 and loop-mounted over fs/ (host root only; tmpfs would charge RAM). The image
// holds the agent's share (storage_mb) plus room for the verifier that only root may use: ext4's
// reserved blocks, which the kernel grants to fsuid 0 (the verifier) and refuses to the agent's uid
// (and to a root agent, host uid 1000 inside its own user namespace). So a rollout that fills its disk
// still leaves the verifier room to write its reward, with nothing to grow at verify time (online
// resize2fs needs CAP_SYS_RESOURCE, which hosts such as this project's CI do not give root).
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { findExecutable } from "./host.js";

const run = promisify(execFile);

const BLOCK = 4096;
const TOOL_ENV = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };
/**
 * No journal (scratch data need not survive a crash), no room to grow offline (resize_inode), no
 * inode-table zeroing: nothing is written but what the sandbox writes, so the sparse image costs
 * the host only what is used. One inode per 32 KiB (half mkfs's default, still ~330k for 10 GiB)
 * halves the format time.
 */
const MKFS_OPTIONS = "-q -F -b 4096 -O ^has_journal,^resize_inode -i 32768 -E lazy_itable_init=1,nodiscard";

/** Formatted once per size below the scratch parent, then copied (sparse) for each sandbox. */
export const TEMPLATES_DIR = ".disk-templates";
const templates = new Map<string, Promise<string>>();

/**
 * The agent's share in blocks, plus what ext4 itself holds back from everyone for its metadata
 * (2% of the blocks, at most 4096 clusters: the kernel's ext4_calculate_resv_clusters), so the
 * agent can write storage_mb itself.
 */
function agentShare(storageMb: number, blocks: number): number {
  return storageMb * ((1024 * 1024) / BLOCK) + Math.min(Math.floor(blocks / 50), 4096);
}

export const IMAGE_FILE = "disk.img";

export interface ScratchDisk {
  image: string;
  mountpoint: string;
  /** The agent's share in MB (what it can fill before ENOSPC). */
  agentMb: number;
  verifierMb: number;
}

/** The verifier's reserve: up to 1 GiB, at most half the agent's share (ext4 caps it at 50%). */
export function verifierRoomMb(storageMb: number): number {
  return Math.max(1, Math.min(1024, Math.floor(storageMb / 2)));
}

/** Why a disk cannot be made here, or null. */
export async function diskUnavailableReason(): Promise<string | null> {
  if (process.getuid?.() !== 0) return "a loop-mounted disk needs host root";
  const missing: string[] = [];
  for (const tool of ["mkfs.ext4", "dumpe2fs", "tune2fs", "cp", "truncate", "mount", "umount"])
    if ((await findExecutable(tool)) === null) missing.push(tool);
  return missing.length === 0 ? null : `${missing.join(", ")} not found (apt-get install e2fsprogs mount)`;
}

/**
 * Formats and mounts the disk over `mountpoint` (an empty folder in `dir`). A fresh format costs
 * ~100 ms on a busy host; a sparse copy of a formatted template (~250 KB of data) a tenth of that.
 */
export async function makeScratchDisk(
  dir: string,
  mountpoint: string,
  storageMb: number,
): Promise<ScratchDisk> {
  const image = path.join(dir, IMAGE_FILE);
  const verifierMb = verifierRoomMb(storageMb);
  const template = await templateFor(path.dirname(dir), storageMb, verifierMb);
  await run(
    "/bin/sh",
    [
      "-c",
      'cp --sparse=always "$1" "$2" && mount -o loop,noinit_itable,nodev,nosuid "$2" "$3"',
      "bf-disk",
      template,
      image,
      mountpoint,
    ],
    { env: TOOL_ENV },
  );
  await fs.rmdir(path.join(mountpoint, "lost+found")).catch(() => undefined);
  return { image, mountpoint, agentMb: storageMb, verifierMb };
}

/** The formatted image for this size (made once, atomically, so concurrent runs may share it). */
function templateFor(parent: string, storageMb: number, verifierMb: number): Promise<string> {
  // ext4's own metadata takes ~1%; whatever is free beyond the agent's share is reserved for root.
  const totalMb = Math.ceil((storageMb + verifierMb) * 1.02) + 2;
  const file = path.join(parent, TEMPLATES_DIR, `ext4-${storageMb}-${totalMb}-v1.img`);
  let made = templates.get(file);
  if (made === undefined) {
    made = (async () => {
      if (
        await fs.stat(file).then(
          (st) => st.isFile(),
          () => false,
        )
      )
        return file;
      await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      const blocks = Math.floor((totalMb * 1024 * 1024) / BLOCK);
      const script = [
        "set -e",
        'rm -f "$1"; truncate -s "$2"M "$1"; chmod 600 "$1"',
        `mkfs.ext4 ${MKFS_OPTIONS} -m 0 "$1"`,
        // Every free block past the agent's share becomes root's; ext4 refuses half or more ($4).
        'free=$(dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^Free blocks: *//p")',
        'r=$((free > $3 ? free - $3 : 0)); [ "$r" -le "$4" ] || r=$4',
        'tune2fs -r "$r" "$1" >/dev/null',
      ].join("\n");
      const args = [
        tmp,
        String(totalMb),
        String(agentShare(storageMb, blocks)),
        String(Math.floor(blocks / 2) - 1),
      ];
      await run("/bin/sh", ["-c", script, "bf-template", ...args], { env: TOOL_ENV });
      await fs.rename(tmp, file);
      return file;
    })();
    made.catch(() => templates.delete(file));
    templates.set(file, made);
  }
  return made;
}

/** Whether the agent's share is spent: free blocks at or below what only root may use. */
export async function diskFull(disk: ScratchDisk): Promise<boolean> {
  const st = await fs.statfs(disk.mountpoint).catch(() => null);
  if (st === null) return false;
  return st.bavail * st.bsize < 1024 * 1024;
}

/** Unmounts (lazily if something still holds it) and lets the loop device go; safe to call twice. */
export async function removeScratchDisk(mountpoint: string): Promise<void> {
  if (!(await isMountpoint(mountpoint))) return;
  const env = TOOL_ENV;
  // mount -o loop sets autoclear: the loop device detaches with the last unmount.
  await run("umount", [mountpoint], { env }).catch(() => run("umount", ["-l", mountpoint], { env }));
}

/** The loop device backing `mountpoint`, or null (for tests and doctor output). */
export async function loopDeviceOf(mountpoint: string): Promise<string | null> {
  const info = await fs.readFile("/proc/self/mountinfo", "utf8").catch(() => "");
  for (const line of info.split("\n")) {
    const fields = line.split(" ");
    if (fields[4] !== escapeMountPath(mountpoint)) continue;
    const dash = fields.indexOf("-");
    return fields[dash + 2] ?? null;
  }
  return null;
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function escapeMountPath(p: string): string {
  return p.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`);
}

async function isMountpoint(p: string): Promise<boolean> {
  return (await loopDeviceOf(p)) !== null;
}
