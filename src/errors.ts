// Failures that end a rollout carry their outcome category, so the rollout records them without
// `instanceof` chains and a trainer can tell infrastructure from policy from task failures.
import type { OutcomeCategory } from "./schemas/outcome.js";

export class CategorizedError extends Error {
  readonly category: OutcomeCategory;
  constructor(category: OutcomeCategory, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.category = category;
    this.name = "CategorizedError";
  }
}

/** Bad input from the user (flags, task files, paths): exit 2 with one clear line. */
export class UserInputError extends Error {
  override name = "UserInputError";
}

/**
 * Input data that cannot be used: a malformed JSON line, a row count that is not the one asked
 * for. Bad input like any other (exit 2), except in `bench train convert | validate`, which exit 1
 * for it as upstream's do, keeping 2 for usage (a bad flag, a missing path).
 */
export class DataError extends UserInputError {
  override name = "DataError";
}

export function categoryOf(err: unknown, fallback: OutcomeCategory = "infra_error"): OutcomeCategory {
  return err instanceof CategorizedError ? err.category : fallback;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
