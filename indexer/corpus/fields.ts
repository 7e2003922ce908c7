/** Turns a parsed JSON value into a document, by the configured field names (--fields). */
import { invalidUtf8Warning, removeReplacements } from './decode.js';
import { CorpusError, DEFAULT_FIELDS, type CorpusOptions, type FieldNames } from './types.js';

export type ResolvedFields = Readonly<Required<FieldNames>>;

/** The field lists with defaults filled in; an empty or non-string list is a user error. */
export function resolveFields(options: CorpusOptions = {}): ResolvedFields {
  const f = options.fields ?? {};
  const pick = (key: keyof FieldNames): string[] => {
    const v = f[key];
    if (v === undefined) return DEFAULT_FIELDS[key];
    if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'string' || x === '')) {
      throw new CorpusError(`--fields: ${key} needs one or more field names`);
    }
    return v;
  };
  return { id: pick('id'), title: pick('title'), text: pick('text') };
}

/** A string; a number (ids, and numbers in text); an array of those, joined with spaces. */
function asText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (Array.isArray(v)) {
    let out: string | undefined;
    for (const x of v) {
      const s = typeof x === 'string' ? x : typeof x === 'number' && Number.isFinite(x) ? String(x) : undefined;
      if (s !== undefined) out = out === undefined ? s : out + ' ' + s;
    }
    return out;
  }
  return undefined;
}

const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/** idIsFallback: externalId is fallbackId (no id field). */
export type FieldResult = { externalId: string; title: string; text: string; warning?: string; idIsFallback?: true } | { reason: string };

/**
 * `fallbackId` is used when no id field is present. With `repair`, U+FFFD (what the decoder
 * put for invalid UTF-8) is removed from title and text and reported as a warning.
 */
export function documentFromJson(value: unknown, fallbackId: string, fields: ResolvedFields, repair: boolean): FieldResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { reason: `not a JSON object (${kindOf(value)})` };
  const o = value as Record<string, unknown>;
  let externalId: string | undefined;
  for (const f of fields.id) {
    const v = Object.hasOwn(o, f) ? o[f] : undefined;
    if ((typeof v === 'string' && v !== '') || (typeof v === 'number' && Number.isFinite(v))) {
      externalId = String(v);
      break;
    }
  }
  const idIsFallback = externalId === undefined;
  externalId ??= fallbackId;
  let title = '';
  for (const f of fields.title) {
    const v = Object.hasOwn(o, f) ? asText(o[f]) : undefined;
    if (v !== undefined) {
      title = v;
      break;
    }
  }
  let text: string | undefined;
  for (const f of fields.text) {
    const v = Object.hasOwn(o, f) ? asText(o[f]) : undefined;
    if (v !== undefined) text = text === undefined ? v : text + '\n' + v;
  }
  if (text === undefined) return { reason: `no text field (tried ${fields.text.join(', ')})` };
  const id = idIsFallback ? { externalId, idIsFallback: true as const } : { externalId };
  if (!repair) return { ...id, title, text };
  const t = removeReplacements(text);
  const h = removeReplacements(title);
  const removed = t.removed + h.removed;
  return removed === 0 ? { ...id, title, text } : { ...id, title: h.text, text: t.text, warning: invalidUtf8Warning(removed) };
}
