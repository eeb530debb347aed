#!/usr/bin/env bash
# The comparison plots' ratio axis (issue 21 item 10, scripts/bench_compare.py): linear, ending a
# little past the largest ratio, but never past RATIO_AXIS_MAX, so that one outlier (a 216x
# finalize row) does not squeeze every other row against 1.0. Where matplotlib is installed the
# plots of a small run are drawn too, with the outlier in them.
source "$(dirname "$0")/../programs/common.sh"
SCRIPTS=$(cd "$PROGRAMS/../../scripts" && pwd)
out=$(cd "$SCRIPTS" && python3 - <<'PY' 2>&1
import bench_compare as b
end = b.ratio_axis_end
assert abs(end([0.5, 1.2, None]) - 1.26) < 1e-9, end([0.5, 1.2, None])
assert abs(end([0.9, 1.5, 216.0]) - 1.05 * b.RATIO_AXIS_MAX) < 1e-9, end([0.9, 1.5, 216.0])
assert abs(end([0.3, 0.8]) - 1.05) < 1e-9, end([0.3, 0.8])  # 1.0 stays on the axis
assert abs(end([None]) - 1.05) < 1e-9
print("axis ends:", end([0.5, 1.2]), end([0.9, 216.0]), end([0.3]))
PY
) && pass "ratio axis: $out" || { fail "ratio axis:"; echo "$out"; }

if python3 -c 'import matplotlib' 2>/dev/null; then
    raw=$WORK/raw.csv
    {
        echo "lib,round,bench,variant,size,ctas,threads,value,unit"
        for lib in nvshmem rshmem; do
            for r in 0 1 2; do
                echo "$lib,$r,init,finalize,0,0,1,$([ $lib = rshmem ] && echo 0.1 || echo 21.6),ms"
                echo "$lib,$r,init,first_barrier,0,0,1,$([ $lib = rshmem ] && echo 0.3 || echo 0.2),ms"
            done
        done
    } >"$raw"
    python3 "$SCRIPTS/bench_compare.py" --raw "$raw" --out "$WORK" >"$WORK/plot.log" 2>&1 && [ -s "$WORK/init.png" ] \
        && pass "init.png drawn with a 216x row" || { fail "bench_compare.py could not draw init.png:"; tail "$WORK/plot.log"; }
else
    echo "note: no matplotlib here: the plots themselves are not drawn"
fi
finish
