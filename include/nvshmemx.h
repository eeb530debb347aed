/* rshmem: NVSHMEM's extension header. Everything nvshmemx_* is declared by nvshmem.h already
 * (as in NVSHMEM, where either header gives the whole API). Beside it: the error-report macros
 * that NVSHMEM's public headers also give user code (its examples and perftest helpers print
 * with NVSHMEMI_ERROR_PRINT), with NVSHMEM's names and meaning. For host code (NVRTC, device code only, has none of them). */
#ifndef RSHMEM_NVSHMEMX_H
#define RSHMEM_NVSHMEMX_H
#include "nvshmem.h"

#if !defined(__CUDACC_RTC__)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "file:line: " + what the caller adds (printf arguments), a newline at the end. */
#define RSHMEMI_REPORT(STREAM, ...)                   \
    do {                                              \
        fprintf(STREAM, "%s:%d: ", __FILE__, __LINE__); \
        fprintf(STREAM, __VA_ARGS__);                 \
        fputc('\n', STREAM);                          \
    } while (0)

/* Prints an error (stderr). */
#define NVSHMEMI_ERROR_PRINT(...) RSHMEMI_REPORT(stderr, __VA_ARGS__)
/* Prints a warning (stdout, "WARN: " first, as NVSHMEM does). */
#define NVSHMEMI_WARN_PRINT(...)      \
    do {                              \
        fputs("WARN: ", stdout);      \
        fprintf(stdout, __VA_ARGS__); \
        fputc('\n', stdout);          \
    } while (0)
/* Prints an error and exits the process with status -1. */
#define NVSHMEMI_ERROR_EXIT(...)                 \
    do {                                         \
        RSHMEMI_REPORT(stderr, __VA_ARGS__);     \
        exit(-1);                                \
    } while (0)

/* When COND holds: prints, sets `status` to `err`, jumps to `label`. */
#define RSHMEMI_ERROR_JMP_IF(COND, status, err, label, ...) \
    do {                                                    \
        if (__builtin_expect(!!(COND), 0)) {                \
            RSHMEMI_REPORT(stderr, __VA_ARGS__);            \
            (status) = (err);                               \
            goto label;                                     \
        }                                                   \
    } while (0)
#define NVSHMEMI_ERROR_JMP(status, err, label, ...) RSHMEMI_ERROR_JMP_IF(1, status, err, label, __VA_ARGS__)
#define NVSHMEMI_NULL_ERROR_JMP(var, status, err, label, ...) \
    RSHMEMI_ERROR_JMP_IF((var) == NULL, status, err, label, __VA_ARGS__)
#define NVSHMEMI_NZ_ERROR_JMP(status, err, label, ...) RSHMEMI_ERROR_JMP_IF((status) != 0, status, err, label, __VA_ARGS__)
#define NVSHMEMI_EQ_ERROR_JMP(status, expected, err, label, ...) \
    RSHMEMI_ERROR_JMP_IF((status) == (expected), status, err, label, __VA_ARGS__)
#define NVSHMEMI_NE_ERROR_JMP(status, expected, err, label, ...) \
    RSHMEMI_ERROR_JMP_IF((status) != (expected), status, err, label, __VA_ARGS__)
#define NVSHMEMI_CHECK_ERROR_JMP(statement, status, err, label, ...) \
    RSHMEMI_ERROR_JMP_IF(statement, status, err, label, __VA_ARGS__)
/* When `status` is non-zero: prints it with errno's text, exits with -1. */
#define NVSHMEMI_NZ_EXIT(status, ...)                                                   \
    do {                                                                                \
        if (__builtin_expect((status) != 0, 0)) {                                       \
            fprintf(stderr, "status %d (%s): ", (int)(status), strerror(errno));        \
            NVSHMEMI_ERROR_EXIT(__VA_ARGS__);                                           \
        }                                                                               \
    } while (0)
#endif

#endif
