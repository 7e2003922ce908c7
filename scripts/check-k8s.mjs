#!/usr/bin/env node
// Offline check of deploy/kubernetes (no cluster, no dependency):
//  1. parses each manifest with a strict YAML subset reader (block maps and lists, flow lists
//     and maps of scalars, quoted and plain scalars, | and > block scalars; anchors, tags,
//     duplicate keys and YAML 1.1-ambiguous plain scalars such as `yes` or `0755` are errors);
//  2. every key against the Kubernetes fields these manifests may use (a typo is an error),
//     and the types that the API server would refuse (env values must be strings, counts
//     integers);
//  3. what the recipe relies on: batch/v1 Jobs; the build Job Indexed, with completions N,
//     1 <= parallelism <= N, env JOB_COMPLETIONS = "N", `gpuindex build /data/crawl -o
//     /data/out/shards/shard-<JOB_COMPLETION_INDEX> --shard auto`; the join Job joining,
//     optionally optimizing and verifying /data/out/index, with SHARDS = "N"; both mounting the
//     PersistentVolumeClaim gpuindex-data at /data, same image; restartPolicy Never/OnFailure;
//     an optional nvidia.com/gpu limit of 1; the PVC ReadWriteMany; the Dockerfile's base, npm ci
//     and `gpuindex` on PATH; the `kubectl wait ... job/<build Job>` line in join.yaml.
// Where they exist it also compares its reading with python3's yaml module and with kubectl's
// typed decoding, for the Jobs (`kubectl set env --local`, no server, adding a variable: a field
// kubectl does not know is dropped, a wrong type refused). Exit 1 with one line per problem.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'deploy', 'kubernetes');
const problems = [];
const notes = [];
const problem = (file, msg) => problems.push(`${file}: ${msg}`);

// ---------------------------------------------------------------- YAML subset reader
class YamlError extends Error {}

