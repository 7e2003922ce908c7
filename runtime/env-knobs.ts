/**
 * Benchmark knobs read from the environment (GPUINDEX_CREDITS, GPUINDEX_TASKS_AHEAD,
 * GPUINDEX_WORKER_NICE): not options, so they stay out of the documented API, but a bad value
 * is still a user error with a one-line message.
 */
import { UserError } from '../src/shared/errors.js';

/** The integer in environment variable `name`, or undefined when unset or empty. */
export function integerFromEnv(name: string, min: number, max: number): number | undefined {
  const v = process.env[name];
  if (!v) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UserError(`${name} must be an integer from ${min} to ${max}, got ${v}`);
  return n;
}
