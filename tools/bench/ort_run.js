#!/usr/bin/env node
// Runs an ONNX model on ONNX Runtime's CPU provider (onnxruntime-node) with
// the model-zoo test data layout (input_N.pb, output_N.pb), for the
// benchmark harness (bench.py). A benchmark tool, not a test.
//
//   node ort_run.js MODEL.onnx DATA_DIR [--threads N] [--runs R] [--warmup W]
//                   [--check] [--atol A] [--rtol R]
//
// Prints JSON lines on stdout:
//   {"kind":"load","ms":...}                      session creation
//   {"kind":"warmup","run":i,"ms":...}            one per untimed warm-up run
//   {"kind":"run","run":i,"ms":...}               one per timed run
//   {"kind":"check","output":name,"max_abs_err":...,"max_rel_err":...,"ok":bool}
//                                                 with --check, per output
//   {"kind":"summary","median_ms":...,"min_ms":...,"runs":R,"threads":N,"ort":ver}
// With --check the exit status is 1 when an output is off tolerance
// (|got - want| > atol + rtol * |want|) or mismatched in shape.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// --- minimal ONNX TensorProto reader ----------------------------------------
// Fields used (onnx.proto3): 1 dims (int64, packed or not), 2 data_type,
// 4 float_data, 5 int32_data, 7 int64_data, 8 name, 9 raw_data,
// 10 double_data, 14 data_location (external data is not supported).

class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  eof() { return this.pos >= this.buf.length; }
  varint() { // as BigInt (uint64)
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  }
  uint() { return Number(this.varint()); }
  bytes() {
    const n = this.uint();
    if (this.pos + n > this.buf.length) throw new Error('truncated field');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

// ONNX TensorProto.DataType -> [ort type name, typed array, element bytes]
const DTYPES = {
  1: ['float32', Float32Array, 4],
  2: ['uint8', Uint8Array, 1],
  3: ['int8', Int8Array, 1],
  6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8],
  9: ['bool', Uint8Array, 1],
  11: ['float64', Float64Array, 8],
};

function readTensorProto(file) {
  const r = new Reader(fs.readFileSync(file));
  const dims = [];
  let dataType = 0, name = '', raw = null;
  const floats = [], ints32 = [], ints64 = [], doubles = [];
  // Repeated scalar fields arrive packed (wire 2) or one by one.
  const repeated = (wire, readOne, out) => {
    if (wire === 2) {
      const sub = new Reader(r.bytes());
      while (!sub.eof()) out.push(readOne(sub));
    } else {
      out.push(readOne(r));
    }
  };
  const f32 = (rd) => { const v = rd.buf.readFloatLE(rd.pos); rd.pos += 4; return v; };
  const f64 = (rd) => { const v = rd.buf.readDoubleLE(rd.pos); rd.pos += 8; return v; };
  const i64 = (rd) => BigInt.asIntN(64, rd.varint());
  const i32 = (rd) => Number(BigInt.asIntN(32, rd.varint()));
  while (!r.eof()) {
    const key = r.uint();
    const field = key >>> 3, wire = key & 7;
    switch (field) {
      case 1: repeated(wire, (rd) => Number(i64(rd)), dims); break;
      case 2: dataType = r.uint(); break;
      case 4: repeated(wire, f32, floats); break;
      case 5: repeated(wire, i32, ints32); break;
      case 7: repeated(wire, i64, ints64); break;
      case 8: name = r.bytes().toString('utf8'); break;
      case 9: raw = r.bytes(); break;
      case 10: repeated(wire, f64, doubles); break;
      case 14: if (r.uint() !== 0) throw new Error(`${file}: external data not supported`); break;
      default: r.skip(wire);
    }
  }
  const dt = DTYPES[dataType];
  if (!dt) throw new Error(`${file}: unsupported data_type ${dataType}`);
  const [type, Arr, size] = dt;
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (raw) {
    if (raw.length !== count * size)
      throw new Error(`${file}: raw_data has ${raw.length} bytes, expected ${count * size}`);
    const copy = new Uint8Array(raw.length); // aligned copy
    copy.set(raw);
    data = new Arr(copy.buffer);
  } else {
    const src = { 1: floats, 2: ints32, 3: ints32, 6: ints32, 7: ints64, 9: ints32, 11: doubles }[dataType];
    if (src.length !== count)
      throw new Error(`${file}: ${src.length} values, expected ${count}`);
    data = Arr.from(src);
  }
  return { name, type, dims, data };
}