function parseYamlDocuments(text) {
  const raw = text.replace(/\r\n/g, '\n').split('\n');
  const docs = [];
  let start = 0;
  for (let i = 0; i <= raw.length; i++) {
    if (i === raw.length || /^---\s*(#.*)?$/.test(raw[i])) {
      const part = raw.slice(start, i);
      if (part.some((l) => stripComment(l).trim() !== '')) docs.push(parseDocument(part, start));
      start = i + 1;
    } else if (/^\.\.\.\s*$/.test(raw[i]) || /^%/.test(raw[i])) throw new YamlError(`line ${i + 1}: directives and '...' are not supported`);
  }
  return docs;
}

function stripComment(line) {
  let quote = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (quote === '"' && c === '\\') i++;
      else if (c === quote) {
        if (quote === "'" && line[i + 1] === "'") i++;
        else quote = null;
      }
    } else if ((c === '"' || c === "'") && (i === 0 || /[\s[{,:-]/.test(line[i - 1]))) quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

function parseDocument(lines, offset) {
  const L = lines.slice();
  let pos = 0;
  const err = (msg, at = pos) => new YamlError(`line ${offset + at + 1}: ${msg}`);
  const indentOf = (l) => l.length - l.trimStart().length;
  const skip = () => {
    while (pos < L.length && stripComment(L[pos]).trim() === '') pos++;
  };
  const isItem = (t) => t === '-' || t.startsWith('- ');

  function block(ind) {
    skip();
    if (pos >= L.length) return null;
    const t = stripComment(L[pos]).trim();
    if (/^\t/.test(L[pos].slice(indentOf(L[pos])))) throw err('tab in indentation');
    return isItem(t) ? seq(ind) : map(ind);
  }

  function seq(ind) {
    const out = [];
    for (;;) {
      skip();
      if (pos >= L.length) return out;
      const line = stripComment(L[pos]);
      const i = indentOf(line);
      if (i < ind) return out;
      if (i > ind) throw err('unexpected indentation');
      const t = line.trim();
      if (!isItem(t)) return out;
      const rest = t === '-' ? '' : t.slice(2);
      const restTrim = rest.trimStart();
      const col = ind + 2 + (rest.length - restTrim.length);
      if (restTrim === '') {
        pos++;
        skip();
        if (pos < L.length && indentOf(L[pos]) > ind) out.push(block(indentOf(L[pos])));
        else out.push(null);
      } else if (isItem(restTrim)) {
        L[pos] = ' '.repeat(col) + restTrim; // a list in a list: "- - a"
        out.push(seq(col));
      } else if (keyOf(restTrim)) {
        L[pos] = ' '.repeat(col) + restTrim; // the item is a map starting on this line
        out.push(map(col));
      } else {
        out.push(inlineValue(restTrim, ind));
      }
    }
  }

  function keyOf(t) {
    let m = /^"((?:[^"\\]|\\.)*)"\s*:(\s|$)/.exec(t) || /^'((?:[^']|'')*)'\s*:(\s|$)/.exec(t);
    if (m) return { key: m[0][0] === '"' ? JSON.parse(`"${m[1]}"`) : m[1].replace(/''/g, "'"), rest: t.slice(m[0].length).trim() };
    if (/^[[{"'|>!&*%@`]/.test(t)) return null;
    m = /^([^#:]*?[^\s:#]|[^\s:#]):(\s|$)/.exec(t);
    return m ? { key: m[1], rest: t.slice(m[0].length).trim() } : null;
  }

  function map(ind) {
    const out = {};
    for (;;) {
      skip();
      if (pos >= L.length) return out;
      const line = stripComment(L[pos]);
      const i = indentOf(line);
      if (i < ind) return out;
      if (i > ind) throw err('unexpected indentation');
      const t = line.trim();
      if (isItem(t)) return out;
      const kv = keyOf(t);
      if (!kv) throw err(`expected "key: value", got ${JSON.stringify(t)}`);
      if (Object.prototype.hasOwnProperty.call(out, kv.key)) throw err(`duplicate key ${kv.key}`);
      if (kv.key === '<<') throw err('merge keys are not supported');
      if (kv.rest === '') {
        pos++;
        skip();
        if (pos < L.length && indentOf(L[pos]) > ind) out[kv.key] = block(indentOf(L[pos]));
        else if (pos < L.length && indentOf(L[pos]) === ind && isItem(stripComment(L[pos]).trim())) out[kv.key] = seq(ind);
        else out[kv.key] = null;
      } else {
        out[kv.key] = inlineValue(kv.rest, ind);
      }
    }
  }

  // A value after "key:" or "- " on line pos; consumes that line (and a block scalar's lines).
  function inlineValue(t, ind) {
    const header = /^([|>])([+-]?)$/.exec(t);
    if (header) {
      pos++;
      return blockScalar(header[1], header[2], ind);
    }
    if (/^[&*!]/.test(t)) throw err('anchors, aliases and tags are not supported');
    let v;
    if (t[0] === '[' || t[0] === '{') {
      const f = flow(t, 0);
      if (t.slice(f.end).trim() !== '') throw err('text after a flow collection');
      v = f.value;
    } else v = scalar(t);
    pos++;
    skip();
    if (pos < L.length && indentOf(L[pos]) > ind && !(t[0] === '[' || t[0] === '{') && !/^["']/.test(t)) {
      throw err('multi-line plain scalars are not supported (use | or >)');
    }
    return v;
  }

  function blockScalar(style, chomp, ind) {
    const body = [];
    let bi = -1;
    while (pos < L.length) {
      const l = L[pos];
      if (l.trim() === '') {
        body.push('');
        pos++;
        continue;
      }
      const i = indentOf(l);
      if (bi < 0) bi = i;
      if (i < bi || i <= ind) break;
      body.push(l.slice(bi));
      pos++;
    }
    if (bi < 0) return '';
    let trailing = 0;
    while (body.length && body[body.length - 1] === '') {
      body.pop();
      trailing++;
    }
    let text;
    if (style === '|') text = body.join('\n');
    else {
      text = body[0];
      for (let k = 1; k < body.length; k++) {
        const l = body[k];
        const prev = body[k - 1];
        if (l === '') text += '\n'; // each blank line stands for one line break
        else if (/^\s/.test(l) || /^\s/.test(prev)) text += '\n' + l; // more-indented lines keep theirs
        else text += prev === '' ? l : ' ' + l;
      }
    }
    if (chomp === '-') return text;
    if (chomp === '+') return text + '\n'.repeat(trailing + 1);
    return text + '\n';
  }

  function flow(s, i) {
    const open = s[i];
    const close = open === '[' ? ']' : '}';
    const out = open === '[' ? [] : {};
    i++;
    const ws = () => {
      while (i < s.length && /\s/.test(s[i])) i++;
    };
    const item = () => {
      ws();
      if (s[i] === '[' || s[i] === '{') {
        const f = flow(s, i);
        i = f.end;
        return f.value;
      }
      if (s[i] === '"') {
        const m = /^"((?:[^"\\]|\\.)*)"/.exec(s.slice(i));
        if (!m) throw err('unterminated string');
        i += m[0].length;
        return JSON.parse(m[0]);
      }
      if (s[i] === "'") {
        const m = /^'((?:[^']|'')*)'/.exec(s.slice(i));
        if (!m) throw err('unterminated string');
        i += m[0].length;
        return m[1].replace(/''/g, "'");
      }
      const m = /^[^,\]}:]*/.exec(s.slice(i));
      i += m[0].length;
      return scalar(m[0].trim());
    };
    ws();
    if (s[i] === close) return { value: out, end: i + 1 };
    for (;;) {
      if (open === '[') out.push(item());
      else {
        const k = item();
        ws();
        if (s[i] !== ':') throw err('expected ":" in a flow map');
        i++;
        if (typeof k !== 'string') throw err('flow map keys must be strings');
        if (Object.prototype.hasOwnProperty.call(out, k)) throw err(`duplicate key ${k}`);
        out[k] = item();
      }
      ws();
      if (s[i] === ',') {
        i++;
        continue;
      }
      if (s[i] === close) return { value: out, end: i + 1 };
      throw err(`expected "," or "${close}"`);
    }
  }

  function scalar(t) {
    if (t[0] === '"') {
      if (!/^"((?:[^"\\]|\\.)*)"$/.test(t)) throw err(`bad double-quoted scalar ${t}`);
      return JSON.parse(t);
    }
    if (t[0] === "'") {
      if (!/^'((?:[^']|'')*)'$/.test(t)) throw err(`bad single-quoted scalar ${t}`);
      return t.slice(1, -1).replace(/''/g, "'");
    }
    if (t === '' || t === '~' || t === 'null' || t === 'Null' || t === 'NULL') return null;
    if (/^(true|True|TRUE)$/.test(t)) return true;
    if (/^(false|False|FALSE)$/.test(t)) return false;
    if (/^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/.test(t)) throw err(`${t} is a boolean in YAML 1.1, a string in 1.2: quote it`);
    if (/^[-+]?0[0-9_]+$/.test(t) || /^[-+]?\d[\d_]*(:[0-5]?\d)+$/.test(t) || /_/.test(t) && /^[-+]?[\d_.]+$/.test(t)) throw err(`${t} reads differently in YAML 1.1 and 1.2: quote it`);
    if (/^[-+]?(0|[1-9]\d*)$/.test(t)) return Number(t);
    if (/^[-+]?(\.\d+|\d+\.\d*)([eE][-+]?\d+)?$/.test(t) || /^[-+]?\d+[eE][-+]?\d+$/.test(t)) return Number(t);
    if (/^0x[0-9a-fA-F]+$|^0o[0-7]+$|^[-+]?\.(inf|Inf|INF|nan|NaN|NAN)$/.test(t)) throw err(`${t}: quote it`);
    if (/^[[\]{},#&*!|>%@`]/.test(t) || /:\s/.test(t) || /\s#/.test(t)) throw err(`plain scalar ${JSON.stringify(t)} needs quotes`);
    return t;
  }

  const value = block(0);
  skip();
  if (pos < L.length) throw err('text after the document (bad indentation?)');
  return value;
}

