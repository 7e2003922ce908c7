/**
 * Checks of option values given to the library, where TypeScript's types do not reach (a
 * JavaScript caller, options read from JSON): a value of the wrong type is a UserError of one
 * line naming the option, what it must be and what was given, before anything is opened or
 * written, not a TypeError from deep inside a build or a value taken for another.
 */
import { escapeControls, UserError } from './errors.js';

/** Checks one option's value (never undefined: an option left out takes its default). */
export type Check = (name: string, value: unknown) => void;

/** Longest rendering of a given value in a message. */
const SHOWN_CHARS = 80;

/** A value as a message shows it, on one line: strings quoted, arrays and plain objects as JSON. */
export function shown(value: unknown): string {
  const text = escapeControls(render(value));
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS - 3)}...` : text;
}

function render(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value !== 'object' || value === null) return String(value);
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return withArticle(value.constructor?.name || 'object');
  try {
    return JSON.stringify(value) ?? 'an object';
  } catch {
    return Array.isArray(value) ? 'an array' : 'an object';
  }
}

/** "a Map", "an AbortController". */
function withArticle(name: string): string {
  return `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`;
}

/** The one line for `name` given `value` that is not `what`. */
export function wrongType(name: string, what: string, value: unknown): UserError {
  return new UserError(`${name} must be ${what}, got ${shown(value)}`);
}

/** Runs each check of `checks` on the value `options` gives it, when it gives one. */
export function checkEach(options: object, checks: Readonly<Record<string, Check>>, names: Readonly<Record<string, string>> = {}): void {
  for (const [key, check] of Object.entries(checks)) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined) check(names[key] ?? key, value);
  }
}

/** An options object: a plain object (or none, for the defaults). */
export function checkOptionsObject(what: string, options: unknown): void {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) throw wrongType(`${what} options`, 'an object', options);
}

export const isBoolean: Check = (name, value) => {
  if (typeof value !== 'boolean') throw wrongType(name, 'true or false', value);
};

export const isFunction: Check = (name, value) => {
  if (typeof value !== 'function') throw wrongType(name, 'a function', value);
};

export const isString: Check = (name, value) => {
  if (typeof value !== 'string') throw wrongType(name, 'a string', value);
};

/** A number of bytes, milliseconds, ...: 0 or more (not NaN). */
export const isNonNegativeNumber: Check = (name, value) => {
  if (typeof value !== 'number' || !(value >= 0)) throw wrongType(name, 'a number, 0 or more', value);
};

/** A count whose range the option's own code applies. */
export const isInteger: Check = (name, value) => {
  if (!Number.isInteger(value)) throw wrongType(name, 'an integer', value);
};

/** An integer from `min` to `max`. */
export function integerFrom(min: number, max: number): Check {
  return (name, value) => {
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) throw wrongType(name, `an integer from ${min} to ${max}`, value);
  };
}

/** One of `choices`: "a, b or c" as the message lists them. */
export function oneOf(choices: readonly string[]): Check {
  const listed = choices.length > 1 ? `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}` : choices.join('');
  return (name, value) => {
    if (typeof value !== 'string' || !choices.includes(value)) throw wrongType(name, listed, value);
  };
}

/** An AbortSignal (any object shaped as one: a polyfill's too). */
export const isAbortSignal: Check = (name, value) => {
  const s = value as AbortSignal | null;
  if (typeof s !== 'object' || s === null || typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function') throw wrongType(name, 'an AbortSignal', value);
};
