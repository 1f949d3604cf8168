/**
 * An in-process OTLP/HTTP trace receiver on 127.0.0.1: decodes the JSON
 * encoding the exporter sends (ExportTraceServiceRequest, protojson: ids in
 * hex, 64-bit integers as strings) into flat spans. `mode: 'hang'` accepts
 * requests and never answers (a collector that has stopped responding).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  kind: number;
  startMs: number;
  endMs: number;
  status: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, unknown> }>;
  resource: Record<string, unknown>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}
type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return null;
}
const attrs = (kvs: KeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, value(kv.value)]));
const ms = (nanos: string | number) => Number(BigInt(nanos) / 1_000_000n);

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  requests: number;
  close(): Promise<void>;
}

export async function startOtlpReceiver(mode: 'ok' | 'hang' = 'ok'): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const hanging: http.ServerResponse[] = [];
  const r = { spans, requests: 0 } as OtlpReceiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.requests += 1;
      if (mode === 'hang') return void hanging.push(res);
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) return void res.writeHead(415).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: Array<Record<string, any>> }> }> };
      for (const rs of body.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              kind: s.kind,
              startMs: ms(s.startTimeUnixNano),
              endMs: ms(s.endTimeUnixNano),
              status: s.status?.code ?? 0,
              attributes: attrs(s.attributes),
              events: (s.events ?? []).map((e: { name: string; attributes?: KeyValue[] }) => ({ name: e.name, attributes: attrs(e.attributes) })),
              links: (s.links ?? []).map((l: { traceId: string; spanId: string; attributes?: KeyValue[] }) => ({ traceId: l.traceId, spanId: l.spanId, attributes: attrs(l.attributes) })),
              resource,
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  r.close = () =>
    new Promise<void>((ok) => {
      for (const h of hanging) h.destroy();
      server.closeAllConnections();
      server.close(() => ok());
    });
  return r;
}
