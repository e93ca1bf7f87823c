// Runs the upstream's metric v3 (pi-fabric, monotykamary/pi-fabric@a76ea93) on one corpus and
// writes what it makes of it as JSON: the report and its hash, the proposals, the compile
// outcome and the compiled.json bytes, a second compile over that artifact, the trial with
// and without the artifact, the observation pool's bytes and the federation merge of the
// artifact into an empty state. tests/unit/test_v3_upstream_bytes.py compares our v3 with
// these outputs. CI never runs this script; it documents how the goldens were made.
//
// To regenerate (offline, node 20, Debian's node-typescript 4.8 for tsc):
//
//   1. Put the upstream sources (compiled-store.ts: its parse functions, without fs) in a scratch directory OUTSIDE the repository, e.g.
//      /tmp/h19-upstream/src: src/entropy/{types,fingerprint,meter,normal-form,passes,
//      compiled-surface,compiler,surface,trial,corpus,pool}.ts and src/audit/trace.ts from
//      monotykamary/pi-fabric@a76ea93a7e7b0dce9f7bd999f4905ebd2578c986 (compiled-surface.ts
//      at 7c6f7e6272c7d37d0cd544d6df8eac1622a4f31d); fingerprint.ts, pool.ts and
//      core/stable-hash.ts from alchemistklk/pi-fabric@330be8ac (v2-final). Keep the
//      synchronous functions the chain below calls; the recorder half of trace.ts, the
//      async/cooperative twins and the persistence modules are not needed. Export pool.ts's
//      summarizeObservations and mergeObservationSummaries (see the named exception below).
//   2. mkdir -p /tmp/tb && tar xzf ../shared/reference/typebox-1.3.8.tgz -C /tmp/tb
//      cd /tmp/h19-upstream && tsc --outDir out --module es2022 --target es2022 \
//        --moduleResolution node --skipLibCheck src/core/*.ts src/audit/*.ts src/entropy/*.ts
//      (tsc reports errors in TypeBox's .d.mts files, which 4.8 cannot parse, and emits
//      the JavaScript anyway; only type annotations are removed.)
//      echo '{"type":"module"}' > out/package.json
//      mkdir -p out/node_modules && ln -sfn /tmp/tb/package out/node_modules/typebox
//   3. python tests/data/v3_upstream_cases.py (writes each case's inputs and spec.json and
//      runs  node tests/data/v3_upstream.mjs /tmp/h19-upstream/out SPEC  for each).
//
// SPEC is a JSON file {"sessions": [file, ...], "surface": file, "repairs"?: file,
// "artifacts"?: [file, ...], "poolSteps"?: [[file, ...], ...]}; the
// session files are read one at a time in the order given (the upstream scans each file with
// its own model cursor), lines split at "\n". Pool windows are named by file basename.
import fs from 'node:fs'
import path from 'node:path'
import process from 'node:process'
import { createHash } from "node:crypto"

const [upstream, specFile] = process.argv.slice(2)
const load = (module) => import(path.join(path.resolve(upstream), module))
const { measureEntropy } = await load('entropy/meter.js')
const { proposeEntropyReductions } = await load('entropy/passes.js')
const { compileEntropySurface } = await load('entropy/compiler.js')
const { runEntropyTrial } = await load('entropy/trial.js')
const { applyNormalFormPlan, deriveNormalFormPlan } = await load('entropy/normal-form.js')
const { mergeCompiledSurfaces } = await load('entropy/compiled-surface.js')
const { entropySurfaceHash } = await load('entropy/surface.js')
const { entropySessionEvidenceFromJsonl, entropyRepairRows, entropyReportHash } = await load('entropy/corpus.js')
const { mergeObservationWindow, mergeObservationSummaries, poolToValueObservations, summarizeObservations } =
  await load('entropy/pool.js')
const { parseCompiledSurfaceArtifact } = await load('entropy/compiled-store.js')

const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'))
const base = path.dirname(path.resolve(specFile))
const at = (file) => path.resolve(base, file)

