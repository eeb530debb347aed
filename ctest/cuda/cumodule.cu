/* rshmem-cuda-test: pes=2 args=cumodule.kernel.cubin,cumodule.kernel.ptx
 * Modules loaded at run time: a cubin and PTX (the driver compiles it, as for NVRTC output)
 * through cuModuleLoadData + nvshmemx_cumodule_init, and the cubin again through
 * cuLibraryLoadData + nvshmemx_culibrary_init. The driver API is reached with
 * cudaGetDriverEntryPointByVersion, so the test needs no libcuda at link time. */
#include <string.h>
#include <vector>
#include "cuda_test.h"

typedef CUresult (*ModuleLoadData)(CUmodule *, const void *);
typedef CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
typedef CUresult (*LibraryLoadData)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *, void **,
                                    unsigned);
typedef CUresult (*LibraryGetKernel)(CUkernel *, CUlibrary, const char *);
typedef CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                                 void **, void **);


static std::vector<char> slurp(const char *dir, const char *file) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "cannot open %s", path);
    std::vector<char> data;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + got);
    fclose(f);
    data.push_back(0); /* PTX must be NUL-terminated */
    return data;
}

/* Launches the module's kernel; returns the number of failed checks (reported, not fatal, so
 * that every variant is tried). */
static int run(CUfunction fn, LaunchKernel launch, int *box, int *out, const char *what) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), left = (me + n - 1) % n, bad = 0;
    CUDA_CHECK(cudaMemset(box, 0, 2 * sizeof(int)));
    CUDA_CHECK(cudaMemset(out, 0xff, 2 * sizeof(int)));
    nvshmem_barrier_all();
    void *args[] = {&box, &out};
    CHECK(launch(fn, 1, 1, 1, 1, 1, 1, 0, 0, args, NULL) == CUDA_SUCCESS, "%s: launch", what);
    step_done();
    int h[2], b[2];
    CUDA_CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(b, box, sizeof b, cudaMemcpyDeviceToHost));
    if (h[0] != me || h[1] != n) bad++, fprintf(stderr, "PE %d %s: module sees PE %d of %d\n", me, what, h[0], h[1]);
    if (b[0] != 300 + left) bad++, fprintf(stderr, "PE %d %s: p from the module: %d\n", me, what, b[0]);
    if (me == 0 && b[1] != n) bad++, fprintf(stderr, "PE %d %s: atomic adds from the modules: %d\n", me, what, b[1]);
    if (me == 0) printf("cumodule: %s: %s\n", what, bad ? "FAILED" : "ok");
    return bad;
}

int main(int argc, char **argv) {
    test_init();
    const char *dir = argc > 1 ? argv[1] : ".";
    int *box = (int *)nvshmem_calloc(2, sizeof(int));
    int *out;
    CUDA_CHECK(cudaMalloc(&out, 2 * sizeof(int)));
    CUDA_CHECK(cudaFree(0)); /* the runtime's context is current: the driver calls use it */
    ModuleLoadData load = driver_entry<ModuleLoadData>("cuModuleLoadData");
    ModuleGetFunction getfn = driver_entry<ModuleGetFunction>("cuModuleGetFunction");
    LibraryLoadData libload = driver_entry<LibraryLoadData>("cuLibraryLoadData");
    LibraryGetKernel libkernel = driver_entry<LibraryGetKernel>("cuLibraryGetKernel");
    LaunchKernel launch = driver_entry<LaunchKernel>("cuLaunchKernel");

    const char *images[] = {"cumodule.kernel.cubin", "cumodule.kernel.ptx"};
    int bad = 0;
    for (int i = 0; i < 2; i++) {
        std::vector<char> image = slurp(dir, images[i]);
        CUmodule mod;
        CHECK(load(&mod, image.data()) == CUDA_SUCCESS, "cuModuleLoadData(%s)", images[i]);
        int rc = nvshmemx_cumodule_init(mod);
        if (rc != 0) {
            fprintf(stderr, "PE %d: nvshmemx_cumodule_init(%s) returned %d\n", nvshmem_my_pe(), images[i], rc);
            bad++;
        }
        CUfunction fn;
        CHECK(getfn(&fn, mod, "module_kernel") == CUDA_SUCCESS, "cuModuleGetFunction");
        if (rc == 0) bad += run(fn, launch, box, out, images[i]);
        nvshmem_barrier_all();
        CHECK_EQ(nvshmemx_cumodule_finalize(mod), 0);
    }
    std::vector<char> cubin = slurp(dir, images[0]);
    CUlibrary lib;
    CHECK(libload(&lib, cubin.data(), NULL, NULL, 0, NULL, NULL, 0) == CUDA_SUCCESS, "cuLibraryLoadData");
    int rc = nvshmemx_culibrary_init(lib);
    if (rc != 0) {
        fprintf(stderr, "PE %d: nvshmemx_culibrary_init returned %d\n", nvshmem_my_pe(), rc);
        bad++;
    }
    CUkernel k;
    CHECK(libkernel(&k, lib, "module_kernel") == CUDA_SUCCESS, "cuLibraryGetKernel");
    if (rc == 0) bad += run((CUfunction)k, launch, box, out, "cuLibrary");
    nvshmem_barrier_all();
    CHECK_EQ(nvshmemx_culibrary_finalize(lib), 0);
    CHECK(bad == 0, "%d module checks failed", bad);
    return test_pass("cumodule");
}
