#!/usr/bin/env bash
# One GPU-machine call for issue 20 / 21 (nvdrop, 2026-11-27), staged by perftest/nvshmem/stage.sh
# into .gpu/nvdrop; run there as `bash .gpu/nvdrop/gpu-run.sh` (4 GPUs). Everything lands in $OUT:
#   gpu-run.log  machine, heap tests at 2 and 4 PEs, malloc growth times, torch + nvshmem4py
#   table.txt    one line per NVIDIA example/perftest and PE count (perftest/nvshmem/run-programs.sh)
#   logs.tgz     each program's output, the build logs
# Budget: BUDGET seconds in all (default 450); programs not started in time are listed as SKIP.
# STEPS (default "heap torch programs"): which parts run; "moe" builds NVIDIA's moe_shuffle and
# runs it with -c (cudaMalloc'd arrays) at 2 and 4 PEs; HEAP_ROUNDS repeats the heap_ahead runs.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-/tmp/nvdrop-out}"; mkdir -p "$OUT"
T0=$(date +%s); END=$((T0 + ${BUDGET:-450}))
S="$G/stage"; NVB=/tmp/nvbin
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 RSHMEM_BOOTSTRAP_TIMEOUT=30
export PATH=/usr/local/cuda/bin:$PATH CUDA_HOME=/usr/local/cuda LIBRARY_PATH=/usr/local/cuda/lib64/stubs${LIBRARY_PATH:+:$LIBRARY_PATH}
chmod +x "$S/bin/"* "$G/build/cuda/"* "$G"/*.sh 2>/dev/null
exec > >(tee "$OUT/gpu-run.log") 2>&1
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
{ nvidia-smi -L; nvidia-smi topo -m | head -6; nproc; date -u; } 2>&1

# MPI for the MPI examples: Open MPI's headers travel with the stage; its library is here.
if ! mpicc -showme:link >/dev/null 2>&1; then
    mkdir -p /tmp/mpiw
    ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libmpi.so.40* | head -1)" /tmp/mpiw/libmpi.so
    printf '#!/bin/sh\ncase "$1" in -showme:incdirs) echo %s;; -showme:link) echo "-L/tmp/mpiw -lmpi -Wl,-rpath,/usr/lib/x86_64-linux-gnu";; *) exit 1;; esac\n' "$G/mpi-include" >/tmp/mpiw/mpicc
    chmod +x /tmp/mpiw/mpicc; export PATH=/tmp/mpiw:$PATH
fi
STEPS=" ${STEPS:-heap torch programs} "
step() { [[ $STEPS == *" $1 "* ]]; }
BUILD=
if step programs; then
echo "== $(el) building NVIDIA's examples and perftests in the background"
( RSHMEM_PREFIX="$S" JOBS=40 bash "$G/build-nvshmem-programs.sh" "$G/nv" "$NVB" >"$OUT/build.txt" 2>&1; echo "build rc=$? at $(( $(date +%s) - T0 )) s" >>"$OUT/build.txt" ) &
BUILD=$!
fi
if step moe; then
    mkdir -p /tmp/moe
    ( nvcc -arch=sm_90 -std=c++17 -O2 -I"$S/include" "$G/nv/examples/moe_shuffle.cu" -o /tmp/moe/moe_shuffle -L"$S/lib" -lrshmem -lcuda \
        -Xlinker -rpath="$S/lib" >/tmp/moe/build.log 2>&1; echo "moe build rc=$?" >>/tmp/moe/build.log ) &
    MOE=$!
fi

if step heap; then
echo "== $(el) heap tests"
export LD_LIBRARY_PATH="$S/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for np in 2 4; do
    for t in heap_default heap_exact heap_ahead; do
        NVSHMEM_DEBUG=INFO timeout 90 "$S/bin/rshmemrun" -n $np "$G/build/cuda/$t" >/tmp/$t.$np.log 2>&1
        echo "$t np=$np rc=$? $(grep -E '^(PASS|FAIL)' /tmp/$t.$np.log | head -2)"
        grep -E '^heap_ahead:|FAIL|rshmem: PE 0: GPU heap: ' /tmp/$t.$np.log | cut -c1-300 | head -30
    done
    for r in $(seq 2 "${HEAP_ROUNDS:-1}"); do
        timeout 90 "$S/bin/rshmemrun" -n $np "$G/build/cuda/heap_ahead" 2>&1 | grep -E '^heap_ahead|^PASS|FAIL'
    done
done
fi

if step torch; then
echo "== $(el) torch + nvshmem4py on rshmem's libnvshmem_host.so.3"
PY=/opt/torch/.venv/bin/python3
TL=$($PY -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))" 2>/dev/null)
readelf -d "$TL/libtorch_nvshmem.so" 2>/dev/null | grep -iE 'needed.*nvshmem|path'
nm -D --undefined-only "$TL/libtorch_nvshmem.so" 2>/dev/null | awk '/NVSHMEM/ {print $2}' | sort >/tmp/torch_imports
nm -D --defined-only "$S/lib/librshmem.so.0" | awk '{print $3}' | sed 's/@@/@/' | sort >/tmp/ours
echo "torch imports at NVSHMEM: $(wc -l </tmp/torch_imports); not defined by rshmem: $(comm -23 /tmp/torch_imports /tmp/ours | tr '\n' ' ')"
T=/tmp/n4p-site; rm -rf $T; mkdir -p $T
$PY -c "import cuda.core, cuda.pathfinder" 2>/dev/null || $PY -m pip install -q --no-index --no-deps --target $T "$G"/wheels/cuda_*.whl
$PY -m pip install -q --no-index --no-deps --target $T "$G"/wheels/nvshmem4py*.whl
probe='import torch, nvshmem.core; libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "nvshmem_host" in l or "librshmem" in l}); print("import torch, nvshmem.core: OK; torch", torch.__version__, "loaded:", libs)'
# torch's libtorch_nvshmem.so finds libnvshmem_host.so.3 through its DT_RPATH, which wins over
# LD_LIBRARY_PATH; LD_PRELOAD puts rshmem's alias first.
for how in LD_LIBRARY_PATH LD_PRELOAD; do
    if [ $how = LD_PRELOAD ]; then env=(LD_PRELOAD="$S/lib/libnvshmem_host.so.3"); else env=(LD_LIBRARY_PATH="$S/lib"); fi
    echo "-- $how: python -c 'import torch, nvshmem.core'"
    env "${env[@]}" PYTHONPATH=$T timeout 120 $PY -c "$probe" 2>&1 | tail -3; echo "rc=${PIPESTATUS[0]}"
    echo "-- $how: nvshmem4py demo with torch imported first, mpirun -np 2"
    timeout 120 mpirun --allow-run-as-root -np 2 --bind-to none -x "${env[0]}" -x PATH -x PYTHONPATH=$T -x NVSHMEM_DISABLE_NVLS \
        $PY -c "import torch, runpy; runpy.run_path('$G/nvshmem4py_demo.py', run_name='__main__')" 2>&1 | grep -v '^Importing\|^MPI4Py' | tail -6
    echo "demo rc=${PIPESTATUS[0]}"
done
fi
if step moe; then
    wait $MOE; cat /tmp/moe/build.log | tail -3
    for np in 2 4; do for a in "-c" ""; do
        (cd /tmp/moe && timeout 60 "$S/bin/rshmemrun" -n $np ./moe_shuffle $a) >/tmp/moe/run.$np$a.log 2>&1
        echo "moe_shuffle $a np=$np rc=$?"; tail -3 /tmp/moe/run.$np$a.log | cut -c1-200
    done; done
fi
[ -n "$BUILD" ] || { echo "== $(el) done"; exit 0; }

echo "== $(el) waiting for the build"
while kill -0 $BUILD 2>/dev/null && [ "$(date +%s)" -lt $((END - 120)) ]; do sleep 2; done
tail -4 "$OUT/build.txt"
TABLE="$OUT/table.txt"; : >"$TABLE"
run() { RSHMEM_PREFIX="$S" TIMEOUT=${TIMEOUT:-40} DEADLINE=$((END - 45)) bash "$G/run-programs.sh" "$NVB" "$@"; }
progs=($(cd $NVB && ls -d examples/* perftest/* 2>/dev/null | sort))
half=$(( (${#progs[@]} + 1) / 2 ))
echo "== $(el) ${#progs[@]} programs at 2 PEs (two jobs at a time: GPUs 0,1 and 2,3)"
( CUDA_VISIBLE_DEVICES=0,1 run 2 "$TABLE.a" "${progs[@]:0:$half}" ) &
A=$!
( CUDA_VISIBLE_DEVICES=2,3 run 2 "$TABLE.b" "${progs[@]:$half}" ) &
B=$!
# The 4-PE pass starts when both are done, or at the latest with 160 s left.
while { kill -0 $A 2>/dev/null || kill -0 $B 2>/dev/null; } && [ "$(date +%s)" -lt $((END - 160)) ]; do sleep 1; done
echo "== $(el) ${#progs[@]} programs at 4 PEs"
run 4 "$TABLE.c" "${progs[@]}"
wait $A $B
cat "$TABLE.a" "$TABLE.b" "$TABLE.c" >"$TABLE"
mv "$TABLE.a.d" "$TABLE.d" 2>/dev/null; cp "$TABLE.b.d"/* "$TABLE.c.d"/* "$TABLE.d"/ 2>/dev/null
echo "== $(el) results"; awk '{print $1, $2}' "$TABLE" | sort | uniq -c
grep -v '^PASS' "$TABLE"
cp /tmp/heap_*.log "$TABLE.d"/ 2>/dev/null; cp "$NVB"/log/*.log "$TABLE.d"/ 2>/dev/null
tar czf "$OUT/logs.tgz" -C "$TABLE.d" . 2>/dev/null
rm -rf "$TABLE".*
echo "== $(el) done"