function readSet(dir, prefix) {
  const files = fs.readdirSync(dir)
    .map((f) => [f, new RegExp(`^${prefix}_(\\d+)\\.pb$`).exec(f)])
    .filter(([, m]) => m)
    .sort((a, b) => Number(a[1][1]) - Number(b[1][1]));
  return files.map(([f]) => readTensorProto(path.join(dir, f)));
}

// Pairs protos with graph names: by the proto's name when the graph has it,
// else by position.
function byName(protos, names, what) {
  if (protos.length !== names.length)
    throw new Error(`${protos.length} ${what} files for ${names.length} graph ${what}s`);
  const all = protos.every((p) => names.includes(p.name));
  return protos.map((p, i) => [all ? p.name : names[i], p]);
}

// --- main --------------------------------------------------------------------

function parseArgs(argv) {
  const opts = { threads: 1, runs: 10, warmup: 1, check: false, atol: 1e-4, rtol: 1e-3, pos: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { if (i + 1 >= argv.length) throw new Error(`${a} needs a value`); return argv[++i]; };
    if (a === '--threads') opts.threads = parseInt(val(), 10);
    else if (a === '--runs') opts.runs = parseInt(val(), 10);
    else if (a === '--warmup') opts.warmup = parseInt(val(), 10);
    else if (a === '--atol') opts.atol = parseFloat(val());
    else if (a === '--rtol') opts.rtol = parseFloat(val());
    else if (a === '--check') opts.check = true;
    else if (a === '-h' || a === '--help') opts.help = true;
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else opts.pos.push(a);
  }
  return opts;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help || opts.pos.length !== 2) {
    console.error('usage: node ort_run.js MODEL.onnx DATA_DIR [--threads N] [--runs R] [--warmup W] [--check] [--atol A] [--rtol R]');
    process.exit(opts.help ? 0 : 2);
  }
  const [model, dataDir] = opts.pos;
  const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');

  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: opts.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  emit({ kind: 'load', ms: Number(process.hrtime.bigint() - t0) / 1e6 });

  const feeds = {};
  for (const [name, p] of byName(readSet(dataDir, 'input'), session.inputNames, 'input'))
    feeds[name] = new ort.Tensor(p.type, p.data, p.dims);

  for (let i = 0; i < opts.warmup; i++) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    emit({ kind: 'warmup', run: i, ms: Number(process.hrtime.bigint() - s) / 1e6 });
  }
  const times = [];
  let last = null;
  for (let i = 0; i < opts.runs; i++) {
    const s = process.hrtime.bigint();
    last = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - s) / 1e6;
    times.push(ms);
    emit({ kind: 'run', run: i, ms });
  }

  let ok = true;
  if (opts.check) {
    if (!last) last = await session.run(feeds);
    for (const [name, want] of byName(readSet(dataDir, 'output'), session.outputNames, 'output')) {
      const got = last[name];
      const shapeOk = got.dims.length === want.dims.length && got.dims.every((d, k) => d === want.dims[k]);
      let maxAbs = 0, maxRel = 0, bad = 0;
      if (shapeOk) {
        for (let k = 0; k < want.data.length; k++) {
          const g = Number(got.data[k]), w = Number(want.data[k]);
          const d = Math.abs(g - w);
          if (!(d <= opts.atol + opts.rtol * Math.abs(w))) bad++; // NaN counts as bad
          if (!(d <= maxAbs)) maxAbs = d;
          const rel = d / Math.max(Math.abs(w), 1e-30);
          if (!(rel <= maxRel)) maxRel = rel;
        }
      }
      const outOk = shapeOk && bad === 0;
      ok = ok && outOk;
      emit({ kind: 'check', output: name, shape: got.dims, want_shape: want.dims,
             max_abs_err: shapeOk ? maxAbs : null, max_rel_err: shapeOk ? maxRel : null,
             mismatches: bad, atol: opts.atol, rtol: opts.rtol, ok: outOk });
    }
  }

  if (times.length)
    emit({ kind: 'summary', median_ms: median(times), min_ms: Math.min(...times), runs: times.length,
           warmup: opts.warmup, threads: opts.threads, ort: require('onnxruntime-node/package.json').version });
  process.exit(ok ? 0 : 1);
}

main().catch((e) => { console.error(`ort_run: ${e.message || e}`); process.exit(2); });
