// `bench train`: one file per command; each parses its flags, calls src/train and prints.
import type { Command } from "commander";
import { withHelp } from "../help.js";
import { TRAIN_HELP } from "../help-pages.js";
import { registerConvert } from "./convert.js";
import { registerRunSft } from "./run-sft.js";
import { registerStream } from "./stream.js";
import { registerTokenCoverage } from "./token-coverage.js";
import { registerValidate } from "./validate.js";

export function registerTrainCommands(program: Command): Command {
  const train = program
    .command("train")
    .description("Turn rollouts into training data: rows with group advantages, a live stream, checks");
  withHelp(train, TRAIN_HELP);
  registerConvert(train);
  registerStream(train);
  registerValidate(train);
  registerTokenCoverage(train);
  registerRunSft(train);
  return train;
}
