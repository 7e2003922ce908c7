/**
 * Runs `fn` with environment variable `name` as it finds it, then puts the variable back as it
 * was (set to its old value, or unset), whether `fn` returns, throws or rejects. Inside, `set`
 * changes it (undefined: unset).
 */
export async function withEnv<T>(name: string, fn: (set: (value: string | undefined) => void) => T | Promise<T>): Promise<T> {
  const saved = process.env[name];
  const set = (value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  try {
    return await fn(set);
  } finally {
    set(saved);
  }
}
