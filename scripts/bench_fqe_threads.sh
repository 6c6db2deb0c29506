#!/usr/bin/env bash
# Does `roboaudit fqe fit` use the cores it is given, and no more? (benchmark, not CI)
#
# Collects a small push-suite run (once, into OUT/run; or reuses --run DIR), then fits it with
# --threads 1, RAYON_NUM_THREADS=1 and --threads 2, and prints for each the process's CPU seconds
# (user + system, from /usr/bin/time) over its wall seconds: at most ~1.0 with one thread, up to
# ~2.0 with two; and the neural batch's wall time and the 2-thread speed-up. With
# ROBOAUDIT_REF=BINARY (a build of an older commit) it also times that binary's fit pinned to
# core 0 with RAYON_NUM_THREADS=1 beside this one's, less a --no-neural fit, and prints the
# neural ms per gradient step of each. Figures move with other load on the machine (the load
# average is recorded): compare the lines of one run. Appends the figures to BENCHMARKS.md.
#
# Usage: scripts/bench_fqe_threads.sh OUT [--run DIR] [--episodes N] [--steps N]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
shift
episodes=120 steps=2000 run=
while [ $# -gt 0 ]; do
  case $1 in
    --episodes) episodes=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --run) run=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
bin=${ROBOAUDIT:-target/debug/roboaudit}
mkdir -p "$out"
if [ -z "$run" ]; then
  run=$out/run
  [ -f "$run/ground_truth.json" ] ||
    "$bin" fqe collect --out "$run" --episodes "$episodes" --rollouts 5 >/dev/null
fi
seeds=0,1
: >"$out/lines.txt"
# timed NAME CMD...: runs CMD under /usr/bin/time; records wall, CPU and the neural batch time.
timed() {
  local name=$1; shift
  rm -rf "${out:?}/$name"
  /usr/bin/time -f "%e %U %S" -o "$out/$name.time" "$@" --out "$out/$name" >/dev/null 2>"$out/$name.err"
  python3 - "$name" "$out" <<'PY' | tee -a "$out/lines.txt"
import re, sys
name, out = sys.argv[1], sys.argv[2]
wall, user, sys_ = map(float, open(f"{out}/{name}.time").read().split()[-3:])
m = re.search(r"fits in ([0-9.]+) s", open(f"{out}/{name}.err").read())
neural = float(m.group(1)) if m else float("nan")
open(f"{out}/{name}.neural", "w").write(f"{neural}\n")
open(f"{out}/{name}.wall", "w").write(f"{wall}\n")
print(f"{name:22s} wall {wall:7.1f} s  CPU {user + sys_:7.1f} s  CPU/wall {(user + sys_) / wall:4.2f}"
      f"  neural batch {neural:6.1f} s")
PY
}
base=(fqe fit --run "$run" --cache "$out/cache")
common=("${base[@]}" --seeds "$seeds" --steps "$steps")
# The feature cache is filled by a first fit so that every timed fit reads it. The neural
# options are refused beside --no-neural.
timed warm-cache env RAYON_NUM_THREADS=2 "$bin" "${base[@]}" --no-neural
timed no-neural-1 taskset -c 0 env RAYON_NUM_THREADS=1 "$bin" "${base[@]}" --no-neural
timed threads-1 "$bin" "${common[@]}" --threads 1
timed rayon-env-1 env RAYON_NUM_THREADS=1 "$bin" "${common[@]}"
timed threads-2 "$bin" "${common[@]}" --threads 2
timed pinned-1 taskset -c 0 "$bin" "${common[@]}" --threads 1
if [ -n "${ROBOAUDIT_REF:-}" ]; then
  timed ref-pinned-1 taskset -c 0 env RAYON_NUM_THREADS=1 "$ROBOAUDIT_REF" "${common[@]}"
fi
python3 - "$out" "$steps" "$seeds" "$run" "${ROBOAUDIT_REF:-}" <<'PY'
import datetime, os, socket, sys
out, steps, seeds, run, ref = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
val = lambda n, k: float(open(f"{out}/{n}.{k}").read())
cpu = {}
for n in ["threads-1", "rayon-env-1", "threads-2"]:
    w, u, s = map(float, open(f"{out}/{n}.time").read().split()[-3:])
    cpu[n] = (u + s) / w
fits = len(os.listdir(f"{run}/policies")) * len(seeds.split(","))
a, b = val("threads-1", "neural"), val("threads-2", "neural")
print(f"neural batch speed-up, 2 threads over 1: {a / b:.2f}x")
base = val("no-neural-1", "wall")
ms = lambda n: (val(n, "wall") - base) * 1e3 / (steps * fits)
line = [f"ms per step pinned (whole fit less --no-neural): {ms('pinned-1'):.2f}"]
if ref:
    line.append(f"reference {ms('ref-pinned-1'):.2f}, ratio {ms('ref-pinned-1') / ms('pinned-1'):.2f}x")
print("; ".join(line))
load = open("/proc/loadavg").read().split()[0]
day = datetime.datetime.now(datetime.timezone.utc).date()
machine = f"{socket.gethostname()} ({os.cpu_count()} cores, load {load})"
what = f"fqe fit threads, push run {os.path.basename(os.path.dirname(run + '/'))}, {fits} neural fits x {steps} steps"
with open("BENCHMARKS.md", "a") as f:
    f.write(f"| {day} | {machine} | {what}: CPU/wall --threads 1 {cpu['threads-1']:.2f}, RAYON_NUM_THREADS=1 "
            f"{cpu['rayon-env-1']:.2f}, --threads 2 {cpu['threads-2']:.2f} | neural batch 1 thread {a:.1f} s, "
            f"2 threads {b:.1f} s | 2 threads over 1: {a / b:.2f}x |\n")
    if ref:
        f.write(f"| {day} | {machine} | neural FQE ms per gradient step, same push run, pinned to core 0 (whole fit less "
                f"--no-neural) | {ms('pinned-1'):.2f} ms | candle build {ms('ref-pinned-1'):.2f} ms | "
                f"{ms('ref-pinned-1') / ms('pinned-1'):.2f}x |\n")
PY