// ---------------------------------------------------------------- known fields
const ANY = Symbol('any');
const STR = 'string';
const INT = 'integer';
const BOOL = 'boolean';
const QTY = 'quantity';
const strMap = { '*': STR };
const meta = { name: STR, namespace: STR, generateName: STR, labels: strMap, annotations: strMap };
const container = {
  name: STR, image: STR, imagePullPolicy: STR, command: [STR], args: [STR], workingDir: STR,
  env: [{ name: STR, value: STR, valueFrom: ANY }], envFrom: ANY,
  resources: { requests: { '*': QTY }, limits: { '*': QTY } },
  volumeMounts: [{ name: STR, mountPath: STR, readOnly: BOOL, subPath: STR, mountPropagation: STR }],
  securityContext: ANY,
};
const volume = {
  name: STR, persistentVolumeClaim: { claimName: STR, readOnly: BOOL },
  nfs: { server: STR, path: STR, readOnly: BOOL }, csi: ANY, emptyDir: ANY, hostPath: ANY, ephemeral: ANY,
};
const podSpec = {
  restartPolicy: STR, containers: [container], initContainers: [container], volumes: [volume],
  nodeSelector: strMap, tolerations: ANY, affinity: ANY, serviceAccountName: STR, securityContext: ANY,
  runtimeClassName: STR, priorityClassName: STR, imagePullSecrets: [{ name: STR }],
};
const SCHEMAS = {
  'batch/v1 Job': {
    apiVersion: STR, kind: STR, metadata: meta,
    spec: {
      completionMode: STR, completions: INT, parallelism: INT, backoffLimit: INT,
      backoffLimitPerIndex: INT, maxFailedIndexes: INT, activeDeadlineSeconds: INT,
      ttlSecondsAfterFinished: INT, suspend: BOOL, podFailurePolicy: ANY, podReplacementPolicy: STR,
      template: { metadata: meta, spec: podSpec },
    },
  },
  'v1 PersistentVolumeClaim': {
    apiVersion: STR, kind: STR, metadata: meta,
    spec: {
      accessModes: [STR], storageClassName: STR, volumeMode: STR, volumeName: STR, selector: ANY,
      resources: { requests: { storage: QTY } },
    },
  },
};

