/* rshmem-test: pes=1,2,4
 * shmem_team_ptr (OpenSHMEM 1.6, in SOS since 1.5.2; SOS's test suite calls it): shmem_ptr with
 * a team-relative PE. Over the team of even world PEs, team member i gives what shmem_ptr gives
 * for world PE 2i (NULL for a PE on another host, as under ctest/multihost), and where that is
 * an address, it holds what PE 2i stored there, for a static and for heap memory; this PE's own
 * entry is always its own address. A PE number outside the team and SHMEM_TEAM_INVALID give
 * NULL. */
#include <shmem.h>
#include <stdio.h>

static int data;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "FAIL PE %d line %d: %s\n", shmem_my_pe(), __LINE__, #cond); \
            bad = 1;                                                                    \
        }                                                                               \
    } while (0)

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), bad = 0;
    int *heap = shmem_malloc(sizeof(int));
    data = 100 + me;
    *heap = 200 + me;
    shmem_team_t evens;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens);
    shmem_barrier_all();

    if (me % 2 == 0) {
        int size = shmem_team_n_pes(evens);
        for (int i = 0; i < size; i++) {
            int *d = shmem_team_ptr(evens, &data, i), *h = shmem_team_ptr(evens, heap, i);
            CHECK(d == shmem_ptr(&data, 2 * i) && h == shmem_ptr(heap, 2 * i));
            CHECK(d == NULL || *d == 100 + 2 * i);
            CHECK(h == NULL || *h == 200 + 2 * i);
        }
        CHECK(shmem_team_ptr(evens, &data, me / 2) == &data);
        CHECK(shmem_team_ptr(evens, heap, me / 2) == heap);
        CHECK(shmem_team_ptr(evens, &data, size) == NULL);
        CHECK(shmem_team_ptr(evens, &data, -1) == NULL);
    } else {
        CHECK(evens == SHMEM_TEAM_INVALID);
    }
    CHECK(shmem_team_ptr(SHMEM_TEAM_INVALID, &data, 0) == NULL);
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, heap, n - 1) == shmem_ptr(heap, n - 1));
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, heap, me) == heap);

    shmem_barrier_all();
    if (evens != SHMEM_TEAM_INVALID) shmem_team_destroy(evens);
    shmem_free(heap);
    shmem_finalize();
    return bad;
}
