#!/usr/bin/env bash
# rshmemrun's CPU binding (--bind-to core|numa|none, issue 20): by default each PE gets its own
# share of the CPUs the launcher may use (here: disjoint sets that together cover them), none
# when the PEs outnumber those CPUs; a launcher restricted with taskset binds inside its set;
# --bind-to none leaves every PE the whole set; every PE is told how many CPUs the launcher has
# (RSHMEM_LAUNCH_CPUS, for its wait policy); a bad value is refused naming the option.
source "$(dirname "$0")/../programs/common.sh"
allowed=$(grep Cpus_allowed_list /proc/$$/status | cut -f2)
ncpu=$(nproc)
show='grep Cpus_allowed_list /proc/self/status | cut -f2'
n=$(( ncpu < 4 ? ncpu : 4 ))
sets=$("$RUN" -n $n sh -c "$show" 2>&1)
distinct=$(sort -u <<<"$sets" | wc -l)
total=$(tr ',' '\n' <<<"$sets" | awk -F- 'NF==2{c+=$2-$1+1;next}{c++}END{print c}')
if [ "$(wc -l <<<"$sets")" -eq $n ] && [ "$distinct" -eq $n ] && [ "$total" -le "$ncpu" ] && ! grep -qx "$allowed" <<<"$sets" || [ $n -eq 1 ]; then
    pass "-n $n: each PE on its own CPUs ($(tr '\n' ' ' <<<"$sets"))"
else
    fail "-n $n on $ncpu CPUs: PEs got [$(tr '\n' ' ' <<<"$sets")], want $n disjoint shares of $allowed"
fi
over=$("$RUN" -n $((ncpu + 1)) sh -c "$show" 2>&1 | sort -u)
[ "$over" = "$allowed" ] && pass "-n $((ncpu + 1)) (more PEs than CPUs): not bound" || fail "oversubscribed PEs got [$over], want all of $allowed"
none=$("$RUN" -n 2 --bind-to none sh -c "$show" 2>&1 | sort -u)
[ "$none" = "$allowed" ] && pass "--bind-to none: not bound" || fail "--bind-to none gave [$none]"
last=$(taskset -pc $$ | sed "s/.*: //" | tr "," "\n" | tail -1 | sed "s/.*-//")
one=$(taskset -c "$last" "$RUN" -n 1 sh -c "$show" 2>&1)
[ "$one" = "$last" ] && pass "launcher limited to CPU $last: its PE bound there" || fail "taskset -c $last rshmemrun -n 1: PE on [$one]"
seen=$("$RUN" -n 2 sh -c 'echo $RSHMEM_LAUNCH_CPUS' 2>&1 | sort -u)
[ "$seen" = "$ncpu" ] && pass "bound PEs are told the launcher's $ncpu CPUs (their wait policy counts those, not their own share)" \
    || fail "RSHMEM_LAUNCH_CPUS in the PEs: [$seen], want $ncpu"
report=$("$RUN" -n 1 --report-bindings true 2>&1)
grep -q "PE 0 on host .*: bound to CPUs" <<<"$report" && pass "--report-bindings says where PE 0 runs" || fail "--report-bindings printed: $report"
bad=$("$RUN" -n 1 --bind-to socket true 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- "--bind-to socket: expected core, numa or none" <<<"$bad" && pass "--bind-to socket refused by name" \
    || fail "--bind-to socket: exit $rc, said: $(head -1 <<<"$bad")"
finish
