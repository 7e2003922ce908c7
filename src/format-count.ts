/**
 * 1234567 -> "1,234,567", as toLocaleString('en-US') prints it, without loading ICU's number
 * formatting (10-15 ms at the first call, on every CLI build that prints its summary).
 */
export function formatCount(n: number): string {
  if (!Number.isInteger(n)) return n.toLocaleString('en-US');
  const s = String(Math.abs(n));
  let out = '';
  for (let end = s.length; end > 0; end -= 3) out = s.slice(Math.max(0, end - 3), end) + (out ? ',' + out : '');
  return (n < 0 ? '-' : '') + out;
}
