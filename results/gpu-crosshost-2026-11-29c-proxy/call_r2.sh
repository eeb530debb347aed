#!/usr/bin/env bash
# Round 2 device call (session 28, gpux): call.sh with old = main f8f97de's librshmem.so (round 1,
# newlib.xz) and new = 512 KiB pieces in 2 MiB mailbox rings (r2lib.xz), both over fin30's stage
# and xhcuda27's route-built programs (base.tar.xz), 5 pairs by default; the bench logs of pairs
# 2-5 are dropped (at most 8 files come back). Usage: OUT=dir bash call_r2.sh, with call.sh,
# ab.sh and the tarballs beside it (they ran from .gpu/gpux28b/).
D="$(cd "$(dirname "$0")" && pwd)"
OLDLIB=newlib.xz NEWLIB=r2lib.xz REPS="${REPS:-5}" DROP="2 3 4 5" exec bash "$D/call.sh"
