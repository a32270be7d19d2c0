import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { tmp } from "../jobs-dir/testing/tmp.js";
import { resolveRaw } from "./raw.js";

describe("resolveRaw", () => {
  const root = tmp("bf-raw-");
  const out = tmp("bf-raw-out-");
  fs.mkdirSync(path.join(root, "a", "b"), { recursive: true });
  fs.writeFileSync(path.join(root, "a", "b", "f.txt"), "x");
  fs.writeFileSync(path.join(out, "s.txt"), "secret");
  fs.symlinkSync(path.join(out, "s.txt"), path.join(root, "a", "out.txt"));
  fs.symlinkSync("../../a/b/f.txt", path.join(root, "a", "b", "in.txt"));
  fs.symlinkSync(out, path.join(root, "a", "outdir"));

  it("finds a file inside, and a link that stays inside", async () => {
    assert.equal(
      await resolveRaw(root, ["a", "b", "f.txt"]),
      fs.realpathSync(path.join(root, "a", "b", "f.txt")),
    );
    assert.equal(
      await resolveRaw(root, ["a", "b", "in.txt"]),
      fs.realpathSync(path.join(root, "a", "b", "f.txt")),
    );
  });

  it("refuses .., encoded separators, absolute paths, folders and links that lead out", async () => {
    for (const segs of [
      ["..", "x"],
      ["a", "..", "..", "etc", "passwd"],
      ["%2e%2e", "etc"],
      ["a%2F..%2F..%2Fetc"],
      ["", "etc", "passwd"],
      ["%2Fetc%2Fpasswd"],
      ["a", "out.txt"],
      ["a", "outdir", "s.txt"],
      ["a", "b"],
      ["a", "%00"],
      ["%E0%A4%A"],
    ])
      assert.equal(await resolveRaw(root, segs), null, segs.join("/"));
  });
});
