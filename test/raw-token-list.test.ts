import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RawTokenList } from '../indexer/scan/raw-token-list.js';
import { tokenStrings } from './helpers/raw-tokens.js';

describe('RawTokenList: raw tokens as bytes', () => {
  it('keeps tokens pushed as strings and as runs of bytes, in order, through growth, take() and append()', () => {
    const token = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('café', '東京', 'x'.repeat(5000), '\u{1F600}'));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.array(token, { minLength: 1, maxLength: 20 }), fc.boolean()), { maxLength: 8 }), (groups) => {
        const sender = new RawTokenList();
        const receiver = new RawTokenList();
        const all: string[] = [];
        for (const [tokens, asRun] of groups) {
          if (asRun) {
            const bytes = tokens.map((t) => Buffer.from(t, 'utf8'));
            const run = Buffer.concat([Buffer.from('prefix'), ...bytes]);
            sender.pushRun(run, 6, bytes.map((b) => b.length));
          } else for (const t of tokens) sender.pushString(t);
          all.push(...tokens);
          const taken = sender.take();
          expect(tokenStrings(taken)).toEqual(tokens);
          expect(sender.count).toBe(0);
          receiver.append(taken);
        }
        expect(receiver.count).toBe(all.length);
        expect(all.map((_, i) => receiver.string(i))).toEqual(all);
        all.forEach((t, i) => expect(receiver.bytes.toString('utf8', receiver.start(i), receiver.end(i))).toBe(t));
      }),
      { numRuns: 300 },
    );
  });
});
