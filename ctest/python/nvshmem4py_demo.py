"""nvshmem4py's host-side API on rshmem (issue 21; run on the GPU machine), without torch (torch's own libtorch_nvshmem.so binds
NVSHMEM's versioned internal symbols; see the note). Run: mpirun -np 2 with rshmem's
libnvshmem_host.so.3 in LD_PRELOAD. Checks data with cudaMemcpy to numpy; prints PASS or raises."""
import sys

import numpy as np
from cuda.bindings import runtime as cudart
from cuda.core import Device
from mpi4py import MPI

import nvshmem.core as nv

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
dev = Device(rank % 2)
dev.set_current()
stream = dev.create_stream()
nv.init(device=dev, mpi_comm=comm, initializer_method="mpi")
me, npes = nv.my_pe(), nv.n_pes()
assert (me, npes) == (rank, comm.Get_size()), (me, npes)
print(f"PE {me}/{npes}: library {nv.get_name()!r}; {str(nv.get_version())!r}".replace("\\n", " "), flush=True)

n = 1 << 16
nbytes = n * 4
src, dst = nv.buffer(nbytes), nv.buffer(nbytes)


def upload(buf, arr):
    err, = cudart.cudaMemcpy(int(buf.handle), arr.ctypes.data, arr.nbytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)
    assert err == cudart.cudaError_t.cudaSuccess, err


def download(buf):
    out = np.empty(n, dtype=np.int32)
    err, = cudart.cudaMemcpy(out.ctypes.data, int(buf.handle), out.nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost)
    assert err == cudart.cudaError_t.cudaSuccess, err
    return out


upload(src, np.arange(n, dtype=np.int32) + 1000 * me)
upload(dst, np.zeros(n, dtype=np.int32))
nv.barrier_all(stream=stream)
stream.sync()
right, left = (me + 1) % npes, (me - 1) % npes
nv.put(dst, src, remote_pe=right, stream=stream)
nv.quiet(stream=stream)
nv.barrier_all(stream=stream)
stream.sync()
got = download(dst)
assert np.array_equal(got, np.arange(n, dtype=np.int32) + 1000 * left), got[:4]
# get from the left neighbour back into dst
upload(dst, np.zeros(n, dtype=np.int32))
nv.get(dst, src, remote_pe=left, stream=stream)
stream.sync()
assert np.array_equal(download(dst), np.arange(n, dtype=np.int32) + 1000 * left), "get"
peer = nv.get_peer_buffer(src, right)
assert peer is not None and int(peer.handle) != 0, "get_peer_buffer (nvshmem_ptr) over NVLink"
nv.sync_all(stream=stream)
stream.sync()
nv.free(dst)
nv.free(src)
nv.finalize()
print(f"PASS nvshmem4py host API on rshmem: init, buffer, put, get, quiet, barrier_all, sync_all, get_peer_buffer, finalize (PE {me} of {npes})", flush=True)
sys.exit(0)
