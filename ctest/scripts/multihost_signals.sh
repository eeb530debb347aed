#!/usr/bin/env bash
# libfabric providers rshmem does not use must not take over a PE's signals (issue 18): loading
# libfabric runs the constructors of the libraries it links (Debian's links libinfinipath, which
# installs a backtrace handler for SIGTERM, SIGSEGV, ...) and its first fi_getinfo loads every
# provider in FI_PROVIDER_PATH and calls its fi_prov_ini, whatever FI_PROVIDER says. Here a fake
# provider there (libforeign-fi.so) installs a SIGTERM handler that exits 42 in its constructor
# and in fi_prov_ini, and writes DIR/loaded.<pid>. A PE of a job across 2 namespaced hosts
# (fabric transport) is sent SIGTERM: it must die of SIGTERM (the launcher names the signal), not
# run the foreign handler; RSHMEM_DEBUG=INFO names the library whose handler was undone.
source "$(dirname "$0")/../programs/common.sh"
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rsg 2
build hosts_check

mkdir -p "$WORK/prov"
cat >"$WORK/foreign.c" <<'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void foreign(int sig) {
    (void)sig;
    static const char msg[] = "foreign provider handler ran\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(43);
    _exit(42);
}
static void take_over(const char *when) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = foreign;
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGSEGV, &act, NULL);
    const char *dir = getenv("FOREIGN_MARK_DIR");
    if (!dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d", dir, when, (int)getpid());
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) close(fd);
}
__attribute__((constructor)) static void loaded(void) { take_over("loaded"); }
void *fi_prov_ini(void) {
    take_over("ini");
    return NULL;
}
C
gcc -shared -fPIC -Wl,-z,nodelete -o "$WORK/prov/libforeign-fi.so" "$WORK/foreign.c" || { echo "FAIL: cannot build the fake provider"; exit 1; }

dir=$WORK/term && mkdir -p "$dir"
on_host 1 timeout 90 env RSHMEM_LAUNCH_AGENT="$AGENT" RSHMEM_DEBUG=INFO FI_PROVIDER_PATH="$WORK/prov" FOREIGN_MARK_DIR="$dir" \
    "$RUN" --hosts rsg-h1:1,rsg-h2:1 "$WORK/hosts_check" hold "$dir" >"$dir/out" 2>"$dir/err" &
job=$!
wait_files "$dir/pid.*" 2 30 || fail "the PEs did not start"
pid=$(cat "$dir/pid.1" 2>/dev/null)
[ -n "$pid" ] && [ -e "$dir/ini.$pid" ] && pass "the fake provider was initialised in PE 1 (pid $pid)" \
    || fail "the fake provider was not initialised in PE 1: $(ls "$dir")"
kill -TERM "$pid"
wait $job; rc=$?
echo "--- SIGTERM to PE 1: exit $rc"; cat "$dir/err"
grep -q "PE 1 (pid $pid) on host rsg-h2 was killed by signal 15 (SIGTERM)" "$dir/err" \
    && pass "PE 1 died of SIGTERM" || fail "PE 1 did not die of SIGTERM"
grep -q "foreign provider handler ran" "$dir/err" && fail "the foreign handler ran" || pass "the foreign handler never ran"
grep -q "fabric: while .*libforeign-fi.so took over SIGSEGV, SIGTERM; the process.s own handling of them is restored" "$dir/err" \
    && pass "INFO names the library whose handlers were undone" || fail "no INFO line naming libforeign-fi.so"
[ $rc -ne 0 ] && pass "the job fails (exit $rc)" || fail "exit 0"
no_leftovers "SIGTERM to a PE"
finish
