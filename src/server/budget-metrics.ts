/**
 * @module Prometheus families for the budgets (store/budget.ts, store/history-budget.ts):
 * retained points, accounted history bytes and budget, GETs waiting for pending room, and
 * refusals by reason. Read from memory on each scrape: nothing here walks history.
 */
import type { Repository } from '../store/repository.js';
import { family } from './metrics.js';

/** The budget families of `repo`, as text lines (metrics.ts collect). */
export function budgetMetrics(repo: Repository): string[] {
  const h = repo.state.history;
  const refusals = 'strata_budget_refusals_total';
  return [
    ...family('strata_history_points', 'gauge', 'Retained points: version-log entries of every bucket (forks count their own).', h.points),
    ...family('strata_history_bytes', 'gauge', 'Accounted history bytes (version-log keys and entries of every bucket).', h.bytes),
    ...family('strata_history_budget_bytes', 'gauge', 'History budget: accounted history bytes allowed.', h.limit === Infinity ? -1 : h.limit),
    ...family('strata_pending_waiting', 'gauge', 'GETs waiting for room in the pending budget (refused with 503 SlowDown when their wait runs out).', repo.budget.waiting),
    `# HELP ${refusals} Requests refused by a budget (writes; GETs by the pending budget), by reason (pending: 503 SlowDown; history: 403 QuotaExceeded).`,
    `# TYPE ${refusals} counter`,
    `${refusals}{reason="pending"} ${repo.budget.refusals}`,
    `${refusals}{reason="history"} ${h.refusals.history}`,
  ];
}
