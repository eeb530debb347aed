// Host side of an NVSHMEM project built through find_package(NVSHMEM): the version and name
// queries need no GPU, so this runs in CI.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cstdio>
#include <cstring>

int main() {
    int major = 0, minor = 0;
    char name[NVSHMEM_MAX_NAME_LEN];
    nvshmem_info_get_version(&major, &minor);
    nvshmem_info_get_name(name);
    std::printf("NVSHMEM API %d.%d from \"%s\"\n", major, minor, name);
    // The name is NVSHMEM_VENDOR_STRING, as in NVSHMEM.
    return major == NVSHMEM_MAJOR_VERSION && minor == NVSHMEM_MINOR_VERSION && std::strcmp(name, NVSHMEM_VENDOR_STRING) == 0 ? 0 : 1;
}
