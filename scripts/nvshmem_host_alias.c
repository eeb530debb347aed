/* libnvshmem_host.so.3: rshmem under the name of NVSHMEM's host library.
 *
 * Programs and bindings that load NVSHMEM by name (nvshmem4py: dlopen("libnvshmem_host.so.3"),
 * or cuda.pathfinder's "already loaded?" probe, which matches by soname) find this object; it
 * defines no routine and only depends on librshmem.so.0 (found beside it through $ORIGIN), so every
 * nvshmem_ symbol looked up through it is rshmem's, and a process that also links librshmem
 * directly still has one runtime. A symbolic link would not do: its soname would be
 * librshmem.so.0, which the by-name probes do not match.
 *
 * It does define NVSHMEM's version node (scripts/nvshmem_host_alias.map): programs and libraries
 * linked against NVIDIA's library (torch's libtorch_nvshmem.so) require that node of the object
 * named libnvshmem_host.so.3 and reference nvshmem_malloc@NVSHMEM etc., which librshmem.so.0
 * defines at the same node (src/capi/librshmem.map). Built by `make`, installed in lib/. */
static const char what[] __attribute__((used)) = "rshmem: libnvshmem_host.so.3 alias of librshmem.so.0";
