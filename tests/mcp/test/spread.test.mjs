// A spread over MCP through the official SDK: verify with candidates over the fake nvidia-smi's
// cards (tests/fixtures/fake-bin), its structuredContent checked by the SDK against the declared
// outputSchema, progress per job, one lean verify result per candidate with its card.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MCP_DIR, connect } from './helpers.mjs';

const dir = mkdtempSync(path.join(tmpdir(), 'hk-spread-'));
const script = (name, mean) => {
  const file = path.join(dir, name);
  writeFileSync(file, `import json, os, random, time\nrng = random.Random(os.environ.get("HOTKERNEL_RUN_INDEX", "") + ` +
    `os.environ.get("HOTKERNEL_ROLE", ""))\ntime.sleep(0.1)\n` +
    `print(json.dumps({"ms": rng.gauss(${mean}, 0.01), "ok": True, "seed": 0, "shapes": [[8]], "dtype": "fp32", "iters": 1}))\n`);
  return file;
};
const conn = await connect({
  PATH: `${path.resolve(MCP_DIR, '../fixtures/fake-bin')}${path.delimiter}${process.env.PATH}`,
  FAKE_NVIDIA_SMI_SCENARIO: 'multi',
  HOTKERNEL_GPU_LEASE_DIR: path.join(dir, 'leases'),
  HOTKERNEL_KEEP_WARM_S: '0',
  CUDA_VISIBLE_DEVICES: '0,2',
});
after(() => conn.client.close());

test('verify with candidates: one lean result per candidate, each on one card, progress per job', async () => {
  const baseline = script('base.py', 1.0);
  const candidates = [script('fast.py', 0.8), script('slow.py', 1.25), script('same.py', 1.0)];
  const seen = [];
  const r = await conn.client.callTool({ name: 'verify', arguments: { baseline, candidates, n: 3 } }, undefined,
    { onprogress: (p) => seen.push(p), timeout: 120000 });
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  const s = r.structuredContent;
  assert.deepEqual(s.results.map((x) => x.candidate_script), candidates);
  assert.deepEqual(s.results.map((x) => x.verdict), ['faster', 'slower', 'inconclusive']);
  for (const x of s.results) {
    assert.ok(['GPU-00000000-1111-2222-3333-444444444444', 'GPU-22222222-1111-2222-3333-444444444444'].includes(x.gpu_uuid), x.gpu_uuid);
    assert.equal(typeof x.full_record, 'string');
  }
  assert.equal(s.spread.executor, 'pool');
  assert.equal(s.spread.table.length, 3);
  const text = seen.map((p) => p.message ?? '').join(' ');
  assert.match(text, /on GPU/, JSON.stringify(seen));
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, 'strictly increasing');
  assert.match(r.content[0].text, /faster 1\.\d+x/);
  assert.deepEqual(conn.errors, []);
});
