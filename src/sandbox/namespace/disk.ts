// The task's storage limit as a disk of the sandbox's own: a sparse image file next to the scratch
// tree, formatted ext4 and loop-mounted over fs/ (host root only; tmpfs would charge RAM). The image
// holds the agent's share (storage_mb) plus room for the verifier that only root may use: ext4's
// reserved blocks, which the kernel grants to fsuid 0 (the verifier) and refuses to the agent's uid
// (and to a root agent, host uid 1000 inside its own user namespace). So a trial that fills its disk
// still leaves the verifier room to write its reward, with nothing to grow at verify time (online
// resize2fs needs CAP_SYS_RESOURCE, which hosts such as this project's CI do not give root).
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { findExecutable } from "./host.js";

const run = promisify(execFile);

const BLOCK = 4096;
/**
 * No journal (scratch data need not survive a crash), no room to grow offline (resize_inode), no
 * inode-table zeroing: nothing is written but what the sandbox writes, so the sparse image costs
 * the host only what is used. One inode per 32 KiB (half mkfs's default, still ~330k for 10 GiB)
 * halves the format time.
 */
const MKFS_OPTIONS = "-q -F -b 4096 -O ^has_journal,^resize_inode -i 32768 -E lazy_itable_init=1,nodiscard";

/** Free blocks of a fresh filesystem, per image size in MB (the same options give the same figure). */
const freeBlocks = new Map<number, number>();

/** Root's reserve in blocks when this size was formatted before, else null (then it is measured). */
function reservedBlocks(totalMb: number, storageMb: number, blocks: number): number | null {
  const free = freeBlocks.get(totalMb);
  if (free === undefined) return null;
  return Math.max(0, Math.min(Math.floor(blocks / 2) - 1, free - agentShare(storageMb, blocks)));
}

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
  for (const tool of ["mkfs.ext4", "dumpe2fs", "tune2fs", "mount", "umount"])
    if ((await findExecutable(tool)) === null) missing.push(tool);
  return missing.length === 0 ? null : `${missing.join(", ")} not found (apt-get install e2fsprogs mount)`;
}

/** Formats and mounts the disk over `mountpoint` (an empty folder). */
export async function makeScratchDisk(
  dir: string,
  mountpoint: string,
  storageMb: number,
): Promise<ScratchDisk> {
  const image = path.join(dir, IMAGE_FILE);
  const verifierMb = verifierRoomMb(storageMb);
  // ext4's own metadata takes ~1%; whatever is free beyond the agent's share is reserved for root.
  const totalMb = Math.ceil((storageMb + verifierMb) * 1.02) + 2;
  const env = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };
  const handle = await fs.open(image, "wx", 0o600);
  try {
    await handle.truncate(totalMb * 1024 * 1024);
  } finally {
    await handle.close();
  }
  const blocks = Math.floor((totalMb * 1024 * 1024) / BLOCK);
  const maxReserve = Math.floor(blocks / 2) - 1;
  const reserve = reservedBlocks(totalMb, storageMb, blocks);
  // mkfs reserves floor(blocks * percent / 100): a percent a hair above the exact figure gives it.
  const percent = reserve === null ? "0" : (((reserve + 0.5) * 100) / blocks).toFixed(8);
  const script = [
    "set -e",
    `mkfs.ext4 ${MKFS_OPTIONS} -m "$1" "$2"`,
    // Learnt once per size: every free block past the agent's share becomes root's.
    'if [ -n "$4" ]; then',
    '  free=$(dumpe2fs -h "$2" 2>/dev/null | sed -n "s/^Free blocks: *//p")',
    '  echo "free=$free"',
    // ext4 refuses a reserve of half the blocks or more (tiny disks): capped at $5.
    '  r=$((free > $4 ? free - $4 : 0)); [ "$r" -le "$5" ] || r=$5',
    '  tune2fs -r "$r" "$2" >/dev/null',
    "fi",
    'mount -o loop,noinit_itable,nodev,nosuid "$2" "$3"',
  ].join("\n");
  const agentBlocks = reserve === null ? String(agentShare(storageMb, blocks)) : "";
  const out = await run(
    "/bin/sh",
    ["-c", script, "bf-disk", percent, image, mountpoint, agentBlocks, String(maxReserve)],
    {
      env,
    },
  );
  const free = Number(/^free=(\d+)$/m.exec(out.stdout)?.[1]);
  if (reserve === null && Number.isInteger(free)) freeBlocks.set(totalMb, free);
  await fs.rmdir(path.join(mountpoint, "lost+found")).catch(() => undefined);
  return { image, mountpoint, agentMb: storageMb, verifierMb };
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
  const env = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };
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
