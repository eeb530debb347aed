// Times the CUDA start-up steps of one process (nvbench session 25 diagnosis of init/ctx).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main() {
    const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "RSHMEM_RANK", "PMI_RANK"};
    int lr = 0;
    for (const char *n : names) if (getenv(n) && *getenv(n)) { lr = atoi(getenv(n)); break; }
    double a = now(); int nd = 0; cudaGetDeviceCount(&nd);
    double b = now(); cudaSetDevice(lr % nd);
    double c = now(); cudaFree(0);
    double d = now();
    printf("ctx,rank%d,getcount,%.1f,setdev,%.1f,free0,%.1f,total,%.1f\n", lr, b - a, c - b, d - c, d - a);
    return 0;
}
