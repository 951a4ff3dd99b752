// plot: true over MCP: the answer carries the picture as an image content block (a PNG that
// decodes, the same bytes as the file the result names), beside the text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect, writeScript } from './helpers.mjs';

let conn;
let cache;
before(async () => {
  cache = mkdtempSync(path.join(tmpdir(), 'hk-plot-'));
  conn = await connect({ XDG_CACHE_HOME: cache });
});
after(async () => {
  await conn?.client.close();
  rmSync(cache, { recursive: true, force: true });
});

/** Width and height from a PNG's signature and IHDR chunk; throws when it is not a PNG. */
function pngSize(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.equal(buf.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

function checkImage(r) {
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  const plot = r.structuredContent.plot;
  assert.equal(plot.format, 'png');
  assert.equal(path.dirname(plot.path), path.join(cache, 'hotkernel', 'runs'), 'plot: true goes to the runs folder');
  assert.equal(r.content[0].type, 'text');
  const images = r.content.filter((c) => c.type === 'image');
  assert.equal(images.length, 1, 'one image block');
  assert.equal(images[0].mimeType, 'image/png');
  const png = Buffer.from(images[0].data, 'base64');
  const { width, height } = pngSize(png);
  assert.ok(width >= 600 && height >= 400, `${width}x${height}`);
  assert.ok(png.length < 150 * 1024, `a few tens of KB, got ${png.length} bytes`);
  assert.equal(png.length, plot.bytes);
  assert.ok(png.equals(readFileSync(plot.path)), 'the image is the file the result names');
}

test('roofline plot: true answers with a PNG image block that decodes', async () => {
  const r = await conn.client.callTool({ name: 'roofline', arguments: {
    gpu: 'NVIDIA H200', flops: 83886080, bytes: 335544320, baseline_ms: 0.12, candidate_ms: 0.085, plot: true } });
  checkImage(r);
  assert.equal(r.structuredContent.points.length, 2);
});

test('bench plot: true draws the runs it made', async () => {
  const script = writeScript('steady.py', 'import json\nprint(json.dumps({"ms": 1.0, "ok": True}))\n');
  const r = await conn.client.callTool({ name: 'bench', arguments: { script, n: 3, plot: true } });
  checkImage(r);
});

test('without plot there is no image, and a plot path that is not .png/.svg is refused up front', async () => {
  const plain = await conn.client.callTool({ name: 'roofline', arguments: { gpu: 'NVIDIA H200', flops: 1, bytes: 1 } });
  assert.equal(plain.content.filter((c) => c.type === 'image').length, 0);
  assert.equal(plain.structuredContent.plot, undefined);
  const bad = await conn.client.callTool({ name: 'roofline', arguments: { gpu: 'NVIDIA H200', flops: 1, bytes: 1, plot: 'r.pdf' } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /\.png or \.svg/);
});