function checkShape(file, value, schema, path) {
  if (schema === ANY) return;
  const at = path || '(document)';
  if (schema === STR) {
    if (typeof value !== 'string') problem(file, `${at} must be a string (quote it), not ${JSON.stringify(value)}`);
  } else if (schema === INT) {
    if (!Number.isInteger(value)) problem(file, `${at} must be an integer, not ${JSON.stringify(value)}`);
  } else if (schema === BOOL) {
    if (typeof value !== 'boolean') problem(file, `${at} must be true or false`);
  } else if (schema === QTY) {
    if (!(typeof value === 'string' && /^[+-]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+|[numkMGTPE]|[KMGTPE]i)?$/.test(value)) && !(typeof value === 'number' && value >= 0)) {
      problem(file, `${at} is not a quantity: ${JSON.stringify(value)}`);
    }
  } else if (Array.isArray(schema)) {
    if (!Array.isArray(value)) return problem(file, `${at} must be a list`);
    value.forEach((v, i) => checkShape(file, v, schema[0], `${path}[${i}]`));
  } else {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return problem(file, `${at} must be a map`);
    for (const [k, v] of Object.entries(value)) {
      const s = k in schema ? schema[k] : schema['*'];
      if (s === undefined) problem(file, `unknown field ${path ? `${path}.` : ''}${k}`);
      else checkShape(file, v, s, path ? `${path}.${k}` : k);
    }
  }
}

// ---------------------------------------------------------------- the recipe
const read = (f) => readFileSync(join(dir, f), 'utf8');
const docs = {};
for (const f of ['build-shards.yaml', 'join.yaml', 'pvc.yaml']) {
  let text;
  try {
    text = read(f);
  } catch (e) {
    problem(f, `cannot read: ${e.message}`);
    continue;
  }
  try {
    docs[f] = parseYamlDocuments(text);
  } catch (e) {
    if (!(e instanceof YamlError)) throw e;
    problem(f, `YAML: ${e.message}`);
    continue;
  }
  if (docs[f].length !== 1) problem(f, `expected one document, found ${docs[f].length}`);
  for (const d of docs[f]) {
    const key = `${d?.apiVersion} ${d?.kind}`;
    if (!SCHEMAS[key]) problem(f, `unexpected apiVersion/kind: ${key}`);
    else checkShape(f, d, SCHEMAS[key], '');
  }
}

const get = (o, path) => path.split('.').reduce((v, k) => (v == null ? undefined : v[k]), o);
const envOf = (c) => Object.fromEntries((c?.env ?? []).map((e) => [e.name, e.value]));
const script = (c) => [...(c?.command ?? []), ...(c?.args ?? [])].join(' ').replace(/\s+/g, ' ');

