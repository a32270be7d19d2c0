// The run's circuit breaker. One rollout ending provider_error is data about the endpoint, not the
// policy; M of them in a row (no rollout with a successful model call between them) mean the
// endpoint is down, and starting more rollouts would only make more unscored rollouts. A config_error
// cannot pass by retrying at all. Either way the run starts no more rollouts, says once why, and
// leaves the rest to a resume with the same --job-name. A run's budget (max cost) stops it the same
// way once the rollouts that finished have spent it.
import type { JobSummary, RolloutResult } from "../schemas/result.js";

export type Stopped = NonNullable<JobSummary["stopped"]>;

export class RunBreaker {
  private streak = 0;
  private spentUsd = 0;
  private reason: Stopped | null = null;
  private readonly controller = new AbortController();

  constructor(
    /** Consecutive provider_error rollouts that stop the run. */
    readonly limit: number,
    private readonly endpoint: string | null,
    /** USD the run may spend (upstream's --max-cost-usd); null: no budget. */
    private readonly maxCostUsd: number | null = null,
  ) {}

  /** Aborted when the run must start no more rollouts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stopped(): Stopped | null {
    return this.reason;
  }

  /** Hears every finished attempt, in the order they finish. */
  note(result: RolloutResult): void {
    if (this.reason) return;
    const cost = result.agent_result?.cost_usd;
    if (typeof cost === "number" && Number.isFinite(cost)) this.spentUsd += cost;
    if (this.maxCostUsd !== null && this.spentUsd >= this.maxCostUsd) {
      this.trip(
        "max_cost_usd",
        `the run has spent $${this.spentUsd.toFixed(4)}, at or over its budget of $${this.maxCostUsd}`,
      );
      return;
    }
    const category = result.error_category;
    if (category === "config_error") {
      this.trip("config_error", result.error ?? "the endpoint refused the configuration");
      return;
    }
    if (category === "provider_error") {
      this.streak++;
      if (this.streak >= this.limit) {
        const where = this.endpoint ? ` at ${this.endpoint}` : "";
        this.trip(
          "endpoint_failing",
          `the policy endpoint${where} failed ${this.streak} rollouts in a row (the last rollout: ${result.error ?? "?"})`,
        );
      }
      return;
    }
    // Only a rollout that reached the endpoint and got an answer shows the endpoint is back.
    const calls = numberOf(result.n_model_calls);
    const failed = numberOf(result.n_failed_model_calls);
    if (calls > failed) this.streak = 0;
  }

  private trip(reason: Stopped["reason"], message: string): void {
    this.reason = { reason, message };
    this.controller.abort(new Error(message));
  }
}

function numberOf(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}
