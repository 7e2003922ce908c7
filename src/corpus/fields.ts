/** Turns a parsed JSON value into a document, by the configured field names. */
import { DEFAULT_FIELDS, type CorpusOptions, type SourceDocument } from './types.js';

function asText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) {
    const parts = v.filter((x) => typeof x === 'string' || typeof x === 'number') as (string | number)[];
    return parts.length ? parts.join(' ') : undefined;
  }
  return undefined;
}

export type FieldResult = { doc: Omit<SourceDocument, 'path' | 'line' | 'bytes'> } | { reason: string };

/** `fallbackId` is used when no id field is present. */
export function documentFromJson(value: unknown, fallbackId: string, options: CorpusOptions): FieldResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { reason: `not a JSON object (${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value})` };
  const o = value as Record<string, unknown>;
  const idFields = options.fields?.id ?? DEFAULT_FIELDS.id;
  const titleFields = options.fields?.title ?? DEFAULT_FIELDS.title;
  const textFields = options.fields?.text ?? DEFAULT_FIELDS.text;
  let externalId = fallbackId;
  for (const f of idFields) {
    const v = o[f];
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') {
      externalId = String(v);
      break;
    }
  }
  let title = '';
  for (const f of titleFields) {
    const v = asText(o[f]);
    if (v !== undefined) {
      title = v;
      break;
    }
  }
  const texts: string[] = [];
  for (const f of textFields) {
    const v = asText(o[f]);
    if (v !== undefined) texts.push(v);
  }
  if (texts.length === 0) return { reason: `no text field (tried ${textFields.join(', ')})` };
  return { doc: { externalId, title, text: texts.length === 1 ? texts[0]! : texts.join('\n') } };
}