function checkPod(f, job) {
  const spec = get(job, 'spec.template.spec');
  const rp = spec?.restartPolicy;
  if (rp !== 'Never' && rp !== 'OnFailure') problem(f, `spec.template.spec.restartPolicy must be Never or OnFailure (a Job's pods), not ${rp}`);
  const cs = spec?.containers ?? [];
  if (cs.length !== 1) problem(f, `expected one container, found ${cs.length}`);
  const c = cs[0];
  const mount = (c?.volumeMounts ?? []).find((m) => m.mountPath === '/data');
  if (!mount) problem(f, 'the container does not mount a volume at /data');
  const vol = (spec?.volumes ?? []).find((v) => v.name === mount?.name);
  if (mount && !vol) problem(f, `volumeMount ${mount.name} has no volume of that name`);
  if (vol && vol.persistentVolumeClaim?.claimName !== 'gpuindex-data') problem(f, `the /data volume is not the PersistentVolumeClaim gpuindex-data`);
  if (mount?.readOnly) problem(f, '/data is mounted read-only');
  const gpu = c?.resources?.limits?.['nvidia.com/gpu'];
  if (gpu !== undefined && String(gpu) !== '1') problem(f, `nvidia.com/gpu limit is ${gpu}, expected 1`);
  if (!c?.image) problem(f, 'the container has no image');
  return c;
}

