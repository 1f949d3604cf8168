/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for the
 * metrics tests: every line is a `# HELP`, a `# TYPE` or a sample
 * `name{label="value",...} number`, and anything else throws, naming the line.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
  /** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

function parseLabels(body: string, line: number): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"\s*(,|$)/y;
  let at = 0;
  while (at < body.length) {
    re.lastIndex = at;
    const m = re.exec(body);
    if (!m) throw new Error(`line ${line}: bad labels {${body}}`);
    if (m[1]! in out) throw new Error(`line ${line}: label ${m[1]} twice`);
    out[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    at = re.lastIndex;
  }
  return out;
}

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  text.split('\n').forEach((raw, i) => {
    const n = i + 1;
    if (raw === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m || !NAME.test(m[2]!)) throw new Error(`line ${n}: bad comment: ${raw}`);
      if (m[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3]!)) throw new Error(`line ${n}: bad type ${m[3]}`);
        types.set(m[2]!, m[3]!);
      }
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(raw);
    if (!m) throw new Error(`line ${n}: not a sample: ${raw}`);
    // As Prometheus reads a value (Go's ParseFloat): NaN and Inf in any case (prom-client writes "Nan").
    const word = m[3]!.toLowerCase();
    const v = /^\+?inf$/.test(word) ? Infinity : word === '-inf' ? -Infinity : word === 'nan' ? NaN : /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(word) ? Number(word) : undefined;
    if (v === undefined) throw new Error(`line ${n}: bad value ${m[3]}`);
    samples.push({ name: m[1]!, labels: parseLabels(m[2] ?? '', n), value: v });
  });
  return {
    samples,
    types,
    value(name, labels = {}) {
      const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
      if (hits.length > 1) throw new Error(`${name}${JSON.stringify(labels)}: ${hits.length} samples match`);
      return hits[0]?.value;
    },
  };
}
