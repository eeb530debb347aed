/* gpux: a stand-in for libmpi.so.40 with only what NVIDIA's perftest utils.cu calls under
 * NVSHMEMTEST_USE_UID_BOOTSTRAP=1 (rank, size, one broadcast of the unique id). Ranks come from
 * GX_RANK/GX_SIZE; a broadcast goes through a file in GX_DIR (the namespaced hosts share the
 * file system, not a network with the launcher). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char ompi_mpi_comm_world[64];
char ompi_mpi_uint8_t[64];
static int calls;

static int env_int(const char *name) {
    const char *v = getenv(name);
    if (!v) { fprintf(stderr, "fakempi: %s is not set\n", name); exit(2); }
    return atoi(v);
}
int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }
int MPI_Finalize(void) { return 0; }
int MPI_Comm_rank(void *comm, int *rank) { (void)comm; *rank = env_int("GX_RANK"); return 0; }
int MPI_Comm_size(void *comm, int *size) { (void)comm; *size = env_int("GX_SIZE"); return 0; }
int MPI_Bcast(void *buf, int count, void *type, int root, void *comm) {
    (void)type; (void)comm;
    const char *dir = getenv("GX_DIR");
    char path[512], tmp[520];
    snprintf(path, sizeof path, "%s/bcast.%d", dir ? dir : "/tmp", calls++);
    if (env_int("GX_RANK") == root) {
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(buf, 1, count, f) != (size_t)count || fclose(f)) { perror("fakempi: write"); exit(2); }
        rename(tmp, path);
        return 0;
    }
    for (int i = 0; i < 30000; i++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t n = fread(buf, 1, count, f);
            fclose(f);
            if (n == (size_t)count) return 0;
        }
        usleep(1000);
    }
    fprintf(stderr, "fakempi: no broadcast at %s after 30 s\n", path);
    exit(2);
}
