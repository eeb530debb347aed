#!/usr/bin/env bash
# kill -9 of rshmemrun while the PEs run: every PE must be gone within a few seconds (they
# die with their parent), and nothing may be left in /dev/shm or /tmp.
source "$(dirname "$0")/../programs/common.sh"
build fault_victim

np=4
dir=$WORK/run && mkdir -p "$dir"
shm_before=$(ls -a /dev/shm) tmp_before=$(ls -a /tmp)
# "block": PE 3 sleeps outside SHMEM, the others wait in a barrier it never reaches.
"$RUN" -n $np "$WORK/fault_victim" block "$dir" >"$dir/out" 2>"$dir/err" &
rshmemrun_pid=$!
wait_files "$dir/pid.*" $np 30 && pass "all $np PEs started" || fail "the PEs did not start: $(cat "$dir/err")"
kill -9 $rshmemrun_pid
start=$SECONDS
pids_gone "$dir" 5 && pass "every PE is gone $((SECONDS - start))s after kill -9 of the launcher" \
    || fail "PEs survived kill -9 of the launcher"
wait $rshmemrun_pid 2>/dev/null
# Whatever survived must not outlive the test.
for f in "$dir"/pid.*; do kill -9 "$(cat "$f")" 2>/dev/null; done
sleep 0.2
shm_after=$(ls -a /dev/shm) tmp_after=$(ls -a /tmp)
pids="$rshmemrun_pid $(cat "$dir"/pid.* | tr '\n' ' ')"
new_shm=$(comm -13 <(echo "$shm_before" | sort) <(echo "$shm_after" | sort))
new_tmp=$(comm -13 <(echo "$tmp_before" | sort) <(echo "$tmp_after" | sort))
[ -z "$new_shm" ] && pass "/dev/shm unchanged" || echo "new in /dev/shm: $new_shm"
[ -z "$new_tmp" ] && pass "/tmp unchanged" || echo "new in /tmp: $new_tmp"
# Other programs on a shared machine may create files meanwhile: ours would carry our name or pids.
ours=$(printf '%s\n%s\n' "$new_shm" "$new_tmp" | grep -E "rshmem|$(echo $pids | tr ' ' '|')")
[ -z "$ours" ] && pass "no new file in /dev/shm or /tmp is ours" || fail "left behind: $ours"
finish
