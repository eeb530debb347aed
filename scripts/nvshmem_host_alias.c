/* libnvshmem_host.so.3: rshmem under the name of NVSHMEM's host library.
 *
 * Programs and bindings that load NVSHMEM by name (nvshmem4py: dlopen("libnvshmem_host.so.3"),
 * or cuda.pathfinder's "already loaded?" probe, which matches by soname) find this object; it
 * defines nothing and only depends on librshmem.so.0 (found beside it through $ORIGIN), so every
 * nvshmem_ symbol looked up through it is rshmem's, and a process that also links librshmem
 * directly still has one runtime. A symbolic link would not do: its soname would be
 * librshmem.so.0, which the by-name probes do not match. Built by `make`, installed in lib/. */
static const char what[] __attribute__((used)) = "rshmem: libnvshmem_host.so.3 alias of librshmem.so.0";
