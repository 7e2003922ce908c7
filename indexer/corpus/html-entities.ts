/**
 * Entities in HTML text, decoded as htmlparser2's Tokenizer decodes them: by the `entities`
 * package's decoder, with the HTML named-entity table and its rules for a missing ';' (legacy
 * mode). Required on first use, so that a crawl without HTML (and every parse worker's start-up)
 * skips loading its tables.
 */
import { createRequire } from 'node:module';
import type { EntityDecoder } from 'entities/decode';

const require = createRequire(import.meta.url);

let decoded = '';
let entityDecoder: EntityDecoder | undefined;
/** DecodingMode.Legacy: text, where a named entity may end without ';'. */
let legacyMode = 0;

function decoder(): EntityDecoder {
  if (entityDecoder === undefined) {
    const entities = require('entities/decode') as typeof import('entities/decode');
    legacyMode = entities.DecodingMode.Legacy;
    entityDecoder = new entities.EntityDecoder(entities.htmlDecodeTree, (cp) => {
      decoded += String.fromCodePoint(cp);
    });
  }
  return entityDecoder;
}

/**
 * The entity at html[amp] ('&'), decoded as text: the characters it takes ('&' included), its
 * text then in entityText(); or 0 where it is none (the '&' is text). The end of `html` ends it,
 * as the Tokenizer's does at the end of its input.
 */
export function decodeEntity(html: string, amp: number): number {
  decoded = '';
  if (amp + 1 >= html.length) return 0;
  const d = decoder();
  d.startEntity(legacyMode);
  const taken = d.write(html, amp + 1);
  return taken >= 0 ? taken : d.end();
}

/** The text of the entity decodeEntity last took. */
export function entityText(): string {
  return decoded;
}
