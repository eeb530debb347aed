/* The unique-id victim of ctest/security/run.sh: N processes started by the script join one
 * job through nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID) while strangers attack its
 * rendezvous. Rank 0 makes the id and writes it to ID_FILE (mode 0600, like a password); the
 * others read it. Without a GPU the start stops at GPU selection, after the bootstrap has
 * joined every rank and exchanged the host heap's descriptors: each rank must then get
 * NVSHMEMX_ERROR_GPU_NOT_SELECTED (a stranger that broke the bootstrap gives another error).
 * Prints "victim ok rank r of n".             usage: victim_uid RANK N ID_FILE */
#include <fcntl.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int rank = atoi(argv[1]), n = atoi(argv[2]);
    const char *path = argv[3];
    nvshmemx_uniqueid_t id;
    if (rank == 0) {
        if (nvshmemx_get_uniqueid(&id) != 0) { fprintf(stderr, "victim_uid: nvshmemx_get_uniqueid failed\n"); return 1; }
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, &id, sizeof id) != (ssize_t)sizeof id || close(fd) != 0 || rename(tmp, path) != 0) {
            perror("victim_uid: writing the id");
            return 1;
        }
    } else {
        int fd = -1;
        for (int i = 0; i < 3000 && fd < 0; i++) {
            fd = open(path, O_RDONLY);
            if (fd < 0) usleep(10000);
        }
        if (fd < 0 || read(fd, &id, sizeof id) != (ssize_t)sizeof id) { perror("victim_uid: reading the id"); return 1; }
        close(fd);
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(rank, n, &id, &attr);
    int rc = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rc != NVSHMEMX_ERROR_GPU_NOT_SELECTED && rc != 0) {
        fprintf(stderr, "victim_uid: rank %d: nvshmemx_init_attr returned %d, want NVSHMEMX_ERROR_GPU_NOT_SELECTED (%d)\n", rank, rc,
                NVSHMEMX_ERROR_GPU_NOT_SELECTED);
        return 1;
    }
    if (rc == 0) nvshmem_finalize();
    printf("victim ok rank %d of %d\n", rank, n);
    return 0;
}
