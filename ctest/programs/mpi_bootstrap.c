/* NVSHMEM_BOOTSTRAP=MPI (what NVSHMEM job scripts set) for a CPU job: the program initialises
 * MPI, then shmem_init finds its peers over MPI_COMM_WORLD (libmpi found at run time). Every PE
 * must be the PE its MPI rank says, and a put ring plus a reduction must give the right values.
 * Rank 0 prints "PASS mpi_bootstrap (N PEs)". */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>

static long ring, src, dst;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int ok = me == rank && n == size;
    shmem_long_p(&ring, me, (me + 1) % n);
    shmem_barrier_all();
    ok = ok && ring == (me + n - 1) % n;
    src = me + 1;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &dst, &src, 1);
    ok = ok && dst == (long)n * (n + 1) / 2;
    if (!ok) fprintf(stderr, "mpi_bootstrap: MPI rank %d of %d is PE %d of %d, ring %ld, sum %ld\n", rank, size, me, n, ring, dst);
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    shmem_finalize();
    if (rank == 0 && all_ok) printf("PASS mpi_bootstrap (%d PEs)\n", n);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
