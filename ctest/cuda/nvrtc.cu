/* rshmem-cuda-test: pes=2
 * Device code compiled at run time by NVRTC: a kernel source that includes <nvshmem.h> and
 * <nvshmemx.h> is compiled to a cubin for this GPU, loaded with cuModuleLoadData and given the
 * device state by nvshmemx_cumodule_init. Its block puts 256 ints to the right-hand PE with a
 * signal, every PE adds to a counter on PE 0, and each waits for its own signal; the host
 * checks what arrived.
 *   nvrtc [DIR]             the test (under rshmemrun)
 *   nvrtc --compile-only    only the NVRTC compile, for sm_90: no GPU, no nvshmem_init (CI)
 * libnvrtc is opened at run time: $RSHMEM_NVRTC, else libnvrtc.so.13 on the loader's path, else
 * $CUDA_HOME/lib64 and /usr/local/cuda/lib64. The include path handed to NVRTC: rshmem's (next
 * to the librshmem.so this program loaded, or $RSHMEM_INCLUDE) and CUDA's, with cccl (the
 * include folder beside libnvrtc, or $CUDA_HOME/include), as NVSHMEM needs too. */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>
#include <string>
#include <vector>
#include <nvrtc.h>
#include "cuda_test.h"

static const char *kernel_source = R"(
#include <nvshmem.h>
#include <nvshmemx.h>

extern "C" __global__ void rtc_kernel(int *data, long long *counter, uint64_t *sig, int *out) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n;
    if (threadIdx.x == 0) {
        out[0] = me;
        out[1] = n;
    }
    nvshmemx_int_put_signal_block(data + 256, data, 256, sig, 1, NVSHMEM_SIGNAL_ADD, right);
    if (threadIdx.x == 0) {
        nvshmem_longlong_atomic_add(counter, (long long)(me + 1), 0);
        nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, 1);
        out[2] = nvshmem_int_test(&data[256 + 255], NVSHMEM_CMP_NE, 0);
    }
}
)";

/* ---- libnvrtc, opened at run time --------------------------------------------------------- */
struct Nvrtc {
    decltype(&nvrtcCreateProgram) create;
    decltype(&nvrtcCompileProgram) compile;
    decltype(&nvrtcGetProgramLogSize) log_size;
    decltype(&nvrtcGetProgramLog) log;
    decltype(&nvrtcGetCUBINSize) cubin_size;
    decltype(&nvrtcGetCUBIN) cubin;
    decltype(&nvrtcDestroyProgram) destroy;
    std::string dir; /* the folder libnvrtc was loaded from */
};

static void *open_in(const std::string &dir) {
    /* libnvrtc loads its builtins by name: loaded first, from the same folder, they are found. */
    dlopen((dir + "/libnvrtc-builtins.so.13.0").c_str(), RTLD_NOW | RTLD_GLOBAL);
    return dlopen((dir + "/libnvrtc.so.13").c_str(), RTLD_NOW | RTLD_GLOBAL);
}

static Nvrtc load_nvrtc() {
    void *h = NULL;
    const char *env = getenv("RSHMEM_NVRTC"), *home = getenv("CUDA_HOME");
    if (env) h = dlopen(env, RTLD_NOW | RTLD_GLOBAL);
    if (!h) h = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!h && home) h = open_in(std::string(home) + "/lib64");
    if (!h) h = open_in("/usr/local/cuda/lib64");
    CHECK(h != NULL, "cannot open libnvrtc.so.13 (set RSHMEM_NVRTC or CUDA_HOME): %s", dlerror());
    Nvrtc r;
#define SYM(field, name) CHECK((*(void **)&r.field = dlsym(h, name)) != NULL, "libnvrtc has no %s", name)
    SYM(create, "nvrtcCreateProgram");
    SYM(compile, "nvrtcCompileProgram");
    SYM(log_size, "nvrtcGetProgramLogSize");
    SYM(log, "nvrtcGetProgramLog");
    SYM(cubin_size, "nvrtcGetCUBINSize");
    SYM(cubin, "nvrtcGetCUBIN");
    SYM(destroy, "nvrtcDestroyProgram");
#undef SYM
    Dl_info info;
    CHECK(dladdr((void *)r.compile, &info) && info.dli_fname, "dladdr(libnvrtc)");
    r.dir = info.dli_fname;
    r.dir = r.dir.substr(0, r.dir.rfind('/'));
    return r;
}

static bool exists(const std::string &p) { return access(p.c_str(), F_OK) == 0; }

/* rshmem's include folder: beside the lib folder of the librshmem.so in use. */
static std::string rshmem_include() {
    if (const char *env = getenv("RSHMEM_INCLUDE")) return env;
    Dl_info info;
    CHECK(dladdr((void *)&nvshmem_init, &info) && info.dli_fname, "dladdr(librshmem)");
    std::string lib = info.dli_fname;
    std::string inc = lib.substr(0, lib.rfind('/')) + "/../include";
    CHECK(exists(inc + "/nvshmem.h"), "no nvshmem.h in %s (set RSHMEM_INCLUDE)", inc.c_str());
    return inc;
}

