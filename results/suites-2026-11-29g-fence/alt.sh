#!/bin/bash
# alternate 10 base runs and 10 runs without tcp's staging/prefetch buffers until $END
cd /work/wt/net
k=0
while [ $(date +%s) -lt $END ]; do
  k=$((k+1))
  PFX=fxa nice bash results/suites-2026-11-29g-fence/loop.sh 10 7 3 /tmp/fx/a-base /tmp/fx/handoff >> /tmp/fx/a-base.txt 2>&1
  FI_TCP_STAGING_SBUF_SIZE=0 FI_TCP_PREFETCH_RBUF_SIZE=0 PFX=fxa nice bash results/suites-2026-11-29g-fence/loop.sh 10 7 3 /tmp/fx/a-nobuf /tmp/fx/handoff >> /tmp/fx/a-nobuf.txt 2>&1
done
