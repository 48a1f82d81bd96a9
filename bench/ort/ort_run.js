// ONNX Runtime (onnxruntime-node's CPU provider) as the benches' anchor: runs one model on inputs
// given as raw files and prints one JSON object on stdout.
//
//   node bench/ort/ort_run.js REQUEST.json
//
// REQUEST: {"model": path, "threads": n, "warmup": n, "repeat": n, "profile": bool,
//           "inputs": [{"name", "type", "dims", "file"}], "outputs_dir": dir or null,
//           "outputs": [names] or null (null: the model's outputs)}
// type is a numpy dtype name (float32, int64, bool, ...); a file holds the elements row-major,
// little-endian. Prints {"version", "load_ms", "times_ms": [...], "peak_rss_mib" (the Node.js
// process's, ONNX Runtime included), "outputs": [{"name", "type",
// "dims", "file"}] (written under outputs_dir), "op_ms": {op type: ms per run} and "node_ms": {node
// name: ms per run} (with profile)}.
// Exit status 2 with {"error": message} when the model does not load or run.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array, float16: Uint16Array,
};
const ORT_TYPES = {float64: 'float64', float32: 'float32', float16: 'float16', bool: 'bool'};

function readInput(spec) {
  const Array = ARRAYS[spec.type];
  if (!Array) throw new Error(`input '${spec.name}': type ${spec.type} is not one this runner feeds`);
  const bytes = fs.readFileSync(spec.file);
  const copy = new ArrayBuffer(bytes.length);
  new Uint8Array(copy).set(bytes);
  return new ort.Tensor(ORT_TYPES[spec.type] || spec.type, new Array(copy), spec.dims);
}

function writeOutput(dir, index, name, tensor) {
  const file = path.join(dir, `output_${index}.bin`);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  return {name, type: tensor.type, dims: tensor.dims.map(Number), file};
}

// This process's peak resident memory: VmHWM, which starts afresh at exec (maxRSS carries the
// high-water mark of the process that started it).
function peakRssMiB() {
  const line = fs.readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith('VmHWM:'));
  return line ? parseInt(line.slice(6), 10) / 1024 : process.resourceUsage().maxRSS / 1024;
}

// Milliseconds per run by op type and by node, from ONNX Runtime's profile (Node events of the
// timed runs; a node ONNX Runtime fused is named as its graph transformer named it).
function opTimes(profileFile, runs) {
  const events = JSON.parse(fs.readFileSync(profileFile, 'utf8'));
  const byOp = {}, byNode = {};
  const suffix = '_kernel_time';
  for (const e of events) {
    if (e.cat !== 'Node' || !e.args || !e.args.op_name || !e.name.endsWith(suffix)) continue;
    const node = e.name.slice(0, -suffix.length);
    byOp[e.args.op_name] = (byOp[e.args.op_name] || 0) + e.dur / 1000 / runs;
    byNode[node] = (byNode[node] || 0) + e.dur / 1000 / runs;
  }
  return {byOp, byNode};
}

async function main() {
  const request = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const options = {
    intraOpNumThreads: request.threads || 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  };
  const profileDir = request.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-')) : null;
  const loadStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(request.model, options);
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
  const feeds = {};
  for (const spec of request.inputs) feeds[spec.name] = readInput(spec);
  const names = request.outputs || session.outputNames;
  for (let i = 0; i < (request.warmup || 0); ++i) await session.run(feeds, names);
  let profiled = null;
  if (profileDir) {  // a session of its own, so the timed runs carry no profiling cost
    profiled = await ort.InferenceSession.create(request.model, {...options, enableProfiling: true,
      profileFilePrefix: path.join(profileDir, 'ort')});
    for (let i = 0; i < (request.repeat || 1); ++i) await profiled.run(feeds, names);
  }
  const times = [];
  let results = null;
  for (let i = 0; i < (request.repeat || 1); ++i) {
    const start = process.hrtime.bigint();
    results = await session.run(feeds, names);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const out = {version: require('onnxruntime-node/package.json').version, load_ms: loadMs, times_ms: times,
    peak_rss_mib: peakRssMiB()};
  if (request.outputs_dir) out.outputs = names.map((name, i) => writeOutput(request.outputs_dir, i, name, results[name]));
  if (profiled) {
    profiled.endProfiling();
    const file = fs.readdirSync(profileDir).map((f) => path.join(profileDir, f)).find((f) => f.endsWith('.json'));
    const profile = file ? opTimes(file, request.repeat || 1) : {byOp: {}, byNode: {}};
    out.op_ms = profile.byOp;
    out.node_ms = profile.byNode;
    fs.rmSync(profileDir, {recursive: true, force: true});
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({error: String(e.message || e)}) + '\n');
  process.exit(2);
});
