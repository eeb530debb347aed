#!/usr/bin/env bash
# Session 23 third call: NVSHMEM 3.4.5's libfabric remote transport across 2 namespaced hosts
# (gpux's run.sh, its own PEs only; the library path of the pip wheel on this machine fixed).
set -u; ROOT=$PWD; G=$ROOT/.gpu
cd $G && tar -xJf fin.tar.xz && tar -xJf gpux23b.tar.xz && cd $ROOT
{ ls /opt/torch/.venv/lib/python3.12/site-packages/ | grep -i nvshmem; } > $OUT/where.txt 2>&1
mkdir -p /tmp/nvs; SKIP_OURS=1 OUT=/tmp/nvs timeout 150 bash $G/gpux23b/run.sh > /tmp/nvs.log 2>&1; echo "rc=$?" >> $OUT/where.txt
cp /tmp/nvs/nvshmem.txt /tmp/nvs/progress.txt $OUT/ 2>/dev/null; tar czf $OUT/all.tgz -C /tmp R23b nvs nvs.log 2>/dev/null
