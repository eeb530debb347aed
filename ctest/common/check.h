/* Assertions for the C tests: on failure, name the PE, file, line and values, then fail the job. */
#ifndef RSHMEM_CTEST_CHECK_H
#define RSHMEM_CTEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <shmem.h>

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "FAIL PE %d %s:%d: %s: ", shmem_my_pe(), __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
            shmem_global_exit(1);                                                         \
        }                                                                                 \
    } while (0)

#define CHECK_EQ_LONG(got, want) \
    CHECK((long long)(got) == (long long)(want), "got %lld, want %lld", (long long)(got), (long long)(want))

#endif
