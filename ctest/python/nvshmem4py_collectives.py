"""nvshmem4py's arrays, tensors and on-stream collectives on rshmem (issue 21; run on the GPU
machine under mpirun -np N with rshmem's libnvshmem_host.so.3 in LD_PRELOAD):
    python nvshmem4py_collectives.py mpi   init from an MPI communicator
    python nvshmem4py_collectives.py uid   init from a unique id (PE 0 makes it, MPI carries it)
Allocates torch tensors (nvshmem.core.tensor) and, where CuPy is installed, CuPy arrays
(nvshmem.core.array) on the symmetric heap, runs reduce (sum, max), broadcast, fcollect and
alltoall on a CUDA stream over TEAM_WORLD, and checks every element on every PE; a peer's tensor
(get_peer_tensor) is read directly. Prints one PASS line per PE, or raises."""
import sys

import numpy as np
import torch  # first, as torch programs do (its libtorch_nvshmem.so binds NVSHMEM too)
from cuda.core import Device
from mpi4py import MPI

import nvshmem.core as nv

mode = sys.argv[1] if len(sys.argv) > 1 else "mpi"
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
dev = Device(rank % torch.cuda.device_count())
dev.set_current()
torch.cuda.set_device(dev.device_id)
stream = dev.create_stream()
if mode == "uid":
    uid = nv.get_unique_id(empty=rank != 0)
    comm.Bcast(uid._data.view(np.int8), root=0)
    nv.init(device=dev, uid=uid, rank=rank, nranks=size, initializer_method="uid")
else:
    nv.init(device=dev, mpi_comm=comm, initializer_method="mpi")
me, npes = nv.my_pe(), nv.n_pes()
assert (me, npes) == (rank, size), (me, npes, rank, size)
world = getattr(nv.Teams, "TEAM_WORLD", 0)
done = []


def settle():
    """The collectives run on `stream`; torch fills and reads on its own stream."""
    stream.sync()
    torch.cuda.synchronize()


def check(what, got, want):
    settle()
    if not torch.equal(got.cpu(), want.cpu()):
        bad = (got.cpu() != want.cpu()).nonzero()[:4].flatten().tolist()
        raise AssertionError(f"PE {me}: {what}: wrong at {bad}: got {got.cpu()[:6].tolist()}, want {want.cpu()[:6].tolist()}")
    done.append(what)


n = 4096
ramp = torch.arange(n, dtype=torch.float32, device="cuda")
src = nv.tensor((n,), dtype=torch.float32)
dst = nv.tensor((n,), dtype=torch.float32)
src.copy_(ramp * (me + 1))
dst.zero_()
settle()
nv.barrier_all(stream=stream)

nv.reduce(world, dst, src, "sum", stream=stream)
check("reduce sum (tensor)", dst, ramp * sum(range(1, npes + 1)))
nv.reduce(world, dst, src, "max", stream=stream)
check("reduce max (tensor)", dst, ramp * npes)

root = npes - 1
nv.broadcast(world, dst, src, root=root, stream=stream)
check(f"broadcast from PE {root} (tensor)", dst, ramp * (root + 1))

# fcollect: block j of gathered is PE j's src; alltoall: block j of mine goes to PE j, and
# block j of what arrives is what PE j sent me.
ints = nv.tensor((n,), dtype=torch.int64)
ints.copy_(torch.arange(n, device="cuda") + 1_000_000 * me)
gathered = nv.tensor((n * npes,), dtype=torch.int64)
settle()
nv.fcollect(world, gathered, ints, stream=stream)
want = torch.cat([torch.arange(n, device="cuda") + 1_000_000 * j for j in range(npes)])
check("fcollect (int64 tensor)", gathered, want)

outgoing = nv.tensor((n * npes,), dtype=torch.int64)
incoming = nv.tensor((n * npes,), dtype=torch.int64)
outgoing.copy_(torch.cat([torch.arange(n, device="cuda") + 1000 * (me * npes + j) for j in range(npes)]))
incoming.zero_()
settle()
nv.barrier_all(stream=stream)
nv.alltoall(world, incoming, outgoing, stream=stream)
want = torch.cat([torch.arange(n, device="cuda") + 1000 * (j * npes + me) for j in range(npes)])
check("alltoall (int64 tensor)", incoming, want)

# A peer's tensor through nvshmem_ptr (P2P): what the right neighbour holds in src.
right = (me + 1) % npes
if hasattr(nv, "get_peer_tensor"):
    peer = nv.get_peer_tensor(src, right)
    check(f"get_peer_tensor of PE {right}", peer.clone(), ramp * (right + 1))

try:
    import cupy
except ImportError:
    cupy = None
if cupy is not None:
    a_src = nv.array((n,), dtype="float32")
    a_dst = nv.array((n,), dtype="float32")
    a_src[:] = cupy.arange(n, dtype=cupy.float32) * (me + 1)
    cupy.cuda.Device().synchronize()
    nv.reduce(world, a_dst, a_src, "sum", stream=stream)
    stream.sync()
    got = torch.as_tensor(cupy.asnumpy(a_dst))
    check("reduce sum (CuPy array)", got, (ramp * sum(range(1, npes + 1))).cpu())
    nv.free_array(a_src)
    nv.free_array(a_dst)
else:
    print(f"PE {me}: nvshmem.core.array not run: CuPy is not installed here", flush=True)

nv.barrier_all(stream=stream)
settle()
for t in (src, dst, ints, gathered, outgoing, incoming):
    nv.free_tensor(t)
name = nv.get_name()
nv.finalize()
print(f"PASS nvshmem4py on rshmem ({mode} init, PE {me} of {npes}, library {name!r}): " + "; ".join(done), flush=True)
