#!/usr/bin/env bash
# gpux session 23b: NVSHMEM 3.4.5 (pip) with its libfabric remote transport across 2 namespaced
# hosts (one PE per host, one GPU each), beside rshmem's proxy (crosshost.sh, 2 PEs under MPS).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
ROOT=$PWD; G=$ROOT/.gpu/gpux23b; R=/tmp/R23b; rm -rf $R; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
{ nvidia-smi -L; ldconfig -p | grep -c libfabric.so.1; fi_info --version 2>&1 | head -3; } > $R/progress.txt 2>&1
chmod +x $G/nv/* $G/rs/*
for py in /opt/cuda13/bin/python /opt/torch/.venv/bin/python3 python3; do
  NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)"; [ -d "$NVL/lib" ] && break; done
# (fixed after the run: the pythons above did not find the wheel on the GPU machine)
NVL=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem
[ -d "$NVL/lib" ] || NVL=$(dirname "$(dirname "$(find / -xdev -path '*/nvidia/nvshmem/lib/libnvshmem_host.so.3' 2>/dev/null | head -1)")")
# (fixed after the run: the GPU machine has no iproute2; the stage carries one in tools/)
command -v ip >/dev/null || { mkdir -p /tmp/gxt && tar -xJf $ROOT/.gpu/fin.tar.xz -C /tmp/gxt fin/tools && export PATH=/tmp/gxt/fin/tools:$PATH; }
el "nvshmem at $NVL"
FAB=""; ldconfig -p | grep -q libfabric.so.1 || FAB=":$G/fab"
NGPU=$(nvidia-smi -L | grep -c '^GPU')
# ours (runs beside, on the last GPU under MPS, crosshost.sh's shape)
ours() { cd /tmp && rm -rf fin && tar -xJf $ROOT/.gpu/fin.tar.xz && rm -rf fin/build/cuda && tar -xJf $ROOT/.gpu/xhcuda.tar.xz -C fin/build \
  && { [ -f $G/lib.tar.xz ] && tar -xJf $G/lib.tar.xz -C fin/stage/lib || tar -xJf $ROOT/.gpu/gpux23/newlib.tar.xz -C fin/stage/lib; }
  el "ours unpacked"
  OUT=$R/ours PROGRAMS=$G/rs TESTS="shmem_p_latency shmem_put_latency" LIMIT=30 XH_PREFIX=gxo XH_GPU=$((NGPU - 1)) \
    timeout 75 bash /tmp/fin/ctest/cuda/crosshost.sh > $R/ours.out 2>&1; el "ours p/put rc=$?"
}
[ -n "${SKIP_OURS:-}" ] || ours &
# NVSHMEM: hosts gxn-h1, gxn-h2; PE k-1 in host k on GPU k-1
export RSHMEM_NETNS_PREFIX=gxn; NS="bash $ROOT/scripts/netns-hosts.sh"; $NS up 2 >> $R/progress.txt 2>&1
nvrun() { # nvrun TAG PROG PERSONA FI_PROVIDER
  local tag=$1 prog=$2 pers=$3 fip=$4 d=/tmp/gxuid.$1; rm -rf $d; mkdir -p $d
  for k in 1 2; do
    $NS exec $k env LD_LIBRARY_PATH=$G/shim:$NVL/lib$FAB GX_RANK=$((k - 1)) GX_SIZE=2 GX_DIR=$d NVSHMEMTEST_USE_UID_BOOTSTRAP=1 \
      NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=eth0 NVSHMEM_REMOTE_TRANSPORT=libfabric NVSHMEM_LIBFABRIC_PROVIDER=$pers \
      ${fip:+FI_PROVIDER=$fip} FI_TCP_IFACE=eth0 FI_SOCKETS_IFACE=eth0 NVSHMEM_DEBUG=INFO NVSHMEM_DEBUG_SUBSYS=INIT,TRANSPORT,BOOTSTRAP \
      CUDA_VISIBLE_DEVICES=$(( (k - 1) % NGPU )) NVSHMEM_DISABLE_NVLS=1 \
      timeout 25 $G/nv/$prog > $R/$tag.pe$k.txt 2>&1 &
  done; wait; el "nv $tag ($prog persona=$pers FI_PROVIDER=$fip): $(grep -l 'size' $R/$tag.pe*.txt 2>/dev/null | wc -l) files with rows"; }
nvrun tcp shmem_p_latency tcp ""
nvrun vtcp shmem_p_latency verbs tcp
nvrun vrxm shmem_p_latency verbs "tcp;ofi_rxm"
nvrun etcp shmem_p_latency efa tcp
for t in vtcp vrxm etcp; do if grep -qi "size" $R/$t.pe1.txt; then nvrun put$t shmem_put_latency $(case $t in v*) echo verbs;; e*) echo efa;; esac) $(case $t in vrxm) echo "tcp;ofi_rxm";; *) echo tcp;; esac); break; fi; done
$NS down >/dev/null 2>&1
wait; el done
for f in $R/*.pe*.txt; do echo "=== $(basename $f)"; grep -v "^TIME" $f | grep -i "size\|latency\|error\|warn\|fail\|persona\|provider\|fi_\|transport\|invalid\|abort\|^ *[0-9]" | head -60; done > "$OUT/nvshmem.txt"
for o in ours; do mkdir -p $R/$o/logs; tar xzf $R/$o/crosshost-logs.tgz -C $R/$o/logs 2>/dev/null; cat $R/$o/crosshost.log; grep -h -v "^TIME\|^Runtime options\|^Note:" $R/$o/logs/*.log 2>/dev/null | head -80; done > "$OUT/ours.txt" 2>&1
cp $R/progress.txt "$OUT/"; tar czf "$OUT/all.tgz" -C /tmp R23b 2>/dev/null
