// Test workload for naming JIT code (tests/kernel/test-unwind.sh): prints
// its pid, then for SECONDS (default 4) of CPU time calls frNodeHotLoop(),
// a pure-JS loop V8 compiles to machine code.  Run with --perf-basic-prof,
// node writes the code's names to /tmp/perf-PID.map ("JS:*frNodeHotLoop
// /path/fr-node-hot.js:9:23" in node 20, "LazyCompile:*frNodeHotLoop ..."
// in older ones): the only place a profiler can learn them.
'use strict';

function frNodeHotLoop(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + i * i) % 1000003;
  return s;
}

console.log(process.pid);
// CPU time, not wall time: as many samples on a busy machine as on an idle one
const cpuUs = () => { const u = process.cpuUsage(); return u.user + u.system; };
const end = cpuUs() + 1e6 * Number(process.argv[2] || 4);
let total = 0;
while (cpuUs() < end) total += frNodeHotLoop(100000);
// uses the result, so the loop is not optimised away
process.exitCode = total >= 0 ? 0 : 1;