// The snapshot as the upstream's functions take it: ref and inputSchema per action, in the
// file's order (the upstream's live snapshot sorts by ref before it gets here; a snapshot
// file is taken as it is written, which is what our commands do, and only its digest
// depends on the order).
const rawSurface = JSON.parse(fs.readFileSync(at(spec.surface), 'utf8'))
const surface = {
  version: 1,
  actions: rawSurface.actions.map((action) => ({ ref: action.ref, inputSchema: action.inputSchema })),
}
let repairs
if (spec.repairs) {
  const table = JSON.parse(fs.readFileSync(at(spec.repairs), 'utf8'))
  repairs = entropyRepairRows(Array.isArray(table) ? table : table.repairs)
}

const traces = []
const valueObservations = []
const auditCalls = []
const windows = []
for (const file of spec.sessions) {
  const evidence = entropySessionEvidenceFromJsonl(fs.readFileSync(at(file), 'utf8').split('\n'))
  traces.push(...evidence.traces)
  valueObservations.push(...evidence.valueObservations)
  auditCalls.push(...evidence.auditCalls)
  windows.push({ file: path.basename(file), observations: evidence.valueObservations })
}

const catalogDigest = entropySurfaceHash(surface)
const report = measureEntropy({ traces, surface, repairs, catalogDigest })
const proposals = proposeEntropyReductions({ report, traces, surface, repairs, valueObservations })
// Without audit values the proposals take the projected trace arguments (propose --no-audit-values).
const proposalsFromTraces = proposeEntropyReductions({ report, traces, surface, repairs })
const compiled = compileEntropySurface({ traces, surface, repairs, valueObservations, auditCalls })
const artifact = compiled.artifact
const recompiled = compileEntropySurface({ traces, surface, repairs, valueObservations, auditCalls, artifact })
const pooled = mergeObservationWindow(undefined, windows)
const compiledWithPool = compileEntropySurface({
  traces, surface, repairs, auditCalls, valueObservations: poolToValueObservations(pooled.file),
})
const trial = runEntropyTrial({ traces, live: surface, artifact, auditCalls })
const trialBare = runEntropyTrial({ traces, live: surface, auditCalls })
const merged = artifact ? mergeCompiledSurfaces(undefined, artifact, surface) : undefined

// Our named exception (docs/decisions.md, DESIGN principle 1): the pool takes no audit key or
// ref its own loader would reject (empty, with a NUL or with JS-trim whitespace) and no
// non-finite number, and it does not store a string value over 64 KiB of UTF-8 (such a
// value still identifies the window: it is part of the digest). The upstream's merge over
// windows summarised that way, so the rest of the pool is still compared byte for byte
// where a corpus has any (pool.ts must export its two summary helpers for this).
const loadable = (item) =>
  [item.ref, item.key].every((text) => text !== '' && !text.includes('\u0000') && text.trim() === text) &&
  !(typeof item.value === 'number' && !Number.isFinite(item.value))
const stored = (item) => !(typeof item.value === 'string' && Buffer.byteLength(item.value, 'utf8') > 64 * 1024)
let excepted = 0
const exceptedWindows = windows.map((window) => {
  const kept = window.observations.filter(loadable)
  const counted = kept.filter(stored)
  excepted += window.observations.length - counted.length
  return {
    file: window.file,
    summary: { counts: summarizeObservations(counted).counts, digest: summarizeObservations(kept).digest },
  }
})
const pooledExcepted = excepted > 0 ? mergeObservationSummaries(undefined, exceptedWindows) : undefined