/* The kernel as a cubin for `arch` (sm_XY). */
static std::vector<char> compile(const Nvrtc &rtc, const std::string &arch) {
    const char *home = getenv("CUDA_HOME");
    std::string cuda_inc = home ? std::string(home) + "/include" : rtc.dir + "/../include";
    std::vector<std::string> opts = {"--gpu-architecture=" + arch, "-std=c++17", "-I" + rshmem_include(), "-I" + cuda_inc};
    if (exists(cuda_inc + "/cccl")) opts.push_back("-I" + cuda_inc + "/cccl");
#ifdef RSHMEM_PROXY_ROUTE
    opts.push_back("-DRSHMEM_PROXY_ROUTE"); /* the suite built for PEs on other hosts: the run-time kernel too */
#endif
    std::vector<const char *> argv;
    for (const std::string &o : opts) argv.push_back(o.c_str());

    nvrtcProgram prog;
    CHECK(rtc.create(&prog, kernel_source, "rtc_kernel.cu", 0, NULL, NULL) == NVRTC_SUCCESS, "nvrtcCreateProgram");
    nvrtcResult rc = rtc.compile(prog, (int)argv.size(), argv.data());
    size_t n = 0;
    rtc.log_size(prog, &n);
    std::string log(n, '\0');
    if (n) rtc.log(prog, &log[0]);
    if (rc != NVRTC_SUCCESS) {
        std::string all;
        for (const std::string &o : opts) all += " " + o;
        FAIL("NVRTC compile failed (%d), options:%s\n%s", (int)rc, all.c_str(), log.c_str());
    }
    CHECK(rtc.cubin_size(prog, &n) == NVRTC_SUCCESS && n > 0, "nvrtcGetCUBINSize");
    std::vector<char> cubin(n);
    CHECK(rtc.cubin(prog, cubin.data()) == NVRTC_SUCCESS, "nvrtcGetCUBIN");
    rtc.destroy(&prog);
    return cubin;
}

/* ---- the driver API through the runtime (no libcuda at link time) --------------------------- */
typedef CUresult (*ModuleLoadData)(CUmodule *, const void *);
typedef CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
typedef CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                                 void **, void **);

int main(int argc, char **argv) {
    Nvrtc rtc = load_nvrtc();
    if (argc > 1 && strcmp(argv[1], "--compile-only") == 0) {
        std::vector<char> cubin = compile(rtc, "sm_90");
        printf("nvrtc: kernel including nvshmem.h compiled by NVRTC for sm_90 (%zu-byte cubin; libnvrtc in %s)\n",
               cubin.size(), rtc.dir.c_str());
        return 0;
    }

    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), left = (me + n - 1) % n;
    int dev = 0, major = 0, minor = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    std::vector<char> cubin = compile(rtc, "sm_" + std::to_string(major * 10 + minor));

    CUDA_CHECK(cudaFree(0)); /* the runtime's context is current: the driver calls use it */
    CUmodule mod;
    CHECK(driver_entry<ModuleLoadData>("cuModuleLoadData")(&mod, cubin.data()) == CUDA_SUCCESS, "cuModuleLoadData");
    CHECK_EQ(nvshmemx_cumodule_init(mod), 0);
    CUfunction fn;
    CHECK(driver_entry<ModuleGetFunction>("cuModuleGetFunction")(&fn, mod, "rtc_kernel") == CUDA_SUCCESS, "cuModuleGetFunction");

    int *data = (int *)nvshmem_calloc(512, sizeof(int));
    long long *counter = (long long *)nvshmem_calloc(1, sizeof(long long));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    int *out;
    CUDA_CHECK(cudaMalloc(&out, 3 * sizeof(int)));
    std::vector<int> h(512, 0);
    for (int i = 0; i < 256; i++) h[i] = me * 1000 + i + 1;
    CUDA_CHECK(cudaMemcpy(data, h.data(), 512 * sizeof(int), cudaMemcpyHostToDevice));
    ready();
    void *args[] = {&data, &counter, &sig, &out};
    CHECK(driver_entry<LaunchKernel>("cuLaunchKernel")(fn, 1, 1, 1, 128, 1, 1, 0, 0, args, NULL) == CUDA_SUCCESS, "cuLaunchKernel");
    step_done();

    int o[3];
    long long c = 0;
    uint64_t s = 0;
    CUDA_CHECK(cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h.data(), data, 512 * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&c, counter, sizeof c, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&s, sig, sizeof s, cudaMemcpyDeviceToHost));
    CHECK(o[0] == me && o[1] == n, "the module sees PE %d of %d", o[0], o[1]);
    CHECK_EQ(o[2], 1);
    CHECK_EQ(s, 1);
    for (int i = 0; i < 256; i++) CHECK_EQ(h[256 + i], left * 1000 + i + 1);
    if (me == 0) CHECK_EQ(c, (long long)n * (n + 1) / 2);
    nvshmem_barrier_all();
    CHECK_EQ(nvshmemx_cumodule_finalize(mod), 0);
    CUDA_CHECK(cudaFree(out));
    return test_pass("nvrtc");
}