const build = docs['build-shards.yaml']?.[0];
const joinJob = docs['join.yaml']?.[0];
const pvc = docs['pvc.yaml']?.[0];
let n;
let buildImage;
if (build) {
  const f = 'build-shards.yaml';
  const s = build.spec ?? {};
  if (s.completionMode !== 'Indexed') problem(f, `spec.completionMode must be Indexed, not ${s.completionMode}`);
  n = s.completions;
  if (!Number.isInteger(n) || n < 1) problem(f, `spec.completions (N) must be a positive integer, not ${n}`);
  if (s.parallelism !== undefined && !(Number.isInteger(s.parallelism) && s.parallelism >= 1 && s.parallelism <= n)) {
    problem(f, `spec.parallelism must be within 1..completions (${n}), not ${s.parallelism}`);
  }
  const c = checkPod(f, build);
  buildImage = c?.image;
  const env = envOf(c);
  if (env.JOB_COMPLETIONS !== String(n)) problem(f, `env JOB_COMPLETIONS is ${JSON.stringify(env.JOB_COMPLETIONS)}, spec.completions is ${n}: they must say the same N`);
  const cmd = script(c);
  const idx = String.raw`(\$\(JOB_COMPLETION_INDEX\)|\$JOB_COMPLETION_INDEX\b|\$\{JOB_COMPLETION_INDEX\})`;
  if (!new RegExp(String.raw`gpuindex build /data/crawl -o "?/data/out/shards/shard-${idx}"?(\s|$)`).test(cmd)) {
    problem(f, `the command must run gpuindex build /data/crawl -o /data/out/shards/shard-$(JOB_COMPLETION_INDEX): ${cmd}`);
  }
  if (!/\s--shard auto(\s|$)/.test(cmd)) problem(f, `the command must pass --shard auto: ${cmd}`);
  if (/\$\{?JOB_COMPLETION_INDEX/.test(cmd) && !/^\/bin\/(ba)?sh -c /.test(cmd)) problem(f, '$JOB_COMPLETION_INDEX needs a shell (command: [/bin/sh, -c])');
  if (!/mkdir -p "?\/data\/out\/shards"?/.test(cmd)) problem(f, 'the command must create /data/out/shards first (build refuses a missing parent folder)');
}
if (joinJob) {
  const f = 'join.yaml';
  if (joinJob.spec?.completionMode === 'Indexed' || (joinJob.spec?.completions ?? 1) !== 1) problem(f, 'the join Job must run one pod');
  const c = checkPod(f, joinJob);
  if (buildImage && c?.image !== buildImage) problem(f, `image ${c?.image} is not the build Job's ${buildImage}`);
  const env = envOf(c);
  if (n !== undefined && env.SHARDS !== String(n)) problem(f, `env SHARDS is ${JSON.stringify(env.SHARDS)}, the build Job's completions is ${n}`);
  const cmd = script(c);
  for (const [re, what] of [
    [/gpuindex join \/data\/out\/index /, 'gpuindex join /data/out/index <shards>'],
    [/\/data\/out\/shards\/shard-/, 'the shard folders /data/out/shards/shard-<i>'],
    [/gpuindex optimize \/data\/out\/index/, 'gpuindex optimize /data/out/index'],
    [/gpuindex verify \/data\/out\/index/, 'gpuindex verify /data/out/index'],
    [/set -eu/, 'set -eu (stop at the first failure)'],
  ]) if (!re.test(cmd)) problem(f, `the command must have ${what}`);
  const wait = `kubectl wait --for=condition=complete`;
  const text = read(f);
  if (build && (!text.includes(wait) || !text.includes(`job/${build.metadata?.name}`))) problem(f, `its comment must say: ${wait} ... job/${build?.metadata?.name}, then apply`);
  if (joinJob.metadata?.name === build?.metadata?.name) problem(f, 'the join Job has the build Job\'s name');
}
if (pvc) {
  const f = 'pvc.yaml';
  if (pvc.metadata?.name !== 'gpuindex-data') problem(f, `metadata.name must be gpuindex-data, not ${pvc.metadata?.name}`);
  if (!(pvc.spec?.accessModes ?? []).includes('ReadWriteMany')) problem(f, 'accessModes must include ReadWriteMany (pods on several nodes)');
}
try {
  const d = read('Dockerfile');
  if (!/^FROM node:20-bookworm-slim(\s|$)/m.test(d)) problem('Dockerfile', 'no FROM node:20-bookworm-slim');
  if (!/\bnpm ci\b/.test(d)) problem('Dockerfile', 'no npm ci');
  if (!/\/usr\/local\/bin\/gpuindex\b/.test(d)) problem('Dockerfile', 'gpuindex is not put on PATH');
} catch (e) {
  problem('Dockerfile', `cannot read: ${e.message}`);
}

// ---------------------------------------------------------------- second opinions
function leaves(v, path, out) {
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) leaves(x, path ? `${path}${Array.isArray(v) ? `[${k}]` : `.${k}`}` : k, out);
  } else out.push([path, v]);
  return out;
}
function tool(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60000, env: { ...process.env, KUBECONFIG: '/dev/null' } });
  } catch (e) {
    return e.code === 'ENOENT' ? undefined : { error: (e.stderr || e.message).trim().split('\n').pop() };
  }
}
const py = tool('python3', ['-c', 'import yaml']);
if (py === undefined || typeof py === 'object') notes.push('python3 yaml: not available, skipped');
else {
  for (const [f, ours] of Object.entries(docs)) {
    const out = tool('python3', ['-c', 'import sys, json, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]))', join(dir, f)]);
    if (typeof out !== 'string') problem(f, `python3 yaml: ${out?.error}`);
    else if (JSON.stringify(JSON.parse(out)) !== JSON.stringify(ours)) problem(f, 'python3 yaml reads it differently from this check');
  }
  notes.push('python3 yaml: same reading');
}
const kv = tool('kubectl', ['version', '--client', '-o', 'json']);
const minor = typeof kv === 'string' ? Number(JSON.parse(kv).clientVersion?.minor?.replace(/\D.*/, '')) : NaN;
if (!(minor >= 29)) notes.push(kv === undefined ? 'kubectl: not installed, skipped' : `kubectl: older than 1.29 or unusable (${typeof kv === 'string' ? `1.${minor}` : kv.error}), skipped`);
else {
  for (const [f, ours] of Object.entries(docs)) {
    if (ours[0]?.kind !== 'Job') continue;
    const out = tool('kubectl', ['set', 'env', '--local', '-o', 'json', '-f', join(dir, f), 'GPUINDEX_CHECK=1']);
    if (typeof out !== 'string') {
      problem(f, `kubectl: ${out?.error}`);
      continue;
    }
    const theirs = Object.fromEntries(leaves(JSON.parse(out), '', []).map(([p, v]) => [p, v]));
    for (const [p, v] of leaves(ours[0], '', [])) {
      if (!(p in theirs)) problem(f, `kubectl drops ${p} (a field its Kubernetes version does not know)`);
      else if (theirs[p] !== v && !(typeof v === 'number' && /\.(requests|limits)\./.test(p) && theirs[p] === String(v))) problem(f, `kubectl reads ${p} as ${JSON.stringify(theirs[p])}, not ${JSON.stringify(v)}`);
    }
  }
  notes.push(`kubectl 1.${minor} (typed decoding, no server): same fields and values`);
}

if (problems.length) {
  for (const p of problems) console.log(`check-k8s: ${p}`);
  console.log(`check-k8s: FAIL (${problems.length} problem${problems.length > 1 ? 's' : ''})`);
  process.exit(1);
}
console.log(`check-k8s: ok: ${Object.keys(docs).join(', ')}, Dockerfile (N = ${n}); ${notes.join('; ')}`);
