// Runs the upstream's metric v3 certification (scripts/certification/run-entropy.mjs of
// monotykamary/pi-fabric@a76ea93a7e7b0dce9f7bd999f4905ebd2578c986) with the options of one
// scenario and writes {report, human}: the report object and formatEntropyHumanReport's
// text. tests/unit/test_v3_upstream_certify.py compares `certify --metric-version 3` with
// them. CI never runs this.
//
// To regenerate: build the upstream as tests/data/v3_upstream.mjs says (plus its
// compiled-store.ts parse functions), put run-entropy.mjs in UPSTREAM/cert/scripts/
// certification/ and, in UPSTREAM/cert/dist/entropy/index.js, re-export the names it
// imports from UPSTREAM/out (applyCompiledSurface returns the live surface,
// compileEntropySurfaceAsync awaits the synchronous compile, schemaDigest is
// stableJsonHash, and save/loadCompiledSurface write and parse
// <dir>/fabric/entropy/compiled.json as compiled-store.ts does, without the lock). Then,
// from the repository root:
//
//   node tests/data/v3_upstream_certify.mjs UPSTREAM/cert tests/data/v3-upstream-certify
//
// Each scenario is tests/data/v3-upstream-certify/<name>.options.json: {sessionsDir?,
// surfacePath?, artifactPath?, trial?} with paths relative to the repository root.
import fs from 'node:fs'
import path from 'node:path'
import process from 'node:process'

const [cert, directory] = process.argv.slice(2)
const { runEntropyCertification, formatEntropyHumanReport } = await import(
  path.join(path.resolve(cert), 'scripts/certification/run-entropy.mjs')
)
for (const file of fs.readdirSync(directory).filter((name) => name.endsWith('.options.json')).sort()) {
  const options = JSON.parse(fs.readFileSync(path.join(directory, file), 'utf8'))
  const report = await runEntropyCertification(options)
  const out = { options, report, human: formatEntropyHumanReport(report) }
  fs.writeFileSync(path.join(directory, file.replace('.options.json', '.upstream.json')), `${JSON.stringify(out, null, 2)}\n`)
}
