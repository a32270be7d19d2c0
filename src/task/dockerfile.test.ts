import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseDockerfile, readDockerfile } from "./dockerfile.js";
import { removeRoot, tempRoot, writeTask } from "./testing/task-dir.js";

// biome-ignore-start lint/suspicious/noTemplateCurlyInString: these are Dockerfile variables, not JavaScript ones
const SUBSTITUTION_DOCKERFILE = [
  "ARG BASE=debian:bookworm-slim",
  "FROM $BASE",
  "ARG DIR=data",
  "ARG NAME",
  'ENV GREETING="hello world" TARGET=/opt/${DIR} EMPTY=',
  "ENV LEGACY some value here",
  "ENV PATH=/opt/bin:$PATH",
  "ENV FALLBACK=${UNSET:-dflt} ALT=${GREETING:+set}",
  "WORKDIR $TARGET",
  "COPY ${DIR}/a.csv $TARGET/",
  "ENV LITERAL='$NOT_EXPANDED' ESCAPED=\\$HOME",
].join("\n");
// biome-ignore-end lint/suspicious/noTemplateCurlyInString: see above

describe("parseDockerfile", () => {
  let root: string;
  let ctx: string;
  const parse = (text: string) => parseDockerfile(text, { path: "env/Dockerfile", contextDir: ctx });
  const src = (rel: string) => path.join(ctx, rel);

  before(async () => {
    root = await tempRoot();
    ctx = await writeTask(root, "environment", {
      "data/a.csv": "1",
      "data/b.csv": "2",
      "data/notes.txt": "n",
      "my file.txt": "spaces",
      "config.ini": "c",
      "bundle.tar.gz": "x",
    });
  });
  after(() => removeRoot(root));

  it("reads the base image, WORKDIR chains, USER and COPY relative to the workdir", () => {
    const { spec, problems, warnings } = parse(
      "FROM debian:bookworm-slim\nWORKDIR /app\nWORKDIR sub\nCOPY config.ini .\nCOPY data/a.csv in.csv\nUSER agent\n",
    );
    assert.deepEqual([problems, warnings], [[], []]);
    assert.equal(spec.baseImage, "debian:bookworm-slim");
    assert.equal(spec.workdir, "/app/sub");
    assert.equal(spec.user, "agent");
    assert.deepEqual(spec.copies, [
      { sources: [src("config.ini")], dest: "/app/sub/", line: 4 },
      { sources: [src("data/a.csv")], dest: "/app/sub/in.csv", line: 5 },
    ]);
  });

  it("handles the JSON form, several sources, globs and --chown", () => {
    const { spec, problems } = parse(
      'FROM x\nCOPY ["my file.txt", "/srv/a b/"]\nCOPY --chown=1000:1000 config.ini data/a.csv /etc/app/\nADD data/*.csv /in/\n',
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(
      spec.copies.map((c) => [c.sources, c.dest]),
      [
        [[src("my file.txt")], "/srv/a b/"],
        [[src("config.ini"), src("data/a.csv")], "/etc/app/"],
        [[src("data/a.csv"), src("data/b.csv")], "/in/"],
      ],
    );
  });

  it("parses ENV in both forms and substitutes ARG and ENV values", () => {
    const { spec, problems } = parse(SUBSTITUTION_DOCKERFILE);
    assert.deepEqual(problems, []);
    assert.equal(spec.baseImage, "debian:bookworm-slim");
    assert.deepEqual(spec.env, {
      GREETING: "hello world",
      TARGET: "/opt/data",
      EMPTY: "",
      LEGACY: "some value here",
      PATH: "/opt/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      FALLBACK: "dflt",
      ALT: "set",
      LITERAL: "$NOT_EXPANDED",
      ESCAPED: "$HOME",
    });
    assert.equal(spec.workdir, "/opt/data");
    assert.deepEqual(spec.copies[0], { sources: [src("data/a.csv")], dest: "/opt/data/", line: 10 });
  });

  it("collects RUN steps across continuations, comments and heredocs", () => {
    const { spec, problems } = parse(
      [
        "# a comment",
        "FROM x",
        "RUN apt-get update && \\",
        "    # a comment inside the continuation",
        "    apt-get install -y curl",
        "RUN <<EOF",
        "echo one",
        "FROM not-an-instruction",
        "EOF",
        "ENV AFTER=heredoc",
        "",
        "RUN echo last",
      ].join("\n"),
    );
    assert.deepEqual(problems, []);
    assert.equal(spec.runSteps.length, 3);
    assert.match(spec.runSteps[0] ?? "", /apt-get update &&\s+apt-get install -y curl/);
    assert.match(spec.runSteps[1] ?? "", /echo one\nFROM not-an-instruction/);
    assert.equal(spec.baseImage, "x");
    assert.deepEqual(spec.env, { AFTER: "heredoc" });
  });

  it("keeps only the final stage of a multi-stage build and skips COPY --from", () => {
    const { spec, warnings, problems } = parse(
      "FROM golang:1.22 AS build\nENV BUILD=1\nCOPY config.ini /src/\nFROM build AS mid\nENV MID=1\nFROM debian:bookworm-slim\nCOPY --from=build /out/bin /usr/local/bin/\n",
    );
    assert.deepEqual(problems, []);
    assert.equal(spec.baseImage, "debian:bookworm-slim");
    assert.deepEqual(spec.env, {});
    assert.deepEqual(spec.copies, []);
    assert.deepEqual(warnings, [
      "env/Dockerfile:7: COPY --from=build needs an image build; the namespace sandbox skips it",
    ]);
    const inherited = parse("FROM golang AS build\nENV BUILD=1\nFROM build\nENV MORE=2\n").spec;
    assert.deepEqual([inherited.baseImage, inherited.env], ["golang", { BUILD: "1", MORE: "2" }]);
  });

  it("warns about what only an image build can do: URLs, heredoc files, archives", () => {
    const { warnings, problems, spec } = parse(
      "FROM x\nADD https://example.com/f.tgz /tmp/\nCOPY <<EOF /etc/motd\nhi\nEOF\nADD bundle.tar.gz /opt/\n",
    );
    assert.deepEqual(problems, []);
    assert.equal(spec.copies.length, 1);
    assert.equal(warnings.length, 3);
    assert.ok(warnings[0]?.includes(":2: ADD from a URL"));
    assert.ok(warnings[1]?.includes(":3: COPY from a heredoc"));
    assert.ok(warnings[2]?.includes(":6: ADD unpacks archives"));
  });

  it("reports what would break a build, with the line", () => {
    const { problems } = parse(
      "ENV EARLY=1\nFROM x\nCOPY missing.txt /app/\nCOPY ../secret /app/\nCOPY data/a.csv data/b.csv /app\nFROBNICATE now\nCOPY data/*.png /img/\n",
    );
    assert.deepEqual(problems, [
      "env/Dockerfile:1: ENV comes before FROM; start the Dockerfile with FROM <image>",
      `env/Dockerfile:3: COPY source missing.txt does not exist in ${ctx}; add it or fix the path`,
      "env/Dockerfile:4: COPY source ../secret is outside environment/; keep sources inside the build context",
      "env/Dockerfile:5: COPY with several sources needs a destination folder ending in /",
      "env/Dockerfile:6: unknown Dockerfile instruction FROBNICATE",
      `env/Dockerfile:7: COPY source data/*.png does not exist in ${ctx}; add it or fix the path`,
    ]);
    assert.deepEqual(parse("# only a comment\n").problems, [
      "env/Dockerfile: has no FROM line; start it with FROM <image>, e.g. FROM debian:bookworm-slim",
    ]);
  });

  it("honours the escape parser directive", () => {
    const { spec, problems } = parse("# escape=`\nFROM x\nRUN echo a `\n  b\nWORKDIR C:\\app\n");
    assert.deepEqual(problems, []);
    assert.match(spec.runSteps[0] ?? "", /^echo a\s+b$/);
    assert.equal(spec.workdir, "/C:\\app");
  });

  it("returns null from readDockerfile when environment/ has no Dockerfile", async () => {
    assert.equal(await readDockerfile(ctx), null);
    assert.equal(await readDockerfile(path.join(root, "nowhere")), null);
  });
});
