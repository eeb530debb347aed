/* Capturing stderr in the C tests, to check what a routine said. Define _GNU_SOURCE before any
 * include (memfd_create). */
#ifndef RSHMEM_CTEST_CAPTURE_H
#define RSHMEM_CTEST_CAPTURE_H
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

static int capture_fd = -1, capture_saved = -1;

/* stderr goes to an anonymous memory file until stderr_end(), which restores it, echoes the
 * text and returns it (malloc'd, NUL-terminated). */
static void stderr_begin(void) {
    fflush(stderr);
    capture_fd = memfd_create("rshmem-test-stderr", 0);
    capture_saved = dup(2);
    CHECK(capture_fd >= 0 && capture_saved >= 0 && dup2(capture_fd, 2) == 2, "cannot redirect stderr");
}

static char *stderr_end(void) {
    fflush(stderr);
    dup2(capture_saved, 2);
    close(capture_saved);
    off_t n = lseek(capture_fd, 0, SEEK_END);
    char *text = calloc((size_t)n + 1, 1);
    CHECK(text && pread(capture_fd, text, (size_t)n, 0) == n, "cannot read the captured stderr");
    close(capture_fd);
    fputs(text, stderr);
    return text;
}

#endif