const sha = (text) => createHash("sha256").update(text).digest("hex")
const fileText = (value) => `${JSON.stringify(value, null, 2)}\n`
const out = {
  reportHash: entropyReportHash(report),
  report,
  proposals,
  proposalsFromTraces,
  compile: compiled,
  compiledJson: artifact ? fileText(artifact) : null,
  recompileStatus: recompiled.status,
  compileWithPool: compiledWithPool,
  trial,
  trialBare,
  pool: pooled,
  poolJson: fileText(pooled.file),
  merge: merged ?? null,
  // sha256 (of the JSON string of) each compact serialisation, so a comparison does not
  // depend on how a reader re-serialises numbers.
  compact: Object.fromEntries(Object.entries({
    report, proposals, compile: compiled, compileWithPool: compiledWithPool, trial, trialBare,
    pool: pooled.file, merge: merged ?? null,
  }).map(([key, value]) => [key, sha(JSON.stringify(value))])),
  // sha256 of the files as the upstream's stores write them (JSON.stringify(value, null, 2)).
  files: {
    compiled: artifact ? sha(fileText(artifact)) : null,
    pool: sha(fileText(pooled.file)),
    merge: merged ? sha(fileText(merged.file)) : null,
  },
  poolNamedException: pooledExcepted
    ? { observations: excepted, compact: sha(JSON.stringify(pooledExcepted.file)), file: sha(fileText(pooledExcepted.file)) }
    : null,
}
// The runtime's normalisation of every recorded call (audits, then trace operations of
// surface refs) under an active artifact: active.ts takes the artifact's stored plan for the
// ref when the file is version 2 and has one (a stale stored plan is then refused, never
// replaced), else derives one from the live schema now.
const liveSchemas = new Map(surface.actions.map((action) => [action.ref, action.inputSchema]))
const recordedCalls = [
  ...auditCalls,
  ...traces.flatMap((trace) => trace.operations.map((op) => ({ ref: op.ref, args: op.args }))),
].filter((call) => liveSchemas.has(call.ref))
const enforcement = (active) => {
  const calls = recordedCalls.map((call) => {
    const schema = liveSchemas.get(call.ref)
    const stored = active?.version === 2 ? active.normalizations?.find((plan) => plan.ref === call.ref) : undefined
    const result = applyNormalFormPlan(call.ref, schema, call.args, stored ?? deriveNormalFormPlan(call.ref, schema))
    return { ref: call.ref, changed: result.args !== call.args, args: result.args, witness: result.witness ?? null }
  })
  const text = JSON.stringify(calls)
  // The list itself only where it is small; its hash always.
  return { count: calls.length, changed: calls.filter((call) => call.changed).length, sha: sha(text), calls: text.length < 60_000 ? calls : null }
}
out.enforcement = artifact ? enforcement(artifact) : null

// The spec's "poolSteps": pool runs one after the other, each merging its files' windows into
// the pool the previous run wrote (a grown file keeps its name: its old counts are retracted).
out.poolSteps = []
let stepPool
for (const step of spec.poolSteps ?? []) {
  const stepWindows = step.map((file) => ({
    file: path.basename(file),
    observations: entropySessionEvidenceFromJsonl(fs.readFileSync(at(file), 'utf8').split('\n')).valueObservations,
  }))
  const merged = mergeObservationWindow(stepPool, stepWindows)
  stepPool = merged.file
  out.poolSteps.push({ mergedSessions: merged.mergedSessions, skippedSessions: merged.skippedSessions, json: fileText(merged.file) })
}

// Artifacts of the spec's "artifacts" list, each read as the upstream's loader reads a file
// (parseCompiledSurfaceArtifact: undefined for a file it refuses): a compile over the corpus
// with it as the incumbent, a trial with it, and its import into a state holding the
// corpus's own artifact and into an empty one.
const artifactFile = (name) => parseCompiledSurfaceArtifact(JSON.parse(fs.readFileSync(at(name), 'utf8')))
out.artifacts = {}
for (const name of spec.artifacts ?? []) {
  const parsed = artifactFile(name)
  if (!parsed) {
    out.artifacts[name] = { invalid: true }
    continue
  }
  const recompile = compileEntropySurface({ traces, surface, repairs, valueObservations, auditCalls, artifact: parsed })
  const mergedLocal = mergeCompiledSurfaces(artifact, parsed, surface)
  const mergedEmpty = mergeCompiledSurfaces(undefined, parsed, surface)
  const trialWith = runEntropyTrial({ traces, live: surface, artifact: parsed, auditCalls })
  out.artifacts[name] = {
    invalid: false,
    exported: fileText(parsed),
    compileStatus: recompile.status,
    compile: sha(JSON.stringify(recompile)),
    compiledJson: recompile.artifact ? fileText(recompile.artifact) : null,
    trial: trialWith,
    enforcement: enforcement(parsed),
    mergedLocal: { ...mergedLocal, file: undefined, json: fileText(mergedLocal.file) },
    mergedEmpty: { ...mergedEmpty, file: undefined, json: fileText(mergedEmpty.file) },
  }
}
process.stdout.write(fileText(out))
